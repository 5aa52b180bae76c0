"""``evalkit catalogue check [PATH]``: validate a catalogue and print its balance."""

from __future__ import annotations

import argparse
import sys
from typing import Any

import pandas as pd

from evalkit.catalogue._check import near_duplicates, summarize
from evalkit.catalogue._io import load
from evalkit.errors import CatalogueError


def register(subparsers: Any) -> None:
    cat = subparsers.add_parser("catalogue", help="inspect and validate a catalogue")
    sub = cat.add_subparsers(dest="catalogue_command", metavar="ACTION", required=True)
    check = sub.add_parser("check", help="validate a catalogue and print its balance tables")
    check.add_argument("path", nargs="?", default="catalogues", help="catalogue folder")
    check.set_defaults(func=run_check)


def run_check(args: argparse.Namespace) -> int:
    """Print every problem and exit 1, or print the balance tables and exit 0."""
    try:
        catalogue = load(args.path)
    except CatalogueError as exc:
        print(str(exc), file=sys.stderr)
        return 1
    tables = summarize(catalogue)
    with pd.option_context("display.max_rows", 200, "display.width", 120):
        print(
            f"catalogue {args.path}: {len(catalogue.cases)} cases, "
            f"{len(catalogue.labels)} labels, {len(catalogue.rubrics)} rubrics"
        )
        print(f"constants sha256 {catalogue.constants_hash}")
        print(f"framing   sha256 {catalogue.framing_hash}")
        print("\ncases per locale x stratum x split")
        print(tables["cases"].to_string())
        print("\ncalibration labels per dimension x locale x bin")
        print(tables["labels"].to_string())
    leaks = near_duplicates(catalogue.cases)
    if leaks:
        print(
            f"\n{len(leaks)} held-out user turn(s) nearly copy a calibration turn:", file=sys.stderr
        )
        for leak in leaks:
            print(f"  - {leak}", file=sys.stderr)
        return 1
    return 0
