"""``evalkit construct rules|diff``: the rules of each construct (ADR-0024)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

import pandas as pd

from evalkit.catalogue import load
from evalkit.errors import CatalogueError, EvalkitError


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("construct", help="the rules of each construct")
    sub = parser.add_subparsers(dest="construct_command", metavar="ACTION", required=True)
    rules = sub.add_parser(
        "rules", help="each rule: where it is stated, how many cases exercise it"
    )
    rules.add_argument("--catalogue", default="catalogues", help="catalogue folder")
    rules.add_argument("--json", action="store_true", help="print JSON")
    rules.set_defaults(func=run_rules)
    diff = sub.add_parser(
        "diff", help="rules added, removed and reworded between two rubric versions (or guide)"
    )
    diff.add_argument("dimension", help="a gated dimension")
    diff.add_argument("a", help="a rubric version (v1), its hash, or 'guide'")
    diff.add_argument("b", help="a rubric version (v3), its hash, or 'guide'")
    diff.add_argument("--catalogue", default="catalogues", help="catalogue folder")
    diff.add_argument("--json", action="store_true", help="print JSON")
    diff.set_defaults(func=run_diff)


def _load(path: str) -> Any:
    try:
        return load(path)
    except CatalogueError as exc:
        raise EvalkitError(str(exc)) from None


def run_rules(args: argparse.Namespace) -> int:
    """Print the rule inventory; exit 0 (it describes, it does not judge)."""
    from evalkit.construct._rules import inventory_frame, rule_inventory

    catalogue = _load(args.catalogue)
    inventory = rule_inventory(catalogue)
    if args.json:
        print(json.dumps(inventory, indent=1))
        return 0
    frame = inventory_frame(inventory)
    with pd.option_context("display.width", 200, "display.max_rows", 200):
        print(frame.to_string(index=False))
    low = frame[frame["descriptive"] == "yes"]
    if len(low):
        print(
            f"\n{len(low)} rule(s) with fewer calibration cases than min_cell_n "
            f"({catalogue.constants.gate.min_cell_n}): their agreement is descriptive: "
            + ", ".join(f"{d}.{r}" for d, r in zip(low["dimension"], low["rule"], strict=True))
        )
    return 0


def run_diff(args: argparse.Namespace) -> int:
    """Print the diff; exit 0 (a difference is an answer, not a failure)."""
    from evalkit.construct._rules import diff_rules

    catalogue = _load(args.catalogue)
    try:
        diff = diff_rules(catalogue, args.dimension, args.a, args.b)
    except (ValueError, KeyError) as exc:
        print(f"evalkit construct diff: {exc}", file=sys.stderr)
        return 2
    if args.json:
        payload = {
            "dimension": diff.dimension,
            "a": diff.a,
            "b": diff.b,
            "rules": diff.table.astype(object).where(diff.table.notna(), None).to_dict("records"),
        }
        print(json.dumps(payload, indent=1))
        return 0
    print(repr(diff))
    for row in diff.table.itertuples():
        if row.change == "reworded":
            print(f"\n{row.rule}\n  {diff.a}: {row.a}\n  {diff.b}: {row.b}")
    return 0
