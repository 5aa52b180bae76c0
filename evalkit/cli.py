"""The ``evalkit`` command line: one subcommand per stage of the pipeline.

Each package that offers a subcommand has a private ``_cli.py`` with
``register(subparsers)``; the parser sets ``func`` to a callable taking the parsed
arguments and returning the exit code. Only the running command's ``_cli.py`` is
imported, and it imports its machinery (pandas, the statistics) inside its run
functions, so ``--help`` and a usage error import no heavy library
(``benchmarks/bench_startup.py``). Exit codes are a contract:

- 0: success, or the gate passes;
- 1: a failure the command was asked to find (a failed gate, a catalogue with problems);
- 2: unusable input, a named :class:`~evalkit.errors.EvalkitError` (file, record, field);
- 3: an internal error (a bug of evalkit's): one line on stderr, the traceback only with
  ``--debug`` (anywhere on the command line) or ``EVALKIT_DEBUG=1``.

A traceback never exits 1, which would read as a FAIL verdict.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import traceback
from collections.abc import Sequence
from pathlib import Path

from evalkit import __version__
from evalkit.errors import EvalkitError
from evalkit.secrets import scrub

#: Subcommands: the module that registers each, and its one-line help. Only the module of
#: the command being run is imported, so ``evalkit --help`` and each command start fast.
_COMMANDS: dict[str, tuple[str, str]] = {
    "catalogue": ("evalkit.catalogue._cli", "inspect and validate a catalogue"),
    "constants": ("evalkit.catalogue._constants_cli", "check or ratify the frozen constants"),
    "judge": ("evalkit.judging._cli", "score cases with a judge, recording every call in a ledger"),
    "gate": ("evalkit.gate._cli", "decide the relock gate from a judge ledger"),
    "heldout": ("evalkit.heldout._cli", "blind template, seal and verify held-out labels"),
    "onset": ("evalkit.onset._cli", "run the onset-turn study"),
    "construct": ("evalkit.construct._cli", "the rules of each construct; rubric diffs"),
    "study": ("evalkit.report._cli", "execute the study notebooks and render reports/"),
    "notebook": ("evalkit.report._notebook_cli", "copy a study notebook into the workspace"),
    "prevalence": ("evalkit.prevalence._cli", "corrected share of each bin; which cases to label"),
    "import": ("evalkit.interop._cli", "bring Inspect AI logs and labeling-tool labels in"),
    "labels": ("evalkit.interop._labels_cli", "export blind label tasks and label sets"),
}


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser; with ``command``, that subcommand is registered in full, the others
    only by name and help (their modules are not imported)."""
    parser = argparse.ArgumentParser(
        prog="evalkit",
        description="Calibrate LLM judges against human labels and gate launches on them.",
        epilog="Exit codes: 0 pass, 1 fail or problems found, 2 unusable input, 3 internal "
        "error (traceback with --debug).",
    )
    parser.add_argument(
        "--debug", action="store_true", help="print the traceback of an internal error"
    )
    parser.add_argument("--version", action="version", version=f"evalkit {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name, (module, help_) in _COMMANDS.items():
        if name == command:
            importlib.import_module(module).register(subparsers)
        else:
            subparsers.add_parser(name, help=help_)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in argv or os.environ.get("EVALKIT_DEBUG", "") not in ("", "0")
    argv = [a for a in argv if a != "--debug"]
    command = next((a for a in argv if not a.startswith("-")), None)
    name = command if command in _COMMANDS else None
    try:
        parser = build_parser(name)
        args = parser.parse_args(argv)
        if not hasattr(args, "func"):  # a known command whose module was not registered
            parser.print_help()
            return 2
        code: int = args.func(args)
    except EvalkitError as exc:
        print(scrub(f"evalkit {name or ''}: {exc}".replace(" :", ":")), file=sys.stderr)
        return 2
    except SystemExit:
        raise  # argparse's own exit (2 on a usage error, 0 on --help)
    except KeyboardInterrupt:
        print("evalkit: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # an internal error: never exit 1, which reads as FAIL
        if debug:
            traceback.print_exc()
        where = traceback.extract_tb(exc.__traceback__)[-1] if exc.__traceback__ else None
        at = f" at {Path(where.filename).name}:{where.lineno}" if where else ""
        message = (
            f"evalkit {name or ''}: internal error: {type(exc).__name__}: {exc}{at} "
            "(a bug in evalkit; re-run with --debug for the traceback)"
        )
        print(scrub(message.replace(" :", ":")), file=sys.stderr)
        return 3
    return code


if __name__ == "__main__":
    sys.exit(main())
