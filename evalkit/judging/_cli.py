"""``evalkit judge``: score a split of the catalogue with a judge, through the ledger.

    evalkit judge --judge anthropic:MODEL|openai:URL:MODEL|replay|baseline
                  --split calibration|heldout --dimensions self_harm,escalation,...
                  --ledger PATH [--rubric self_harm=v1] [--batch] [--max-cost USD]
                  [--concurrency N] [--rpm N] [--input-tpm N] [--output-tpm N]
                  [--deadline S] [--yes] [--exact-estimate] [--call-deadline S]
                  [--catalogue PATH]

Before sending anything it prints the plan (calls, calls already in the ledger, and a
local, approximate cost estimate: nothing has left the machine yet) and stops if the
estimate is over ``--max-cost``. Sending needs ``--yes`` or an interactive "y"; until
then no request of any kind is made, unless ``--exact-estimate`` asks for the
provider's token count first (consent to send the transcripts to that endpoint). With
``--max-cost`` and consent, the Anthropic judge counts tokens and holds the run to that
count too. A server that refuses 5 connections in a row ends the run (exit 2), leaving
the calls not sent unrecorded. The CLI is the gate's path, so floating model aliases
are refused unless ``--allow-floating-model``. ``--concurrency`` is a ceiling: the
traffic controller (:mod:`evalkit.traffic`) adapts the requests in flight below it,
paces to the provider's rate-limit headers and to ``--rpm``/``--input-tpm``/
``--output-tpm``, and sends a rate-limited (429) call again when its turn comes; with
``--deadline`` the calls still waiting when it passes end in ``error``. The plan is
printed on stdout, progress and errors on stderr. Exit codes: 0 every request answered
(ok, unparseable or refused: all counted), 1 some requests ended in ``error`` (re-run
to retry them), 2 unusable input (raised as an EvalkitError).
"""

from __future__ import annotations

import argparse
import gc
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from evalkit.errors import JudgeError

if TYPE_CHECKING:
    import pandas as pd

    from evalkit.judging._plan import Plan


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "judge", help="score cases with a judge (anthropic, openai, replay, baseline)"
    )
    p.add_argument(
        "--judge",
        required=True,
        help="anthropic:MODEL | openai:URL:MODEL | replay[:JUDGE] | baseline",
    )
    p.add_argument("--split", choices=("calibration", "heldout"), default="calibration")
    p.add_argument(
        "--dimensions",
        default=None,
        help="comma-separated dimensions (default: the gated dimensions)",
    )
    p.add_argument("--ledger", required=True, help="SQLite ledger file (created if missing)")
    p.add_argument(
        "--rubric",
        action="append",
        default=[],
        metavar="DIM=VERSION",
        help="rubric version for a dimension (repeatable; default: in force)",
    )
    p.add_argument("--batch", action="store_true", help="use the Message Batches API")
    p.add_argument("--max-cost", type=float, default=None, metavar="USD")
    p.add_argument(
        "--concurrency",
        type=int,
        default=8,
        help="most calls under way at once: a ceiling; the requests in flight adapt below "
        "it to the provider's rate limit (default 8)",
    )
    p.add_argument("--rpm", type=float, default=None, help="your limit: requests per minute")
    p.add_argument(
        "--input-tpm", type=float, default=None, help="your limit: input tokens per minute"
    )
    p.add_argument(
        "--output-tpm",
        type=float,
        default=None,
        help="your limit: output tokens per minute (charged from max_tokens before a call)",
    )
    p.add_argument(
        "--deadline",
        type=float,
        default=None,
        metavar="SECONDS",
        help="stop waiting after this many seconds of sending: calls still waiting for "
        "their turn are recorded as error (a re-run sends them); default none",
    )
    p.add_argument("--yes", action="store_true", help="send paid calls without asking")
    p.add_argument(
        "--exact-estimate",
        action="store_true",
        help="before asking, count input tokens with the provider's counting endpoint "
        "(anthropic: messages.count_tokens on up to 8 requests). This sends those "
        "transcripts to the provider: passing it is consent to that, though not to judging",
    )
    p.add_argument(
        "--call-deadline",
        type=float,
        default=None,
        metavar="SECONDS",
        help="wall-clock limit of one HTTP attempt, however slowly the answer trickles "
        "in; then it is retried like a timeout (default 120)",
    )
    p.add_argument("--catalogue", default="catalogues", help="catalogue folder")
    p.add_argument(
        "--turns",
        choices=("final", "all"),
        default="final",
        help="score the final assistant turn, or every assistant turn",
    )
    p.add_argument(
        "--separate",
        action="store_true",
        help="one call per dimension instead of one call per case",
    )
    p.add_argument(
        "--import-jsonl",
        default=None,
        metavar="PATH",
        help="import a JSONL export into the ledger first (e.g. for replay)",
    )
    p.add_argument(
        "--export-jsonl",
        default=None,
        metavar="PATH",
        help="export the whole ledger to JSONL afterwards",
    )
    p.add_argument(
        "--samples",
        type=int,
        default=1,
        metavar="K",
        help="ask each request K times (the repeat index is part of the key; a re-run pays "
        "nothing twice); the gate reports how stable the verdict is across them",
    )
    p.add_argument(
        "--export-batch",
        default=None,
        metavar="FILE",
        help="write the requests the ledger lacks as a batch input file and send nothing",
    )
    p.add_argument(
        "--batch-format",
        choices=("anthropic", "openai"),
        default=None,
        help="format of --export-batch: anthropic (Message Batches) or openai (OpenAI Batch "
        "API, vLLM run_batch); default: the judge's own",
    )
    p.add_argument(
        "--import-batch",
        default=None,
        metavar="FILE",
        help="record a batch output file (either format) through the strict answer parser; "
        "a malformed file records nothing (exit 2)",
    )
    p.add_argument(
        "--allow-floating-model",
        action="store_true",
        help="accept a floating model alias (never for gate evidence)",
    )
    p.add_argument(
        "--batch-poll", type=float, default=30.0, metavar="SECONDS", help=argparse.SUPPRESS
    )
    p.add_argument("--quiet", action="store_true", help="no plan (stdout) or progress (stderr)")
    p.set_defaults(func=run)


def _rubrics(pairs: list[str]) -> dict[str, str]:
    out = {}
    for pair in pairs:
        dim, sep, version = pair.partition("=")
        if not sep or not dim or not version:
            raise JudgeError(f"--rubric {pair!r}: expected DIMENSION=VERSION, e.g. self_harm=v1")
        out[dim.strip()] = version.strip()
    return out


def _confirm(assume_yes: bool) -> Any:
    def confirm(plan: Plan) -> bool:
        if assume_yes:
            return True
        if not sys.stdin.isatty():
            raise JudgeError(
                f"{len(plan.to_send)} call(s) to a networked judge are planned; "
                "pass --yes to send them"
            )
        answer = input(f"Send {len(plan.to_send)} call(s)? [y/N] ")
        return answer.strip().lower() in ("y", "yes")

    return confirm


def _batch_files(args: argparse.Namespace, catalogue: Any, cases: Any, dims: Any) -> int:
    """``--export-batch`` / ``--import-batch``: files out or in, nothing sent."""
    from evalkit.judging._batch_files import export_batch, import_batch

    if args.export_batch and args.import_batch:
        raise JudgeError("--export-batch and --import-batch: one at a time")
    common: dict[str, Any] = {
        "judge": args.judge,
        "ledger": args.ledger,
        "rubric_versions": _rubrics(args.rubric),
        "turns": args.turns,
        "together": not args.separate,
        "samples": args.samples,
    }
    if args.export_batch:
        fmt: Literal["anthropic", "openai"] = args.batch_format or (
            "openai" if args.judge.startswith("openai:") else "anthropic"
        )
        n = export_batch(catalogue, cases, dims, path=args.export_batch, batch_format=fmt, **common)
        print(f"wrote {n} request(s) to {args.export_batch} ({fmt} batch input); nothing sent")
        return 0
    if args.batch_format:
        raise JudgeError("--batch-format is for --export-batch; an import reads either format")
    counts = import_batch(catalogue, cases, dims, path=args.import_batch, **common)
    print(f"imported {args.import_batch}: {counts} (recorded in {args.ledger})")
    return 0


def summary_table(frame: pd.DataFrame) -> pd.DataFrame:
    """Per dimension: requests by status and answered bins."""
    import pandas as pd  # here, not at the top: ``evalkit judge --help`` starts fast

    if frame.empty:
        return pd.DataFrame()
    status = pd.crosstab(frame["dimension"], frame["status"])
    bins = pd.crosstab(frame["dimension"], frame["bin"].fillna("-"))
    bins = bins.drop(columns="-", errors="ignore")
    return status.join(bins.add_prefix("bin:"), how="left").fillna(0).astype(int)


def _check_export_path(path: Path) -> None:
    """Refuse an ``--export-jsonl`` target that cannot be written, before anything is paid."""
    if path.is_dir():
        raise JudgeError(f"--export-jsonl {path}: a folder; name a .jsonl file")
    blocking = next((p for p in path.parents if p.exists() and not p.is_dir()), None)
    if blocking is not None:
        raise JudgeError(f"--export-jsonl {path}: {blocking} is a file, not a folder")


@contextmanager
def _starting() -> Iterator[None]:
    """Run the block with the cyclic garbage collector off, then freeze what it loaded.

    Importing the Anthropic SDK and pandas creates objects by the hundred thousand, and
    each collection during the imports traverses all of them to find nothing; frozen,
    they are also skipped by every later collection and at exit. About 0.6-0.9 s of CPU
    before the first request and after the last (``bench_judge_throughput.py --cli``).
    For this process only: the library (notebooks) never freezes anything.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
        gc.freeze()


def run(args: argparse.Namespace) -> int:
    # Imported here, not at the top, so that ``evalkit judge --help`` starts fast.
    with _starting():
        import pandas as pd

        from evalkit.catalogue import load
        from evalkit.judge._backends import import_backend
        from evalkit.judging._run import judge_cases
        from evalkit.ledger._load import import_jsonl
        from evalkit.ledger._store import Ledger

        import_backend(args.judge)
        catalogue = load(args.catalogue)
    if args.export_jsonl:
        _check_export_path(Path(args.export_jsonl))
    if not catalogue.ratification.ratified:
        # The answers are recorded either way (they cost money); the gate will refuse them
        # as evidence until the constants are ratified (ADR-0013).
        print(f"warning: {catalogue.ratification.reason()}", file=sys.stderr)
    if args.import_jsonl:
        counts = import_jsonl(args.ledger, args.import_jsonl, catalogue=catalogue)
        print(f"imported {args.import_jsonl}: {counts}", file=sys.stderr)
    dims = [d.strip() for d in args.dimensions.split(",") if d.strip()] if args.dimensions else None
    cases = catalogue.split(args.split)
    if not cases:
        raise JudgeError(f"no {args.split} cases in {args.catalogue}")
    if args.export_batch or args.import_batch:
        return _batch_files(args, catalogue, cases, dims)
    frame = judge_cases(
        catalogue,
        cases,
        dims,
        judge=args.judge,
        ledger=args.ledger,
        rubric_versions=_rubrics(args.rubric),
        turns=args.turns,
        together=not args.separate,
        concurrency=args.concurrency,
        max_cost=args.max_cost,
        batch=args.batch,
        progress=not args.quiet,
        for_gate=not args.allow_floating_model,
        confirm=_confirm(args.yes),
        batch_poll_interval=args.batch_poll,
        exact_estimate=args.exact_estimate,
        call_deadline=args.call_deadline,
        rpm=args.rpm,
        input_tpm=args.input_tpm,
        output_tpm=args.output_tpm,
        deadline=args.deadline,
        samples=args.samples,
    )
    if args.export_jsonl:
        with Ledger(args.ledger) as led:
            n = led.export_jsonl(args.export_jsonl)
        print(f"exported {n} request(s) to {args.export_jsonl}", file=sys.stderr)
    with pd.option_context("display.width", 120):
        print(summary_table(frame).to_string())
    requests = frame.drop_duplicates("request_key")
    spend = requests["cost_usd"].sum(min_count=1)
    unknown = int(requests["cost_usd"].isna().sum())
    of_unknown = f" + {unknown} of unknown cost" if 0 < unknown < len(requests) else ""
    print(
        f"{len(requests)} request(s); recorded spend ${0.0 if pd.isna(spend) else spend:.4f}"
        f"{of_unknown} (recorded in {args.ledger})"
    )
    errors = int((requests["status"] == "error").sum())
    if errors:
        print(f"{errors} request(s) ended in error; re-run to retry them", file=sys.stderr)
        return 1
    return 0
