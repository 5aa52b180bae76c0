"""Sending and recording: direct calls through the traffic controller.

Every answer is resolved (parsed strictly, asked again up to ``max_parse_retries`` times
when unparseable) and recorded in the ledger as soon as it arrives, so a process killed
at any moment loses at most the calls in flight. Each direct request is leased before
it is sent (:mod:`evalkit.ledger._lease`), and its lease is confirmed again before
every further attempt and before its answer is recorded: a request another process
took over while this one was suspended is neither sent again nor recorded by this one,
and stderr says it was sent twice (ADR-0032). Message Batches are in
:mod:`evalkit.judging._batches`.

A direct run stops early, with a :class:`JudgeError`, when the spend passes
``max_cost`` (a call of unknown cost counts as the plan's estimate per call) or when
the backend takes its server for dead (:class:`ServerUnreachable`): calls not sent then
stay unrecorded, so a re-run sends exactly those.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Sequence
from contextlib import nullcontext
from typing import Any

from evalkit.errors import JudgeError
from evalkit.judge._answer import AnswerError, parse_scores
from evalkit.judge._base import Backend, Reply, ServerUnreachable, Usage, dumps_body
from evalkit.judge._prompt import JudgeRequest
from evalkit.judging._plan import Plan
from evalkit.judging._progress import _Progress
from evalkit.judging._takeover import sending
from evalkit.ledger._lease import LeaseLost
from evalkit.ledger._schema import now_iso
from evalkit.ledger._store import Ledger
from evalkit.traffic import SendingStopped, TrafficController


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

    :class:`ServerUnreachable` (and :class:`~evalkit.traffic.SendingStopped`) from the
    backend propagates; when it cuts off a re-ask, the answers already paid for ride
    along as an ``error`` record in its ``answered``.
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
            except (ServerUnreachable, SendingStopped) as exc:
                if attempts:
                    why = "server unreachable" if isinstance(exc, ServerUnreachable) else str(exc)
                    error = "; ".join([*problems, f"re-ask not sent: {why}"])
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
    traffic: TrafficController,
    max_cost: float | None,
    max_parse_retries: int,
) -> None:
    """Send ``plan.to_send`` through ``traffic``, the run's controller (see the module
    docstring for the two ways a run stops early).

    At most ``traffic``'s ceiling of calls are under way at once; how many of their
    requests are in flight, and how fast they start, is the controller's to decide. A
    call that finds the run stopped while it waits is not sent and not recorded; one
    that finds the deadline passed is recorded as ``error`` (a re-run sends it).
    """
    if hasattr(backend, "traffic"):
        backend.traffic = traffic
    over_budget = False
    unreachable: ServerUnreachable | None = None
    per_call = plan.cost_per_call()
    queue = iter(plan.to_send)

    def record(rec: dict[str, Any]) -> None:
        nonlocal over_budget
        try:
            ledger.record(rec)
        except LeaseLost as exc:  # taken over while this process was suspended: not
            print(f"warning: {exc}", file=sys.stderr, flush=True)  # recorded, but paid
        progress.update(rec)  # so it counts toward --max-cost all the same
        spent = progress.spend + progress.unknown_cost * per_call
        if max_cost is not None and spent > max_cost and not over_budget:
            over_budget = True
            traffic.stop("spend passed --max-cost")

    async def worker() -> None:
        nonlocal unreachable
        for req in queue:
            if over_budget or unreachable is not None:
                return
            holder = ledger.leases
            if holder is not None and not holder.claim(req.key):
                continue  # another process sends it, or has answered it (ADR-0019)
            try:
                with nullcontext() if holder is None else sending(req.key):
                    rec = await _resolve(backend, req.metadata(), req, None, max_parse_retries)
            except LeaseLost as exc:  # re-checked before a further attempt (ADR-0032)
                print(f"warning: {exc}", file=sys.stderr, flush=True)
                continue
            except SendingStopped as exc:
                if exc.answered is not None:
                    record(exc.answered)
                continue
            except ServerUnreachable as exc:
                if unreachable is None:
                    unreachable = exc
                    traffic.stop(str(exc))
                if exc.answered is not None:
                    record(exc.answered)
                return
            record(rec)

    workers = max(1, min(traffic.window.ceiling, len(plan.to_send)))
    await asyncio.gather(*(worker() for _ in range(workers)))
    if unreachable is not None:
        raise unreachable
    if over_budget:
        raise JudgeError(
            f"spend passed --max-cost ${max_cost}; stopped sending. What was answered is in "
            "the ledger; re-run with a higher budget to finish"
        )
