"""``evalkit study``: execute the study notebooks and render ``reports/`` offline."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any


def register(subparsers: Any) -> None:
    study = subparsers.add_parser(
        "study",
        help="execute the study notebooks and render them to offline HTML reports",
        description="Execute the study notebooks (papermill, a few at a time: --jobs) and "
        "write one HTML page per study without code cells, the ADRs they cite, and "
        "index.html. A line says when each study starts and ends. Keys for live judges are "
        "read from the environment only. A study "
        "parameter given with -p NAME=VALUE reaches every study whose notebook declares it "
        "(list them with `papermill --help-notebook notebooks/STUDY.ipynb`).",
    )
    study.add_argument("--catalogue", default="catalogues", help="catalogue folder")
    study.add_argument(
        "--judge",
        default="baseline",
        help="judge spec: baseline (default, offline), replay[:JUDGE], anthropic:MODEL, "
        "openai:URL:MODEL",
    )
    study.add_argument("--out", default="reports", help="output folder (default: reports)")
    study.add_argument("--ledger-dir", default="ledgers", help="folder of judge ledgers")
    study.add_argument(
        "--ledger", help="ledger path (default: <ledger-dir>/<judge>.sqlite); replay reads it"
    )
    study.add_argument("--seed", type=int, default=0, help="seed of bootstraps and simulations")
    study.add_argument("--notebooks", help="folder of the study notebooks (default: notebooks)")
    study.add_argument("--adr-dir", help="folder of the ADRs (default: docs/adr)")
    study.add_argument(
        "--adr-base",
        metavar="LINK",
        help="link the ADR pages at LINK (relative, ending in /, e.g. ../adr/ for a run "
        "beside the main reports) instead of rendering them into OUT/adr/",
    )
    study.add_argument(
        "--cache-dir",
        default=".cache/evalkit",
        metavar="DIR",
        help="where studies remember results that do not depend on the judge (the "
        "catalogue audit's fitted shortcuts) for the next run (default: .cache/evalkit; "
        "'' for none)",
    )
    study.add_argument(
        "--jobs",
        type=positive_int,
        metavar="N",
        help="studies run at a time (default: the cores available); the reports are the "
        "same whatever N is",
    )
    study.add_argument(
        "--only", action="append", metavar="STUDY", help="run only this study (repeatable)"
    )
    study.add_argument(
        "--rubric",
        action="append",
        type=rubric_version,
        default=[],
        metavar="DIM=VERSION",
        help="study this rubric version of a dimension (repeatable; default: in force); a "
        "version other than the one in force makes the run exploratory",
    )
    study.add_argument(
        "--explore",
        action="store_true",
        help="label every page 'exploratory — not gate evidence' and show kappa against the "
        "threshold instead of a gate verdict (ADR-0017)",
    )
    study.add_argument(
        "-p",
        "--parameter",
        action="append",
        type=study_parameter,
        default=[],
        metavar="NAME=VALUE",
        help="set a study parameter (repeatable), VALUE read as YAML as papermill's -y would "
        "(-p n_resamples=500, -p 'dimensions=[self_harm]'); a name no study to run declares, "
        "or one an option sets (judge, catalogue, ledger, seed, split, rubric_versions, "
        "explore), is refused (exit 2); secrets are refused: keys go in the environment",
    )
    study.set_defaults(func=run)


def positive_int(text: str) -> int:
    """An integer of at least 1 (an argparse type: anything else exits 2)."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: expected a whole number of at least 1")
    return value


def rubric_version(text: str) -> tuple[str, str]:
    """``DIM=VERSION`` as a pair (an argparse type: a malformed value exits 2)."""
    dim, sep, version = text.partition("=")
    if not sep or not dim.strip() or not version.strip():
        raise argparse.ArgumentTypeError(f"{text!r}: expected DIM=VERSION, e.g. self_harm=v2")
    return dim.strip(), version.strip()


def study_parameter(text: str) -> tuple[str, Any]:
    """``NAME=VALUE`` as ``(name, value)``, the value parsed as YAML (``500`` → 500,
    ``[a, b]`` → a list, ``yes`` → True; an empty value is ``None``). An argparse type:
    a malformed pair or unparseable YAML exits 2."""
    import yaml  # with the strict loader below: here, so that ``--help`` starts fast

    from evalkit.catalogue._collect import parse_yaml

    name, sep, value = text.partition("=")
    if not sep or not name.strip().isidentifier():
        raise argparse.ArgumentTypeError(f"{text!r}: expected NAME=VALUE, e.g. n_resamples=500")
    try:
        parsed = parse_yaml(value)  # the strict loader: duplicate keys, deep nesting refused
    except yaml.YAMLError as exc:
        raise argparse.ArgumentTypeError(f"{text!r}: the value is not YAML ({exc})") from exc
    return name.strip(), parsed


def run(args: argparse.Namespace) -> int:
    from evalkit.report._run import run_studies

    # a file as --out, a folder as --ledger: refused before any notebook runs (they were
    # an internal error, and a failed study after the whole run)
    if args.out is not None and Path(args.out).is_file():
        print(f"evalkit study: --out {args.out}: is a file; --out names a folder", file=sys.stderr)
        return 2
    if args.ledger is not None and Path(args.ledger).is_dir():
        print(f"evalkit study: --ledger {args.ledger}: is a folder; name the ledger file",
              file=sys.stderr)  # fmt: skip
        return 2
    try:
        summary = run_studies(
            catalogue=args.catalogue,
            judge=args.judge,
            out=args.out,
            ledger_dir=args.ledger_dir,
            ledger=args.ledger,
            seed=args.seed,
            notebooks=args.notebooks,
            adr_dir=args.adr_dir,
            studies=args.only,
            parameters=dict(args.parameter),
            rubric_versions=dict(args.rubric),
            explore=args.explore,
            adr_base=args.adr_base,
            jobs=args.jobs,
            cache_dir=args.cache_dir or None,
        )
    except (ValueError, FileNotFoundError) as exc:
        print(f"evalkit study: {exc}", file=sys.stderr)
        return 2
    failed = [r.study.name for r in summary.results if not r.ok]
    print(f"wrote {summary.index} ({len(summary.results)} studies, {len(summary.adrs)} ADRs)")
    if failed:
        print(f"evalkit study: failed: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0
