"""``evalkit labels export-labelstudio|export-csv``: label tasks and label sets out.

``export-labelstudio`` writes the blind Label Studio task set and labeling config of a
catalogue's calibration cases (labelled or not); ``export-csv`` writes its label sets
(complete or not) as a long CSV with their labelers and notes, which ``evalkit import csv
--replace`` reads back to the same files (``--template``: the blank rows to fill). Exit 0
on success, 2 on unusable input.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any


def register(subparsers: Any) -> None:
    labels = subparsers.add_parser(
        "labels", help="export blind label tasks (Label Studio) and label sets (long CSV)"
    )
    sub = labels.add_subparsers(dest="labels_command", metavar="ACTION", required=True)
    ls = sub.add_parser(
        "export-labelstudio", help="Label Studio tasks JSON and labeling config XML"
    )
    ls.add_argument("--catalogue", default="catalogues", help="catalogue folder")
    ls.add_argument("--out", required=True, help="folder to write the two files into")
    ls.set_defaults(func=run_labelstudio)
    lc = sub.add_parser(
        "export-csv", help="label sets as a long CSV label_set,case_id,dimension,bin,labeler,note"
    )
    lc.add_argument("--catalogue", default="catalogues", help="catalogue folder")
    lc.add_argument("--out", required=True, help="CSV file to write")
    lc.add_argument(
        "--template", action="store_true", help="the blank rows to fill instead of the labels"
    )
    lc.set_defaults(func=run_csv)


def run_labelstudio(args: argparse.Namespace) -> int:
    from evalkit.interop._labelstudio import write_labelstudio
    from evalkit.interop._unlabelled import load_unlabelled

    catalogue = load_unlabelled(args.catalogue)
    tasks, config = write_labelstudio(catalogue, Path(args.out))
    print(f"wrote {tasks} ({len(catalogue.split('calibration'))} tasks) and {config}")
    return 0


def run_csv(args: argparse.Namespace) -> int:
    from evalkit._files import write_all
    from evalkit.interop._labels import read_label_sets
    from evalkit.interop._long_csv import long_csv, long_csv_template
    from evalkit.interop._unlabelled import load_unlabelled

    catalogue = load_unlabelled(args.catalogue)
    text = long_csv_template(catalogue) if args.template else long_csv(read_label_sets(catalogue))
    out = Path(args.out)
    write_all({out: text}, "CSV file")  # whole or not at all
    print(f"wrote {out} ({text.count(chr(10)) - 1} rows)")
    return 0
