"""The ``evalkit`` command line: one subcommand per stage of the pipeline.

Each package that offers a subcommand has a private ``_cli.py`` with
``register(subparsers)``; the parser sets ``func`` to a callable taking the parsed
arguments and returning the exit code. Exit codes: 0 success or pass, 1 failure
(a failed gate, a catalogue with problems), 2 unusable input.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from evalkit.errors import EvalkitError

#: Modules that register subcommands, in the order ``evalkit --help`` lists them.
_COMMANDS = (
    "evalkit.catalogue._cli",
    "evalkit.judge._cli",
    "evalkit.gate._cli",
    "evalkit.heldout._cli",
    "evalkit.onset._cli",
    "evalkit.report._cli",
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="evalkit",
        description="Calibrate LLM judges against human labels and gate launches on them.",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name in _COMMANDS:
        importlib.import_module(name).register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        code: int = args.func(args)
    except EvalkitError as exc:
        print(f"evalkit {args.command}: {exc}", file=sys.stderr)
        return 2
    return code


if __name__ == "__main__":
    sys.exit(main())
