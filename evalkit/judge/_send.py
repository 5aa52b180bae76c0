"""Sending and recording: direct calls with bounded concurrency, and Message Batches.

Every answer is resolved (parsed strictly, asked again up to ``max_parse_retries`` times
when unparseable) and recorded in the ledger as soon as it arrives, so a process killed
at any moment loses at most the calls in flight. Batches are recorded in the ledger
before polling, and items a crashed collection already recorded are never asked again.

A direct run stops early, with a :class:`JudgeError`, when the spend passes
``max_cost`` (a call of unknown cost counts as the plan's estimate per call) or when
the backend takes its server for dead (:class:`ServerUnreachable`): calls not sent then
stay unrecorded, so a re-run sends exactly those.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from typing import Any

from evalkit.errors import JudgeError
from evalkit.judge._answer import AnswerError, parse_scores
from evalkit.judge._base import Backend, Reply, ServerUnreachable, Usage, dumps_body
from evalkit.judge._ledger import Ledger, now_iso
from evalkit.judge._plan import (
    Plan,
    _Progress,
)
from evalkit.judge._prompt import JudgeRequest
from evalkit.judge._records import FINAL_STATUSES

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
    """Turn replies into a ledger record, re-asking on unparseable answers.

    :class:`ServerUnreachable` from the backend propagates; when it cuts off a re-ask,
    the answers already paid for ride along as an ``error`` record in its ``answered``.
    """
    usage, attempts, latency = Usage(), 0, 0.0
    problems: list[str] = []
    common: dict[str, Any] = {}
    reply = first
    for i in range(1 + max_parse_retries):
        if reply is None:
            if request is None:
                break
            try:
                reply = await backend.call(request)
            except ServerUnreachable as exc:
                if attempts:
                    error = "; ".join([*problems, "re-ask not sent: server unreachable"])
                    exc.answered = _record(meta, "error", error=error, **common)
                raise
        attempts += reply.attempts
        usage.add(reply.usage)
        latency += reply.latency_s
        common = {
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


async def run_direct(
    backend: Backend,
    ledger: Ledger,
    plan: Plan,
    progress: _Progress,
    concurrency: int,
    max_cost: float | None,
    max_parse_retries: int,
) -> None:
    """Send ``plan.to_send`` with at most ``concurrency`` calls in flight (see the module
    docstring for the two ways a run stops early)."""
    sem = asyncio.Semaphore(max(1, concurrency))
    over_budget = False
    unreachable: ServerUnreachable | None = None
    per_call = plan.cost_per_call()

    def record(rec: dict[str, Any]) -> None:
        nonlocal over_budget
        ledger.record(rec)
        progress.update(rec)
        spent = progress.spend + progress.unknown_cost * per_call
        if max_cost is not None and spent > max_cost:
            over_budget = True

    async def one(req: JudgeRequest) -> None:
        nonlocal unreachable
        async with sem:
            if over_budget or unreachable is not None:
                return
            try:
                rec = await _resolve(backend, req.metadata(), req, None, max_parse_retries)
            except ServerUnreachable as exc:
                unreachable = unreachable or exc
                if exc.answered is not None:
                    record(exc.answered)
                return
            record(rec)

    await asyncio.gather(*(one(r) for r in plan.to_send))
    if unreachable is not None:
        raise unreachable
    if over_budget:
        raise JudgeError(
            f"spend passed --max-cost ${max_cost}; stopped sending. What was answered is in "
            "the ledger; re-run with a higher budget to finish"
        )


async def run_batches(
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
