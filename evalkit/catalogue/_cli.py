"""``evalkit catalogue check|audit|init``: validate a catalogue, audit it, or start one."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalkit.errors import CatalogueError

if TYPE_CHECKING:
    import pandas as pd


def register(subparsers: Any) -> None:
    cat = subparsers.add_parser("catalogue", help="inspect and validate a catalogue")
    sub = cat.add_subparsers(dest="catalogue_command", metavar="ACTION", required=True)
    check = sub.add_parser("check", help="validate a catalogue and print its balance tables")
    check.add_argument("path", nargs="?", default="catalogues", help="catalogue folder")
    check.set_defaults(func=run_check)
    aud = sub.add_parser(
        "audit",
        help="can this catalogue be passed without reading the turn? (shortcut baselines)",
    )
    aud.add_argument("path", nargs="?", default="catalogues", help="catalogue folder")
    aud.add_argument("--json", action="store_true", help="print the table as JSON")
    aud.add_argument(
        "--no-baseline", action="store_true", help="leave out the baseline judge reference row"
    )
    aud.set_defaults(func=run_audit)
    init = sub.add_parser(
        "init", help="write a minimal valid catalogue (2 example cases) into a new folder"
    )
    init.add_argument("path", help="the folder to create (must not exist, or be empty)")
    init.set_defaults(func=run_init)


def run_init(args: argparse.Namespace) -> int:
    """Write the scaffold and print what to run next; a non-empty folder is exit 2."""
    from evalkit.catalogue._scaffold import init_catalogue

    written = init_catalogue(args.path)
    root = Path(args.path)
    ledger = root.parent / f"{root.name}-baseline.sqlite"
    reports = root.parent / f"{root.name}-reports"
    print(f"wrote a minimal catalogue to {root} ({len(written)} files: constants, framing,")
    print("resources, one rubric per gated dimension, 2 example cases and their labels).")
    print("Its constants are not ratified: the gate fails every dimension and the studies")
    print("are exploratory until a decision record ratifies them (ADR-0013, ADR-0017).")
    print("\nnext:")
    print(f"  evalkit catalogue check {root}")
    print(f"  evalkit judge --catalogue {root} --judge baseline --ledger {ledger}")
    print(f"  evalkit gate --catalogue {root} --ledger {ledger}")
    print(f"  evalkit study --catalogue {root} --ledger {ledger} --out {reports}")
    print("then replace the example cases and labels with yours (docs/catalogue-format.md),")
    print("decide the constants, and run `evalkit constants ratify --catalogue")
    print(f"{root} --adr <decision record>`. Keep ledgers outside the catalogue folder.")
    return 0


def run_check(args: argparse.Namespace) -> int:
    """Print every problem and exit 1, or print the balance tables and exit 0; no catalogue
    folder at all is unusable input (exit 2), not a catalogue with problems."""
    # Imported here, not at the top, so that ``evalkit catalogue --help`` starts fast.
    import pandas as pd

    from evalkit.catalogue._check import near_duplicates, summarize
    from evalkit.catalogue._io import load
    from evalkit.catalogue._parity import rule_parity

    try:
        catalogue = load(args.path)
    except CatalogueError as exc:
        print(str(exc), file=sys.stderr)
        return 1 if Path(args.path).is_dir() else 2
    tables = summarize(catalogue)
    with pd.option_context("display.max_rows", 200, "display.width", 120):
        print(
            f"catalogue {args.path}: {len(catalogue.cases)} cases, "
            f"{len(catalogue.labels)} labels, {len(catalogue.rubrics)} rubrics"
        )
        print(f"constants sha256 {catalogue.constants_hash}")
        print(f"framing   sha256 {catalogue.framing_hash}")
        print("\ncases per locale x stratum x split")
        print(_table(tables["cases"], "no cases"))
        print(f"\nconsensus rule: {catalogue.consensus_rule.describe()}")
        print("\ncalibration labels (consensus) per dimension x locale x bin")
        print(_table(tables["labels"], "no calibration labels"))
        if len(catalogue.label_sets) > 1:
            print("\nlabeler x dimension coverage (labels given)")
            print(_table(tables["coverage"], "no labels given"))
            print("\nlabeler-labeler agreement (Cohen's kappa on the cases both labelled)")
            print(
                _table(
                    tables["labeler_agreement"],
                    "none: no two label sets label the same case on any dimension",
                    index=False,
                )
            )
    parity = rule_parity(catalogue)
    print("\nrules (guide and rubric in force; docs/adr/0024)")
    for note in parity.notes:
        print(f"  note: {note}")
    failed = False
    if parity.problems:
        print(f"\n{len(parity.problems)} rule(s) differ between guide and rubric:", file=sys.stderr)
        for problem in parity.problems:
            print(f"  - {problem}", file=sys.stderr)
        failed = True
    else:
        print("  every rubric in force states the rules its guide states, and no other")
    leaks = near_duplicates(catalogue.cases)
    if leaks:
        print(
            f"\n{len(leaks)} held-out user turn(s) nearly copy a calibration turn:", file=sys.stderr
        )
        for leak in leaks:
            print(f"  - {leak}", file=sys.stderr)
        failed = True
    return 1 if failed else 0


def _table(frame: pd.DataFrame, empty: str, *, index: bool = True) -> str:
    """``frame`` as text, or ``empty`` as a sentence (indented like a table) when it has no
    rows: never pandas' ``Empty DataFrame`` repr."""
    return frame.to_string(index=index) if len(frame) else f"  {empty}"


def run_audit(args: argparse.Namespace) -> int:
    """Print the shortcut table; exit 0 when no shortcut reaches the ceiling, else 1."""
    import json
    import tempfile
    from pathlib import Path

    import pandas as pd

    from evalkit.catalogue._audit import audit
    from evalkit.catalogue._io import load

    try:
        catalogue = load(args.path)
    except CatalogueError as exc:
        print(str(exc), file=sys.stderr)
        return 2
    if catalogue.constants.audit is None:
        print(
            f"{args.path}/constants.yaml declares no audit.shortcut_ceiling: "
            "declare one with an ADR before auditing",
            file=sys.stderr,
        )
        return 2
    baseline = None
    if not args.no_baseline:
        from evalkit.judge import judge_cases

        with tempfile.TemporaryDirectory() as tmp:
            frame = judge_cases(
                catalogue, judge="baseline", ledger=Path(tmp) / "audit.sqlite", progress=False
            )
        ok = frame[frame["status"] == "ok"]
        baseline = {
            (str(c), str(d)): str(b)
            for c, d, b in zip(ok["case_id"], ok["dimension"], ok["bin"], strict=True)
        }
    result = audit(catalogue, baseline=baseline)
    if args.json:
        print(
            json.dumps(
                {
                    "passed": result.passed,
                    "ceiling": result.ceiling,
                    "two_sided_ceiling": result.limit("two_sided"),
                    "table": result.table.to_dict(orient="records"),
                },
                default=str,
            )
        )
    else:
        with pd.option_context("display.width", 140, "display.max_rows", 100):
            print(
                f"catalogue audit {args.path}: shortcut ceiling {result.ceiling:.2f}, two-sided "
                f"readers {result.limit('two_sided'):.2f} (kappa point estimate), "
                f"{result.n_splits}-fold CV grouped by template family"
            )
            print(
                result.table.drop(columns=["reference"]).to_string(index=False, float_format="%.3f")
            )
    for note in result.notes:
        print(f"note: {note}", file=sys.stderr)
    if result.passed:
        print(
            "PASS: no shortcut reaches the ceiling on any gated dimension",
            file=sys.stderr if args.json else sys.stdout,
        )
        return 0
    for row in result.failures.to_dict(orient="records"):
        right = result.rows_right(str(row["dimension"]), str(row["shortcut"]))
        shown = ", ".join(right[:12]) + (" ..." if len(right) > 12 else "")
        print(
            f"FAIL: {row['shortcut']} reaches kappa {row['kappa']:.3f} >= "
            f"{result.limit(str(row['shortcut'])):.2f} "
            f"on {row['dimension']} without the construct; rows it gets right outside the modal "
            "bin "
            f"({len(right)}): {shown}",
            file=sys.stderr,
        )
    return 1
