"""``evalkit construct rules|diff``: the rules of each construct (ADR-0024)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, Literal

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
    mut = sub.add_parser(
        "mutate", help="would this catalogue catch a missing rule? (rubric mutation testing)"
    )
    mut.add_argument("--judge", required=True, help="judge spec (baseline, anthropic:MODEL, ...)")
    mut.add_argument("--dimension", action="append", default=None, help="repeatable")
    mut.add_argument("--rules", default=None, help="comma-separated rule ids (default all)")
    mut.add_argument(
        "--ledger", default=None, help="SQLite ledger (default ledgers/<judge>.sqlite)"
    )
    mut.add_argument("--all-cases", action="store_true", help="judge every gated case")
    mut.add_argument("--catalogue", default="catalogues", help="catalogue folder")
    mut.add_argument("--seed", type=int, default=0, help="seed of the control sample")
    mut.add_argument("--yes", action="store_true", help="send paid calls without asking")
    mut.add_argument("--json", action="store_true", help="print JSON")
    mut.add_argument(
        "--export-batch", default=None, metavar="FILE",
        help="write the mutation run's requests the ledger lacks as a batch input file",
    )  # fmt: skip
    mut.add_argument(
        "--import-batch", default=None, metavar="FILE",
        help="record a batch output file answering the mutation run's requests",
    )  # fmt: skip
    mut.set_defaults(func=run_mutate)


def _load(path: str) -> Any:
    from evalkit.catalogue import load  # here, not at the top: ``--help`` starts fast

    try:
        return load(path)
    except CatalogueError as exc:
        raise EvalkitError(str(exc)) from None


def run_rules(args: argparse.Namespace) -> int:
    """Print the rule inventory; exit 0 (it describes, it does not judge)."""
    import pandas as pd  # here, not at the top: ``--help`` starts fast

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


def run_mutate(args: argparse.Namespace) -> int:
    """Judge the mutants and print the table (or move batch files); exit 0 (the table is
    the answer: a survivor is a finding about the catalogue, not a failed command)."""
    from pathlib import Path

    from evalkit.construct._mutate import mutate, mutation_requests, plan
    from evalkit.judge._backends import judge_slug, make_backend
    from evalkit.judge._prompt import JudgeIdentity
    from evalkit.judging._batch_files import record_output, write_requests
    from evalkit.judging._cli import _confirm
    from evalkit.ledger._store import Ledger

    catalogue = _load(args.catalogue)
    ledger = args.ledger or str(Path("ledgers") / f"{judge_slug(args.judge)}.sqlite")
    rules = [r.strip() for r in args.rules.split(",") if r.strip()] if args.rules else None
    options = {"dimensions": args.dimension, "rules": rules, "all_cases": args.all_cases,
               "seed": args.seed}  # fmt: skip
    try:
        if args.export_batch or args.import_batch:
            found, judged = plan(catalogue, **options)
            backend = make_backend(args.judge, catalogue)
            if backend is None:
                raise EvalkitError("batch files need a judge that is not replay")
            identity = JudgeIdentity(backend.spec, backend.kind, backend.model, backend.params)
            with Ledger(ledger) as led:
                requests = mutation_requests(catalogue, found, judged, identity, led.salt)
                if args.export_batch:
                    fmt: Literal["anthropic", "openai"] = (
                        "openai" if backend.kind == "openai" else "anthropic"
                    )
                    n = write_requests(requests, backend, led, args.export_batch, fmt)
                    print(f"wrote {n} request(s) to {args.export_batch}; nothing sent")
                else:
                    counts = record_output(requests, backend, led, args.import_batch)
                    print(f"imported {args.import_batch}: {counts} (recorded in {ledger})")
            return 0
        result = mutate(
            catalogue, judge=args.judge, ledger=ledger, confirm=_confirm(args.yes), **options
        )
    except ValueError as exc:
        print(f"evalkit construct mutate: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(result.to_dict(), indent=1, default=str))
    else:
        print(repr(result))
    return 0
