"""``evalkit constants status|ratify``: is the catalogue's constants identity ratified?"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from evalkit.errors import CatalogueError


def register(subparsers: Any) -> None:
    cons = subparsers.add_parser("constants", help="ratified frozen constants (ADR-0013)")
    sub = cons.add_subparsers(dest="constants_command", metavar="ACTION", required=True)
    status = sub.add_parser("status", help="are the constants in force ratified, and by what?")
    status.add_argument("--catalogue", default="catalogues")
    status.set_defaults(func=run_status)
    ratify = sub.add_parser("ratify", help="record that an ADR decided the constants now in force")
    ratify.add_argument("--catalogue", default="catalogues")
    ratify.add_argument("--adr", required=True, help="the decision record, docs/adr/NNNN-title.md")
    ratify.set_defaults(func=run_ratify)


def run_status(args: argparse.Namespace) -> int:
    """Exit 0 when ratified, 1 when not, 2 when the catalogue does not load."""
    from evalkit.catalogue._io import load  # here, not at the top: ``--help`` starts fast

    try:
        catalogue = load(args.catalogue)
    except CatalogueError as exc:
        print(str(exc), file=sys.stderr)
        return 2
    status = catalogue.ratification
    print(status.reason())
    return 0 if status.ratified else 1


def run_ratify(args: argparse.Namespace) -> int:
    """Append a ratification for the constants in force, citing ``--adr``."""
    # Imported here, not at the top, so that ``evalkit constants --help`` starts fast.
    from evalkit.catalogue._io import load
    from evalkit.catalogue._ratify import append_ratification

    try:
        catalogue = load(args.catalogue)
    except CatalogueError as exc:
        print(str(exc), file=sys.stderr)
        return 2
    if catalogue.ratification.ratified:
        print(f"{args.catalogue}: already {catalogue.ratification.reason()}; nothing recorded")
        return 0
    try:
        record = append_ratification(
            Path(args.catalogue),
            catalogue.constants_hash,
            catalogue.framing_hash,
            Path(args.adr),
        )
    except ValueError as exc:
        print(f"evalkit constants ratify: {exc}", file=sys.stderr)
        return 2
    print(
        f"ratified constants {record.constants_sha256[:12]} by {record.adr} "
        f"({record.adr_file}) in {args.catalogue}/ratified.yaml"
    )
    return 0
