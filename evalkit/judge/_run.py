"""Orchestration: plan the requests, skip what the ledger holds, send the rest, record.

:func:`judge_cases` is the one entry point for the CLI and for notebooks. It builds
every request (case x scored turn x dimension group), looks each key up in the
ledger, estimates the cost of what remains, and only then sends anything. Rows with
status ``ok``, ``unparseable`` or ``refused`` are never sent again; ``error`` rows are.
Each answer is parsed strictly; an unparseable one is asked again up to
``max_parse_retries`` times and then stored as ``unparseable`` with the last raw
answer and every attempt's problem. A refusal is stored as ``refused`` at once.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from evalkit.catalogue import Case, Catalogue
from evalkit.errors import JudgeError
from evalkit.judge._answer import AnswerError, parse_scores
from evalkit.judge._base import Backend, Reply, Usage, dumps_body
from evalkit.judge._ledger import Ledger, now_iso
from evalkit.judge._plan import (
    Plan,
    Turns,
    _Progress,
    _require_sealed,
    build_requests,
    make_backend,
)
from evalkit.judge._prompt import JudgeIdentity, JudgeParams, JudgeRequest
from evalkit.judge._records import FINAL_STATUSES
from evalkit.judge.replay import REPLAY_MODEL, replay_filter, resolve_replay

BATCH_CHUNK = 10_000


def _record(
    meta: dict[str, Any],
    status: str,
    *,
    usage: Usage,
    attempts: int,
    latency_s: float,
    raw: str | None = None,
    problem: str | None = None,
    error: str | None = None,
    response_model: str | None = None,
    batch_id: str | None = None,
    results: Sequence[dict[str, Any]] = (),
) -> dict[str, Any]:
    rec = {k: v for k, v in meta.items() if k not in ("turn_ids", "bins")}
    rec.update(
        status=status,
        attempts=attempts,
        raw_response=raw,
        problem=problem,
        error=error,
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        cache_read_tokens=usage.cache_read_tokens,
        cache_creation_tokens=usage.cache_creation_tokens,
        cost_usd=usage.cost_usd,
        latency_s=latency_s,
        response_model=response_model,
        batch_id=batch_id,
        created_at=now_iso(),
        results=list(results),
    )
    return rec


async def _resolve(
    backend: Backend,
    meta: dict[str, Any],
    request: JudgeRequest | None,
    first: Reply | None,
    max_parse_retries: int,
    batch_id: str | None = None,
) -> dict[str, Any]:
    """Turn replies into a ledger record, re-asking on unparseable answers."""
    usage, attempts, latency, problems = Usage(), 0, 0.0, []
    reply = first
    for i in range(1 + max_parse_retries):
        if reply is None:
            if request is None:
                break
            reply = await backend.call(request)
        attempts += reply.attempts
        usage.add(reply.usage)
        latency += reply.latency_s
        common: dict[str, Any] = {
            "usage": usage,
            "attempts": attempts,
            "latency_s": latency,
            "raw": reply.raw,
            "response_model": reply.response_model,
            "batch_id": batch_id,
        }
        if reply.kind == "error":
            return _record(meta, "error", error=reply.error, **common)
        if reply.kind == "refusal":
            return _record(meta, "refused", **common)
        problem = reply.problem
        if problem is None:
            try:
                scores = parse_scores(
                    reply.payload,
                    dimensions=[d["dimension"] for d in meta["dimensions"]],
                    bins=meta["bins"],
                    turn_ids=meta["turn_ids"],
                    presence_gated={
                        d["dimension"]: d["presence_gated"] for d in meta["dimensions"]
                    },
                )
                if reply.raw is None:
                    common["raw"] = dumps_body(reply.payload)
                return _record(meta, "ok", results=[s.to_json() for s in scores], **common)
            except AnswerError as exc:
                problem = str(exc)
        problems.append(f"attempt {i + 1}: {problem}")
        if reply.raw is None and reply.payload is not None:
            common["raw"] = dumps_body(reply.payload)
        reply = None
    return _record(meta, "unparseable", problem="; ".join(problems), **common)


async def _run_direct(
    backend: Backend,
    ledger: Ledger,
    plan: Plan,
    progress: _Progress,
    concurrency: int,
    max_cost: float | None,
    max_parse_retries: int,
) -> None:
    sem = asyncio.Semaphore(max(1, concurrency))
    over_budget = False

    async def one(req: JudgeRequest) -> None:
        nonlocal over_budget
        async with sem:
            if over_budget:
                return
            rec = await _resolve(backend, req.metadata(), req, None, max_parse_retries)
            ledger.record(rec)
            progress.update(rec)
            if max_cost is not None and progress.spend is not None and progress.spend > max_cost:
                over_budget = True

    await asyncio.gather(*(one(r) for r in plan.to_send))
    if over_budget:
        raise JudgeError(
            f"spend passed --max-cost ${max_cost}; stopped sending. What was answered is in "
            "the ledger; re-run with a higher budget to finish"
        )


async def _run_batches(
    backend: Any,
    ledger: Ledger,
    plan: Plan,
    progress: _Progress,
    max_parse_retries: int,
    poll_interval: float,
    batch_timeout: float | None,
) -> None:
    open_batches = ledger.open_batches(backend.spec)
    waiting = {k for items in open_batches.values() for k in items}
    new = [r for r in plan.to_send if r.key not in waiting]
    for i in range(0, len(new), BATCH_CHUNK):
        chunk = new[i : i + BATCH_CHUNK]
        batch_id = await backend.submit_batch(chunk)
        items = {r.key: r.metadata() for r in chunk}
        ledger.add_batch(batch_id, backend.spec, items)
        open_batches[batch_id] = items
    by_key = {r.key: r for r in plan.requests}
    started = time.monotonic()
    while open_batches:
        for batch_id in list(open_batches):
            if await backend.batch_status(batch_id) != "ended":
                continue
            replies = await backend.batch_results(batch_id)
            # A crash while collecting leaves the batch open with some items recorded:
            # those are final and must not be asked again (nor paid for twice).
            recorded = ledger.statuses(open_batches[batch_id])
            for key, meta in open_batches[batch_id].items():
                if recorded.get(key) in FINAL_STATUSES:
                    continue
                first = replies.get(key) or Reply("error", error="no result in the batch")
                rec = await _resolve(
                    backend, meta, by_key.get(key), first, max_parse_retries, batch_id
                )
                ledger.record(rec)
                progress.update(rec)
            ledger.close_batch(batch_id)
            del open_batches[batch_id]
        if open_batches:
            if batch_timeout is not None and time.monotonic() - started > batch_timeout:
                ids = ", ".join(open_batches)
                raise JudgeError(
                    f"batch(es) {ids} still in progress after {batch_timeout:g} s; re-run the "
                    "same command to resume polling (nothing will be resubmitted)"
                )
            await asyncio.sleep(poll_interval)


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
) -> pd.DataFrame:
    """Async form of :func:`judge_cases` (same arguments)."""
    case_list = [
        catalogue.case(c) if isinstance(c, str) else c
        for c in (catalogue.split("calibration") if cases is None else cases)
    ]
    if any(c.split == "heldout" for c in case_list):
        _require_sealed(catalogue)
    dims = list(dimensions or catalogue.constants.gated_dimensions)
    if backend is None:
        backend = make_backend(judge, catalogue, for_gate=for_gate, params=params)
    if backend is not None:
        identity = JudgeIdentity(backend.spec, backend.kind, backend.model, backend.params)
        backend_obj: Backend = backend
    else:
        identity = JudgeIdentity(judge, "replay", REPLAY_MODEL, params or JudgeParams())
    if batch and (backend is None or not hasattr(backend, "submit_batch")):
        raise JudgeError(f"--batch needs the anthropic backend, not {judge!r}")
    err = sys.stderr
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
        )
        if backend is None:
            keys = resolve_replay(led, requests, replay_filter(judge))
            if progress:
                print(f"judge {judge}: {len(keys)} request(s) replayed from {ledger}", file=err)
            return _frame(led, keys)
        statuses = led.statuses(r.key for r in requests)
        pending: set[str] = set()
        for items in led.open_batches(backend_obj.spec).values():
            pending |= set(items)
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
            if to_send:
                backend_obj.batch_mode = batch
                plan.estimate = await backend_obj.estimate(to_send)
            if progress or plan_only:
                print(plan.summary(), file=err)
            if plan_only:
                return _frame(led, [])
            if to_send and max_cost is not None:
                cost = plan.estimate.cost_usd if plan.estimate else None
                if cost is None:
                    raise JudgeError(
                        "cannot hold the run to --max-cost: the model's price is unknown"
                    )
                if cost > max_cost:
                    raise JudgeError(
                        f"estimated cost ${cost:.4f} is over --max-cost ${max_cost:g}; nothing sent"
                    )
            if to_send and backend_obj.networked and confirm is not None and not confirm(plan):
                raise JudgeError("not confirmed; nothing sent")
            bar = _Progress(plan, progress)
            if batch:
                await _run_batches(
                    backend_obj,
                    led,
                    plan,
                    bar,
                    max_parse_retries,
                    batch_poll_interval,
                    batch_timeout,
                )
            elif to_send:
                await _run_direct(
                    backend_obj, led, plan, bar, concurrency, max_cost, max_parse_retries
                )
            if bar.total:
                bar.show(final=True)
        finally:
            await backend_obj.aclose()
        return _frame(led, [r.key for r in requests])


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
) -> pd.DataFrame:
    """Judge ``cases`` on ``dimensions``; return the long frame of their ledger rows.

    Arguments:

    * ``cases``: Case objects or ids (default: the calibration split; held-out cases
      need sealed labels). ``dimensions``: default the gated dimensions.
    * ``judge``: ``baseline``, ``anthropic:MODEL``, ``openai:URL:MODEL``, ``replay`` or
      ``replay:JUDGE``; ``backend``: a backend object instead (tests, custom clients).
    * ``ledger``: the SQLite ledger path (created if missing).
    * ``rubric_versions``: {dimension: version}, default the rubrics in force.
    * ``turns``: ``final``, ``all`` (every assistant turn, each judged on the prefix
      ending with it) or explicit turn indices.
    * ``together``: score a case's dimensions in one call (False: one call each).
    * ``max_cost``: USD; the estimate must fit, and sending stops once spend passes it.
    * ``batch``: use Message Batches (``batch_poll_interval``, ``batch_timeout``).
    * ``for_gate``: refuse floating model aliases. ``confirm``: called with the
      :class:`Plan` before calls to a networked judge; False aborts.
    * ``plan_only``: print the plan and send nothing.

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
        "plan_only": plan_only,
    }  # fmt: skip

    def run() -> pd.DataFrame:
        return asyncio.run(ajudge_cases(catalogue, cases, dimensions, **options))

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return run()
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(run).result()
