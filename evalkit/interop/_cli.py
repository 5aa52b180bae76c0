"""``evalkit import inspect|labelstudio|csv``: bring other tools' logs and labels in.

``inspect`` writes a catalogue, an imported judge's ledger and a blind labeling kit from
Inspect AI logs; ``labelstudio`` and ``csv`` add label sets to a catalogue (which may have
no labels yet). Exit 0 on success, 2 on unusable input (a named error).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from evalkit.errors import CatalogueError, EvalkitError


def register(subparsers: Any) -> None:
    imp = subparsers.add_parser(
        "import", help="bring Inspect AI logs, Label Studio exports or a long CSV of labels in"
    )
    sub = imp.add_subparsers(dest="import_command", metavar="SOURCE", required=True)
    ins = sub.add_parser(
        "inspect",
        help="Inspect AI eval logs -> a catalogue, an imported judge's ledger, a labeling kit",
        description="Each sample becomes a case; each scorer of the mapping becomes the judge "
        "imported:inspect/<scorer>, its values mapped to the frozen bins by the mapping file "
        "(docs/interop.md). Unmapped values, unscored and errored samples are unparseable.",
    )
    ins.add_argument("logs", nargs="+", metavar="LOG", help="Inspect log (.eval or .json)")
    ins.add_argument("--out", required=True, help="catalogue folder to write (new or empty)")
    ins.add_argument("--map", required=True, dest="mapping", help="mapping file (YAML)")
    ins.add_argument(
        "--scorer", action="append", help="import only this scorer of the mapping (repeatable)"
    )
    ins.add_argument(
        "--like", default="catalogues", help="template catalogue whose frozen constants are kept"
    )
    ins.add_argument("--ledger", help="ledger to write (SQLite, or .jsonl for an export)")
    ins.add_argument("--labeling", help="folder of the labeling kit (default: <out>-labeling)")
    ins.add_argument("--epoch", type=int, default=1, help="the epoch to import (default 1)")
    ins.add_argument(
        "--replace-kit",
        action="store_true",
        help="overwrite the files of an existing labeling kit that differ from this import's",
    )
    ins.set_defaults(func=run_inspect)
    ls = sub.add_parser("labelstudio", help="a Label Studio JSON export -> one label set each")
    ls.add_argument("export", help="Label Studio JSON export (a list of tasks)")
    ls.add_argument("--catalogue", default="catalogues", help="catalogue folder")
    ls.add_argument(
        "--name",
        action="append",
        default=[],
        metavar="ID=SET",
        help="name the label set of annotator ID (default labelstudio-<ID>)",
    )
    ls.add_argument("--replace", action="store_true", help="overwrite existing label set files")
    ls.set_defaults(func=run_labelstudio)
    lc = sub.add_parser("csv", help="a long CSV case_id,dimension,bin,labeler -> label sets")
    lc.add_argument("file", help="the long CSV")
    lc.add_argument("--catalogue", default="catalogues", help="catalogue folder")
    lc.add_argument("--replace", action="store_true", help="overwrite existing label set files")
    lc.set_defaults(func=run_csv)


def run_inspect(args: argparse.Namespace) -> int:
    from evalkit.interop._from_inspect import from_inspect, write_import

    result = from_inspect(
        args.logs,
        args.mapping,
        like=args.like,
        out=args.out,
        scorers=args.scorer,
        epoch=args.epoch,
    )
    if result.redactions:
        print(
            f"secrets redacted from the logs in {len(result.redactions)} place(s) before "
            "anything was written (the kinds, never the secret):",
            file=sys.stderr,
        )
        for redaction in result.redactions:
            print(f"  {redaction}", file=sys.stderr)
    written = write_import(
        result, ledger=args.ledger, labeling=args.labeling, replace_kit=args.replace_kit
    )
    print(f"wrote catalogue {written['catalogue']} ({len(result.catalogue.cases)} cases)")
    counts = written["ledger_counts"]
    print(f"wrote ledger {written['ledger']} ({counts})")
    if counts.get("kept"):
        print(
            f"  {counts['kept']} request(s) already recorded with the same answers from another "
            "copy or run of the log: the ledger keeps its first record of them"
        )
    for judge, statuses in written["counts"].items():
        shown = ", ".join(f"{n} {s}" for s, n in sorted(statuses.items()))
        print(f"  {judge}: {shown}")
    if written["no_reply"]:
        ids = ", ".join(written["no_reply"])
        print(f"not cases (no reply to score): {len(written['no_reply'])} sample(s): {ids}")
    if written["other_epochs"]:
        print(f"samples of other epochs not imported: {written['other_epochs']}")
    kept = "" if written["labeling_written"] else " (already there, identical: unchanged)"
    print("labeling kit: " + ", ".join(str(p) for p in written["labeling"]) + kept)
    print(
        "next: label the cases (evalkit import labelstudio|csv), ratify the constants "
        f"(evalkit constants ratify --catalogue {written['catalogue']} --adr ADR.md), then "
        "evalkit catalogue check and evalkit gate"
    )
    return 0


def _catalogue(path: str) -> Any:
    from evalkit.interop._unlabelled import load_unlabelled

    return load_unlabelled(path)


def _report(catalogue_path: str, written: list[Path], sets: dict[str, Any]) -> None:
    """Say which labeler went into which file (ADR-0031), then whether the catalogue is
    complete."""
    from evalkit.catalogue import load
    from evalkit.interop._labels import labeler_shown

    for path in written:
        labels = sets[path.stem]
        print(f"wrote {path}: labeler {labeler_shown(labels)} ({len(labels)} labels)")
    try:
        load(catalogue_path)
    except CatalogueError as exc:
        print(
            f"catalogue {catalogue_path} is not complete yet ({len(exc.problems)} problem(s)); "
            "see evalkit catalogue check",
            file=sys.stderr,
        )
        return
    print(f"catalogue {catalogue_path}: complete (evalkit catalogue check)")


def _names(pairs: list[str]) -> dict[int, str]:
    """``--name ID=SET`` pairs as a mapping; an id named twice, or two ids given one set
    name (two annotators are two sets: ADR-0031), is an error, never the last one kept."""
    out: dict[int, str] = {}
    for pair in pairs:
        ident, sep, name = pair.partition("=")
        if not sep or not ident.isascii() or not ident.strip().isdigit() or not name.strip():
            raise EvalkitError(f"--name {pair!r}: expected ID=SET, e.g. 3=alice")
        key, name = int(ident), name.strip()
        if key in out:
            raise EvalkitError(f"--name {pair!r}: annotator {key} is already named {out[key]!r}")
        if name in out.values():
            other = next(k for k, v in out.items() if v == name)
            raise EvalkitError(
                f"--name {pair!r}: {name!r} already names annotator {other}; one annotator "
                "is one label set (docs/adr/0031)"
            )
        out[key] = name
    return out


def run_labelstudio(args: argparse.Namespace) -> int:
    from evalkit.interop._labels import write_label_sets
    from evalkit.interop._labelstudio import read_labelstudio_export

    catalogue = _catalogue(args.catalogue)
    found = read_labelstudio_export(args.export, catalogue, names=_names(args.name))
    written = write_label_sets(Path(args.catalogue), found.sets, replace=args.replace)
    if found.cancelled:
        print(f"{found.cancelled} cancelled (skipped by the annotator) annotation(s): no label")
    _report(args.catalogue, written, found.sets)
    return 0


def run_csv(args: argparse.Namespace) -> int:
    from evalkit.interop._labels import write_label_sets
    from evalkit.interop._long_csv import read_long_csv

    catalogue = _catalogue(args.catalogue)
    sets = read_long_csv(args.file, catalogue)
    written = write_label_sets(Path(args.catalogue), sets, replace=args.replace)
    _report(args.catalogue, written, sets)
    return 0
