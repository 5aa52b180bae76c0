"""``evalkit heldout template|seal|verify``: the sealed held-out protocol (ADR-0008)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from evalkit.catalogue import load
from evalkit.heldout._seal import seal_labels, verify_seals
from evalkit.heldout._template import write_template


def register(subparsers: Any) -> None:
    heldout = subparsers.add_parser("heldout", help="blind template, seal and verify labels")
    heldout.add_argument("--catalogue", default="catalogues", help="catalogue folder")
    sub = heldout.add_subparsers(dest="heldout_command", metavar="ACTION", required=True)
    tpl = sub.add_parser("template", help="write the blind labeling template (CSV)")
    tpl.add_argument("--out", help="output path (default: <catalogue>/heldout/template.csv)")
    tpl.set_defaults(func=run_template)
    seal = sub.add_parser("seal", help="seal a filled label sheet before any judge run")
    seal.add_argument("labels", help="the filled template")
    seal.set_defaults(func=run_seal)
    verify = sub.add_parser("verify", help="check every sealed file still matches its seal")
    verify.set_defaults(func=run_verify)


def run_template(args: argparse.Namespace) -> int:
    catalogue = load(args.catalogue)
    out = args.out or catalogue.root / "heldout" / "template.csv"
    path = write_template(catalogue, out)
    print(f"wrote {path}: {len(catalogue.split('heldout'))} held-out cases, slots blank")
    return 0


def run_seal(args: argparse.Namespace) -> int:
    catalogue = load(args.catalogue)
    seal = seal_labels(catalogue, args.labels)
    print(
        f"sealed {seal.file}: {seal.n_labels} labels on {seal.n_cases} cases, "
        f"sha256 {seal.sha256}, at {seal.sealed_at}, commit {seal.git_commit}"
    )
    return 0


def run_verify(args: argparse.Namespace) -> int:
    catalogue = load(args.catalogue)
    statuses = verify_seals(catalogue)
    if not statuses:
        print("no seals recorded")
        return 0
    bad = 0
    for st in statuses:
        print(
            f"{st.status:<9}{st.seal.file}  sealed {st.seal.sealed_at}  "
            f"sha256 {st.seal.sha256[:16]}…"
        )
        bad += st.status != "OK"
    if bad:
        print(f"{bad} sealed file(s) changed or missing", file=sys.stderr)
    return 1 if bad else 0
