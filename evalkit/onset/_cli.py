"""``evalkit onset``: run a target on a split, judge every agent turn, write the onset study.

    evalkit onset [--catalogue PATH] [--split calibration] [--target replay]
                  [--judge baseline] [--ledger PATH] [--transcripts PATH] [--out DIR]
                  [--system-prompt FILE] [--horizon 5] [--n-boot 2000] [--seed 0]
                  [--concurrency 8] [--max-cost USD] [--yes] [--quiet]

Steps: (1) run one conversation per case of the split against ``--target`` with the
scripted user (``replay`` reproduces the catalogue), stored resumably in
``--transcripts`` (default: beside the ledger, ``<ledger stem>.transcripts.jsonl``);
(2) judge every agent turn on ``self_harm`` and ``escalation`` with ``--judge``
through ``--ledger``; (3) build the per-turn frame (routing checked
deterministically) and write every table as CSV and every figure as PNG and SVG to
``--out``. Offline with ``--target replay --judge baseline``. Calls to a networked
target or judge need ``--yes``. Exit codes: 0 done, 1 done but some conversations or
judge requests failed (re-run to retry them), 2 unusable input.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from pathlib import Path
from typing import Any

from evalkit.errors import EvalkitError

DIMENSIONS = ("self_harm", "escalation")


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "onset", help="onset-turn study: run a target, judge every turn, write curves"
    )
    p.add_argument("--catalogue", default="catalogues", help="catalogue folder")
    p.add_argument("--split", choices=("calibration", "heldout"), default="calibration")
    p.add_argument("--target", default="replay", help="replay | anthropic:MODEL | openai:URL:MODEL")
    p.add_argument(
        "--judge", default="baseline", help="baseline | anthropic:MODEL | openai:URL:MODEL"
    )
    p.add_argument("--ledger", default="ledgers/onset.sqlite", help="judge ledger (SQLite)")
    p.add_argument(
        "--transcripts",
        default=None,
        help="transcript store, .jsonl or .sqlite (default: beside the ledger)",
    )
    p.add_argument("--out", default="reports/onset", help="folder for tables and figures")
    p.add_argument("--system-prompt", default=None, metavar="FILE", help="target system prompt")
    p.add_argument("--horizon", type=int, default=5, help="agent turns after onset to chart")
    p.add_argument("--n-boot", type=int, default=2000, help="cluster-bootstrap replicates")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--concurrency", type=int, default=8)
    p.add_argument("--max-cost", type=float, default=None, metavar="USD", help="judge budget")
    p.add_argument("--formats", default="png,svg", help="figure formats, comma-separated")
    p.add_argument("--yes", action="store_true", help="send calls to networked services")
    p.add_argument("--quiet", action="store_true", help="no progress on stderr")
    p.set_defaults(func=run)


def _judge_api() -> Any:
    """``evalkit.judge`` if it offers ``judge_cases``; a clear EvalkitError if not."""
    try:
        judge = importlib.import_module("evalkit.judge")
    except ImportError as exc:
        raise EvalkitError(f"the judge (evalkit.judge) cannot be imported: {exc}") from None
    if not hasattr(judge, "judge_cases"):
        raise EvalkitError("the judge (evalkit.judge) has no judge_cases yet")
    return judge


def _formats(text: str) -> list[str]:
    """The figure formats of ``--formats``; one matplotlib cannot write is an
    :class:`EvalkitError` before anything runs (it was an internal error after the run)."""
    from matplotlib.figure import Figure

    formats = [f.strip().lower() for f in text.split(",") if f.strip()]
    supported = sorted(Figure().canvas.get_supported_filetypes())
    unknown = [f for f in formats if f not in supported]
    if unknown or not formats:
        what = f"{', '.join(unknown)}: not a figure format" if unknown else "no format named"
        raise EvalkitError(
            f"--formats {text}: {what}; give one or more of {', '.join(supported)}, comma-separated"
        )
    return formats


def _read_system_prompt(path: str | None) -> str | None:
    """``--system-prompt FILE`` as UTF-8 text; an unreadable file is an EvalkitError."""
    if path is None:
        return None
    try:
        return Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        cause = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise EvalkitError(
            f"--system-prompt {path}: cannot read it as UTF-8 text: {cause}"
        ) from None


def check_args(args: argparse.Namespace) -> list[str]:
    """Refuse unusable options before any conversation runs or any call is paid: a
    ``--horizon`` or ``--n-boot`` below 1, a ``--concurrency`` below 1, a negative
    ``--max-cost``, a file where the ``--out`` folder goes, a folder where the
    ``--ledger`` goes, or an unknown figure format. Returns the figure formats."""
    bounds = (("--horizon", args.horizon), ("--n-boot", args.n_boot),
              ("--concurrency", args.concurrency))  # fmt: skip
    for flag, value in bounds:
        if value < 1:
            raise EvalkitError(f"{flag} {value}: must be a whole number of at least 1")
    if args.max_cost is not None and not args.max_cost >= 0:
        raise EvalkitError(f"--max-cost {args.max_cost}: must be a number of dollars, 0 or more")
    if Path(args.out).exists() and not Path(args.out).is_dir():
        raise EvalkitError(f"--out {args.out}: is a file; --out names a folder for the study")
    if Path(args.ledger).is_dir():
        raise EvalkitError(f"--ledger {args.ledger}: is a folder; --ledger names a SQLite file")
    return _formats(args.formats)


def _networked(spec: str) -> bool:
    return spec.split(":", 1)[0] in ("anthropic", "openai")


def run(args: argparse.Namespace) -> int:
    # Imported here, not at the top, so that ``evalkit onset --help`` starts fast.
    import pandas as pd

    from evalkit.catalogue import load
    from evalkit.onset._events import per_turn_events
    from evalkit.onset._observed import followup_note
    from evalkit.onset._study import onset_study, write_study
    from evalkit.runner import (
        RunnerError,
        default_transcripts_path,
        run_conversations,
        transcript_cases,
    )

    formats = check_args(args)
    judge = _judge_api()
    catalogue = load(args.catalogue)
    cases = catalogue.split(args.split)
    if not cases:
        raise EvalkitError(f"no {args.split} cases in {args.catalogue}")
    for spec, what in ((args.target, "target"), (args.judge, "judge")):
        if _networked(spec) and not args.yes:
            raise RunnerError(f"--{what} {spec} sends paid or remote calls; pass --yes")
    system = _read_system_prompt(args.system_prompt)
    store = Path(args.transcripts) if args.transcripts else default_transcripts_path(args.ledger)
    Path(args.ledger).parent.mkdir(parents=True, exist_ok=True)
    records = run_conversations(
        cases,
        args.target,
        store=store,
        concurrency=args.concurrency,
        system=system,
        progress=not args.quiet,
    )
    run_failed = int(records.attrs.get("run", {}).get("failed", 0))
    rebuilt = transcript_cases(cases, records)
    judged = judge.judge_cases(
        catalogue,
        rebuilt,
        list(DIMENSIONS),
        judge=args.judge,
        ledger=args.ledger,
        turns="all",
        concurrency=args.concurrency,
        max_cost=args.max_cost,
        progress=not args.quiet,
        for_gate=False,
        confirm=lambda plan: True,
    )
    per_turn = per_turn_events(judged, rebuilt, catalogue.resources, catalogue.constants.bins)
    per_turn["target"] = records["target"].iloc[0] if len(records) else args.target
    study = onset_study(per_turn, horizon=args.horizon, n_boot=args.n_boot, seed=args.seed)
    paths = write_study(study, args.out, formats=formats)
    with pd.option_context("display.width", 140, "display.max_columns", 20):
        print(study.summary.to_string(index=False))
    for note in [*study.notes, followup_note(study.followup)]:
        if note:
            print(f"note: {note}", file=sys.stderr)
    print(f"wrote {len(paths)} file(s) to {args.out}; transcripts in {store}")
    judge_errors = int((judged.drop_duplicates("request_key")["status"] == "error").sum())
    if run_failed or judge_errors:
        print(
            f"{run_failed} conversation(s) and {judge_errors} judge request(s) failed; "
            "re-run to retry them",
            file=sys.stderr,
        )
        return 1
    return 0
