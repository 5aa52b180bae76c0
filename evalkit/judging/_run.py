"""Orchestration: plan the requests, skip what the ledger holds, send the rest, record.

:func:`judge_cases` is the one entry point for the CLI and for notebooks. It builds
every request (case x scored turn x dimension group), looks each key up in the
ledger, estimates the cost of what remains, and only then sends anything. Rows with
status ``ok``, ``unparseable`` or ``refused`` are never sent again; ``error`` rows are.
Each answer is parsed strictly; an unparseable one is asked again up to
``max_parse_retries`` times and then stored as ``unparseable`` with the last raw
answer and every attempt's problem. A refusal is stored as ``refused`` at once.

Consent comes before traffic: the plan's estimate is local (nothing leaves the machine)
until the caller has agreed to send, by ``confirm`` returning True (or passing no
``confirm``), or by ``exact_estimate=True``, which is consent to send the transcripts to
the provider's token-counting endpoint (and to nothing else) before asking. With
``max_cost``, the local estimate must fit before anything is sent, and once sending
is agreed a backend that can count tokens counts them and the count must fit too.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from evalkit.catalogue import Case, Catalogue
from evalkit.errors import JudgeError
from evalkit.judge._backends import make_backend
from evalkit.judge._base import Backend
from evalkit.judge._prompt import JudgeIdentity, JudgeParams
from evalkit.judge._requests import Turns, build_requests, dimensions_to_judge
from evalkit.judge.replay import REPLAY_MODEL, replay_filter, resolve_replay
from evalkit.judging._batches import run_batches
from evalkit.judging._plan import Plan, _require_sealed
from evalkit.judging._progress import _Progress
from evalkit.judging._send import run_direct
from evalkit.judging._sharing import send_sharing
from evalkit.judging._takeover import LeasedTraffic
from evalkit.ledger._lease import Leaseholder
from evalkit.ledger._records import FINAL_STATUSES
from evalkit.ledger._store import Ledger
from evalkit.secrets import scrub
from evalkit.traffic import Limits, TrafficController


def _frame(ledger: Ledger, keys: Sequence[str]) -> pd.DataFrame:
    order = {k: i for i, k in enumerate(dict.fromkeys(keys))}
    frame = ledger.frame(list(order))
    frame = frame.assign(_o=frame["request_key"].map(order)).sort_values("_o", kind="stable")
    return frame.drop(columns="_o").reset_index(drop=True)


async def ajudge_cases(
    catalogue: Catalogue,
    cases: Sequence[Case | str] | None = None,
    dimensions: Sequence[str] | None = None,
    *,
    judge: str = "baseline",
    ledger: str | Path,
    rubric_versions: dict[str, str] | None = None,
    turns: Turns = "final",
    together: bool = True,
    concurrency: int = 8,
    max_cost: float | None = None,
    batch: bool = False,
    progress: bool = True,
    for_gate: bool = False,
    params: JudgeParams | None = None,
    backend: Backend | None = None,
    confirm: Callable[[Plan], bool] | None = None,
    max_parse_retries: int = 2,
    batch_poll_interval: float = 30.0,
    batch_timeout: float | None = None,
    plan_only: bool = False,
    exact_estimate: bool = False,
    call_deadline: float | None = None,
    rpm: float | None = None,
    input_tpm: float | None = None,
    output_tpm: float | None = None,
    deadline: float | None = None,
    samples: int = 1,
) -> pd.DataFrame:
    """Async form of :func:`judge_cases` (same arguments)."""
    limits = _limits(rpm, input_tpm, output_tpm, deadline, concurrency)
    case_list = [
        catalogue.case(c) if isinstance(c, str) else c
        for c in (catalogue.split("calibration") if cases is None else cases)
    ]
    seal = _require_sealed(catalogue) if any(c.split == "heldout" for c in case_list) else None
    dims = dimensions_to_judge(catalogue, dimensions, rubric_versions)
    if backend is None:
        backend = make_backend(
            judge, catalogue, for_gate=for_gate, params=params, call_deadline=call_deadline
        )
    if backend is not None:
        identity = JudgeIdentity(backend.spec, backend.kind, backend.model, backend.params)
        backend_obj: Backend = backend
    else:
        identity = JudgeIdentity(judge, "replay", REPLAY_MODEL, params or JudgeParams())
    if batch and (backend is None or not hasattr(backend, "submit_batch")):
        raise JudgeError(f"--batch needs the anthropic backend, not {judge!r}")
    out = sys.stdout
    with Ledger(ledger) as led:
        requests = build_requests(
            catalogue,
            case_list,
            dims,
            identity,
            led.salt,
            rubric_versions=rubric_versions,
            turns=turns,
            together=together,
            seal=seal,
            samples=samples,
        )
        if backend is None:
            keys = resolve_replay(led, requests, replay_filter(judge))
            if progress:
                line = f"judge {judge}: {len(keys)} request(s) replayed from {ledger}"
                print(scrub(line), file=out)
            return _frame(led, keys)
        statuses = led.statuses(r.key for r in requests)
        pending = led.awaited(backend_obj.spec)  # in an open batch, or a batch being made
        waiting = pending & {r.key for r in requests} - set(statuses)
        if waiting and not batch:
            raise JudgeError(
                f"{len(waiting)} request(s) are awaited in an open Message Batch of "
                f"{backend_obj.spec}; re-run with --batch to collect them instead of paying twice"
            )
        to_send = [
            r
            for r in requests
            if statuses.get(r.key) not in FINAL_STATUSES and r.key not in pending
        ]
        plan = Plan(
            judge=backend_obj.spec,
            requests=requests,
            in_ledger=sum(s in FINAL_STATUSES for s in statuses.values()),
            errors_to_retry=sum(statuses.get(r.key) == "error" for r in to_send),
            to_send=to_send,
            pending_in_batches=len(pending - set(statuses)),
        )
        try:
            count = getattr(backend_obj, "exact_estimate", None) if to_send else None
            if to_send:
                backend_obj.batch_mode = batch
                plan.estimate = await backend_obj.estimate(to_send)  # local: nothing sent
                if exact_estimate and count is not None:  # asked for: consent to count
                    plan.estimate = await count(to_send)
                    count = None  # counted once is enough
            if progress or plan_only:  # the plan is output, not an error: stdout
                print(scrub(plan.summary()), file=out, flush=True)
            if plan_only:
                return _frame(led, [])
            _hold_to_budget(plan, max_cost)
            if to_send and backend_obj.networked and confirm is not None and not confirm(plan):
                raise JudgeError("not confirmed; nothing sent")
            if count is not None and max_cost is not None:  # consented: count, for the budget
                plan.estimate = await count(to_send)
                if progress:
                    print(plan.estimate_line(), file=out, flush=True)
                _hold_to_budget(plan, max_cost)
            holder = None if batch else Leaseholder(led)  # a batch run makes its own
            traffic = (
                TrafficController(ceiling=concurrency, limits=limits, deadline=deadline)
                if holder is None  # each attempt re-checks its lease (ADR-0032)
                else LeasedTraffic(holder, ceiling=concurrency, limits=limits, deadline=deadline)
            )
            bar = _Progress(plan, progress, traffic=None if batch else traffic)
            if batch:
                await run_batches(
                    backend_obj,
                    led,
                    plan,
                    bar,
                    max_parse_retries,
                    batch_poll_interval,
                    batch_timeout,
                )
            elif to_send and holder is not None:
                await send_sharing(  # other processes on this ledger: ADR-0019
                    holder,
                    plan,
                    lambda p: run_direct(
                        backend_obj, led, p, bar, traffic, max_cost, max_parse_retries
                    ),
                )
            if bar.total:
                bar.show(final=True)
            bar.close()
        finally:
            await backend_obj.aclose()
        return _frame(led, [r.key for r in requests])


def _limits(
    rpm: float | None,
    input_tpm: float | None,
    output_tpm: float | None,
    deadline: float | None,
    concurrency: int,
) -> Limits:
    """The user's traffic limits, checked before anything is planned or sent."""
    if isinstance(concurrency, bool) or not isinstance(concurrency, int) or concurrency < 1:
        raise JudgeError(f"--concurrency {concurrency!r} is not a whole number >= 1")
    if deadline is not None and not deadline > 0:
        raise JudgeError(f"--deadline {deadline!r} s is not positive")
    try:
        return Limits(rpm=rpm, input_tpm=input_tpm, output_tpm=output_tpm)
    except ValueError as exc:
        raise JudgeError(str(exc)) from None


def _hold_to_budget(plan: Plan, max_cost: float | None) -> None:
    """JudgeError unless the plan's estimate fits ``max_cost`` (nothing to send fits)."""
    if not plan.to_send or max_cost is None:
        return
    cost = plan.estimate.cost_usd if plan.estimate else None
    if cost is None:
        raise JudgeError("cannot hold the run to --max-cost: the model's price is unknown")
    if cost > max_cost:
        raise JudgeError(
            f"estimated cost ${cost:.4f} is over --max-cost ${max_cost:g}; no judge call sent"
        )


def judge_cases(
    catalogue: Catalogue,
    cases: Sequence[Case | str] | None = None,
    dimensions: Sequence[str] | None = None,
    *,
    judge: str = "baseline",
    ledger: str | Path,
    rubric_versions: dict[str, str] | None = None,
    turns: Turns = "final",
    together: bool = True,
    concurrency: int = 8,
    max_cost: float | None = None,
    batch: bool = False,
    progress: bool = True,
    for_gate: bool = False,
    params: JudgeParams | None = None,
    backend: Backend | None = None,
    confirm: Callable[[Plan], bool] | None = None,
    max_parse_retries: int = 2,
    batch_poll_interval: float = 30.0,
    batch_timeout: float | None = None,
    plan_only: bool = False,
    exact_estimate: bool = False,
    call_deadline: float | None = None,
    rpm: float | None = None,
    input_tpm: float | None = None,
    output_tpm: float | None = None,
    deadline: float | None = None,
    samples: int = 1,
) -> pd.DataFrame:
    """Judge ``cases`` on ``dimensions``; return the long frame of their ledger rows.

    Arguments:

    * ``cases``: Case objects or ids (default: the calibration split; held-out cases
      need sealed labels). ``dimensions``: default the gated dimensions, or, when
      ``rubric_versions`` asks for a version other than the one in force, only the
      dimension(s) it varies (the others' answers would not change).
    * ``judge``: ``baseline``, ``anthropic:MODEL``, ``openai:URL:MODEL``, ``replay`` or
      ``replay:JUDGE``; ``backend``: a backend object instead (tests, custom clients).
    * ``ledger``: the SQLite ledger path (created if missing).
    * ``rubric_versions``: {dimension: version}, default the rubrics in force. A request
      scores every dimension it names in one call (``together``), so the key of a varied
      dimension judged alone differs from one judged beside the others: pass
      ``dimensions`` to match answers recorded that way.
    * ``turns``: ``final``, ``all`` (every assistant turn, each judged on the prefix
      ending with it) or explicit turn indices.
    * ``together``: score a case's dimensions in one call (False: one call each).
    * ``max_cost``: USD; the estimate must fit, and sending stops once spend passes it
      (a call whose cost is unknown counts as the plan's estimate per call).
    * ``batch``: use Message Batches (``batch_poll_interval``, ``batch_timeout``).
    * ``for_gate``: refuse floating model aliases. ``confirm``: called with the
      :class:`Plan` before anything is sent to a networked judge; False aborts.
    * ``plan_only``: print the plan and send nothing (but see ``exact_estimate``).
    * ``exact_estimate``: count input tokens with the provider's counting endpoint
      before ``confirm`` (Anthropic: ``messages.count_tokens`` on up to 8 requests);
      this sends those transcripts, so passing it is consent to that.
    * ``call_deadline``: wall-clock seconds per HTTP attempt (default 120); an attempt
      that has no complete answer by then is retried like a timeout.
    * ``concurrency``: the most calls under way at once, a ceiling: the traffic
      controller (:mod:`evalkit.traffic`) adapts the requests in flight below it and
      paces to the provider's rate-limit headers. ``rpm``, ``input_tpm``,
      ``output_tpm``: the user's own per-minute limits (the lower one binds). A 429
      waits for its turn and is sent again, outside the per-call retry budget.
    * ``deadline``: seconds the sending may take (default none); when it passes, calls
      still waiting for their turn (or for a retry) are recorded as ``error`` naming
      the deadline, so a re-run sends exactly those; requests in flight finish.
    * ``samples``: ask each request that many times (ADR-0027); the repeat index is part
      of the key, so a re-run sends nothing twice. The gate reads the repeats together
      (modal bin, ties to the lower) and reports their stability.

    The plan ("N to send", the estimate) is printed on stdout, progress on stderr.

    A server that refuses 5 connections in a row stops the run with a
    :class:`~evalkit.judge._base.ServerUnreachable` (a JudgeError naming its URL);
    answers received are in the ledger, calls not sent are not.

    Rows already final in the ledger are never sent again. Works inside a running
    event loop (Jupyter) by running in a worker thread. Returns the frame of
    :func:`evalkit.judge.load_ledger` for the planned requests, in request order.
    """
    options: dict[str, Any] = {
        "judge": judge, "ledger": ledger, "rubric_versions": rubric_versions, "turns": turns,
        "together": together, "concurrency": concurrency, "max_cost": max_cost,
        "batch": batch, "progress": progress, "for_gate": for_gate, "params": params,
        "backend": backend, "confirm": confirm, "max_parse_retries": max_parse_retries,
        "batch_poll_interval": batch_poll_interval, "batch_timeout": batch_timeout,
        "plan_only": plan_only, "exact_estimate": exact_estimate,
        "call_deadline": call_deadline, "rpm": rpm, "input_tpm": input_tpm,
        "output_tpm": output_tpm, "deadline": deadline, "samples": samples,
    }  # fmt: skip

    def run() -> pd.DataFrame:
        return asyncio.run(ajudge_cases(catalogue, cases, dimensions, **options))

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return run()
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(run).result()
