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

#: Subcommands: the module that registers each, and its one-line help. Only the module of
#: the command being run is imported, so ``evalkit --help`` and each command start fast.
_COMMANDS: dict[str, tuple[str, str]] = {
    "catalogue": ("evalkit.catalogue._cli", "inspect and validate a catalogue"),
    "constants": ("evalkit.catalogue._constants_cli", "check or ratify the frozen constants"),
    "judge": ("evalkit.judge._cli", "score cases with a judge, recording every call in a ledger"),
    "gate": ("evalkit.gate._cli", "decide the relock gate from a judge ledger"),
    "heldout": ("evalkit.heldout._cli", "blind template, seal and verify held-out labels"),
    "onset": ("evalkit.onset._cli", "run the onset-turn study"),
    "study": ("evalkit.report._cli", "execute the study notebooks and render reports/"),
}


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser; with ``command``, that subcommand is registered in full, the others
    only by name and help (their modules are not imported)."""
    parser = argparse.ArgumentParser(
        prog="evalkit",
        description="Calibrate LLM judges against human labels and gate launches on them.",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name, (module, help_) in _COMMANDS.items():
        if name == command:
            importlib.import_module(module).register(subparsers)
        else:
            subparsers.add_parser(name, help=help_)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    command = next((a for a in argv if not a.startswith("-")), None)
    parser = build_parser(command if command in _COMMANDS else None)
    args = parser.parse_args(argv)
    if not hasattr(args, "func"):  # a known command whose module was not registered
        parser.print_help()
        return 2
    try:
        code: int = args.func(args)
    except EvalkitError as exc:
        print(f"evalkit {args.command}: {exc}", file=sys.stderr)
        return 2
    return code


if __name__ == "__main__":
    sys.exit(main())
