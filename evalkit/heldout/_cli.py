"""``evalkit heldout template|label-page|seal|verify``: the sealed held-out protocol (ADR-0008,
0015)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalkit.errors import CatalogueError, LedgerError, Problem

if TYPE_CHECKING:
    import pandas as pd

# The commands' modules are imported in their ``run_*``, so ``--help`` starts fast.


def register(subparsers: Any) -> None:
    heldout = subparsers.add_parser("heldout", help="blind template, seal and verify labels")
    heldout.add_argument("--catalogue", default="catalogues", help="catalogue folder")
    sub = heldout.add_subparsers(dest="heldout_command", metavar="ACTION", required=True)
    tpl = sub.add_parser("template", help="write the blind labeling template (CSV)")
    tpl.add_argument("--out", help="output path (default: <catalogue>/heldout/template.csv)")
    tpl.set_defaults(func=run_template)
    page = sub.add_parser("label-page", help="write the blind template as an offline HTML page")
    page.add_argument("--out", required=True, metavar="FILE.html", help="the page to write")
    page.add_argument(
        "--template",
        metavar="BLIND.csv",
        help="the blind template (default: <catalogue>/heldout/template.csv)",
    )
    page.add_argument(
        "--guide",
        metavar="GUIDE.md",
        help="the labeling guide shown beside each case (default: the catalogue's own "
        "guide.md)",  # _label_page.DEFAULT_GUIDE, not imported: it pulls in pandas
    )
    page.set_defaults(func=run_label_page)
    seal = sub.add_parser("seal", help="seal a filled label sheet before any judge run")
    seal.add_argument("labels", help="the filled template (inside the catalogue folder)")
    seal.add_argument(
        "--ledger",
        action="append",
        default=[],
        metavar="PATH",
        help="a judge ledger that must hold no answer on the held-out set (repeatable)",
    )
    seal.add_argument(
        "--ledger-dir",
        default="ledgers",
        metavar="DIR",
        help="every judge ledger in this folder is checked too (default: ledgers)",
    )
    seal.set_defaults(func=run_seal)
    verify = sub.add_parser("verify", help="check the chain of seals, their files and commits")
    verify.set_defaults(func=run_verify)


def run_template(args: argparse.Namespace) -> int:
    from evalkit.catalogue import load
    from evalkit.heldout._template import write_template

    catalogue = load(args.catalogue)
    if not catalogue.split("heldout"):  # an empty sheet to seal would be a trap
        raise CatalogueError(
            [Problem(str(catalogue.root), None, "split", "no held-out case: nothing to label")]
        )
    out = args.out or catalogue.root / "heldout" / "template.csv"
    path = write_template(catalogue, out)
    print(f"wrote {path}: {len(catalogue.split('heldout'))} held-out cases, slots blank")
    return 0


def run_label_page(args: argparse.Namespace) -> int:
    from evalkit.catalogue import load
    from evalkit.heldout._label_page import DEFAULT_GUIDE, write_label_page

    catalogue = load(args.catalogue)
    guide = args.guide if args.guide is not None else catalogue.root / DEFAULT_GUIDE
    path = write_label_page(catalogue, args.out, template=args.template, guide=guide)
    print(
        f"wrote {path}: {len(catalogue.split('heldout'))} held-out cases, guide {guide}; "
        "open it in a browser (offline), label, export labels.csv into "
        f"{catalogue.root / 'heldout'}, commit it, then `evalkit heldout seal` it"
    )
    return 0


def _ledgers(paths: list[str], folder: str) -> dict[str, pd.DataFrame]:
    """The named ledgers (each must be readable) and every judge ledger in ``folder``
    (files that are not judge ledgers are skipped with a note)."""
    from evalkit.judge import load_ledger

    out = {str(Path(p)): load_ledger(p) for p in paths}
    root = Path(folder)
    if root.exists() and not root.is_dir():  # else the seal would check no ledger, silently
        raise LedgerError(f"--ledger-dir {folder}: is a file; name the folder of ledgers")
    found = sorted([*root.glob("*.sqlite"), *root.glob("*.jsonl")]) if root.is_dir() else []
    for path in found:
        if str(path) in out:
            continue
        try:
            out[str(path)] = load_ledger(path)
        except (LedgerError, ValueError) as exc:
            print(f"note: {path} not checked: not a judge ledger ({exc})", file=sys.stderr)
    return out


def run_seal(args: argparse.Namespace) -> int:
    from evalkit.catalogue import load
    from evalkit.heldout._seal import seal_labels

    catalogue = load(args.catalogue)
    ledgers = _ledgers(args.ledger, args.ledger_dir)
    seal = seal_labels(catalogue, args.labels, ledgers=ledgers)
    print(
        f"sealed {seal.file} as seal {seal.name}: {seal.n_labels} labels on {seal.n_cases} "
        f"cases, {len(seal.files)} file(s) covered, at {seal.sealed_at}, commit "
        f"{seal.git_commit}; {len(ledgers)} ledger(s) checked"
    )
    return 0


def run_verify(args: argparse.Namespace) -> int:
    from evalkit.catalogue import load
    from evalkit.heldout._verify import anchor_note, reseal_notes, verify_seals

    catalogue = load(args.catalogue)
    statuses = verify_seals(catalogue)
    if not statuses:
        print("no seals recorded")
        return 0
    for st in statuses:
        print(
            f"{st.status:<11}#{st.seal.index} {st.seal.id[:12]}  {st.seal.file}  "
            f"sealed {st.seal.sealed_at}  commit {st.seal.git_commit[:12]}"
        )
        for problem in st.problems:
            print(f"           - {problem}")
    for note in reseal_notes(statuses):
        print(note)
    print(anchor_note(catalogue))
    bad = [st for st in statuses if not st.ok]
    if bad:
        names = ", ".join(f"{st.seal.name} {st.status}" for st in bad)
        print(
            f"evalkit heldout verify: {len(bad)} of {len(statuses)} seal(s) broken ({names}); "
            "held-out judging and agreement are refused (ADR-0015)",
            file=sys.stderr,
        )
        return 2
    return 0
