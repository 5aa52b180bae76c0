"""Message Batches: submit, survive a kill at any point, poll, collect, re-ask as a batch.

:func:`run_batches` is the ``--batch`` path of :func:`evalkit.judge.judge_cases`:

1. Orphaned intents first (:mod:`evalkit.ledger._intent`): an intent whose owner is gone
   is matched against the provider's batches (count, time window, then the custom ids
   in the results) and the batch adopted; an intent with no match (the create never
   reached the server) is sent again. Intents of a live process are waited for.
2. The requests to send, in batches of at most :data:`BATCH_CHUNK`, each written down as
   an intent before its create and recorded with its id (the intent deleted) after.
3. Polling every ``poll_interval`` seconds; an ended batch is collected: each answer is
   parsed and recorded as it is read (items a killed collection already recorded are
   skipped, never asked again). Unparseable answers with re-asks left are not recorded
   yet: they go out together as ONE new batch, whose intent is written in the same
   transaction that closes the collected batch; the answers already paid for ride in
   its items (``prior``: tokens, cost, attempts, problems) and are added to the final
   row, as the direct path does.

A ``batch_timeout`` (seconds, default none) ends the run with a :class:`JudgeError`
while batches are in progress; a re-run resumes them, resubmitting nothing.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from typing import Any

from evalkit.errors import JudgeError
from evalkit.judge._base import BatchInfo, Reply
from evalkit.judge._prompt import JudgeRequest
from evalkit.judging._plan import Plan
from evalkit.judging._progress import _Progress
from evalkit.judging._send import _resolve
from evalkit.ledger._intent import Intent, begin, intents, restart, take_orphans
from evalkit.ledger._lease import Leaseholder
from evalkit.ledger._records import FINAL_STATUSES
from evalkit.ledger._store import Ledger

BATCH_CHUNK = 10_000
_SUMS = ("attempts", "input_tokens", "output_tokens", "cache_read_tokens",
         "cache_creation_tokens", "latency_s")  # fmt: skip


#: Slack (seconds) around an intent's time when matching a batch's ``created_at``:
#: clock differences between this machine and the provider, and a slow create.
MATCH_SKEW_S = 600.0


def candidates(
    intent: Intent, listed: Sequence[BatchInfo], known: set[str], now: float
) -> list[BatchInfo]:
    """The listed batches that may be ``intent``'s: not in this ledger (``known``), the
    same request count, created between :data:`MATCH_SKEW_S` before the intent's time and
    that long after ``now``. Oldest first. Their results' custom ids decide."""
    lo, hi = intent.requested_at - MATCH_SKEW_S, now + MATCH_SKEW_S
    out = [
        b
        for b in listed
        if b.batch_id not in known and b.count == len(intent.items) and lo <= b.created_at <= hi
    ]
    return sorted(out, key=lambda b: (b.created_at, b.batch_id))


def _bare(meta: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in meta.items() if k != "prior"}


def merge_prior(prior: dict[str, Any] | None, rec: dict[str, Any]) -> dict[str, Any]:
    """``rec`` (the record of one batch answer) with the earlier answers of the same
    request added: attempts, tokens, latency and cost summed (cost unknown if either is),
    and for an unparseable answer every attempt's problem, numbered."""
    if not prior:
        return rec
    out = dict(rec)
    for f in _SUMS:
        out[f] = rec[f] + prior[f]
    cost = prior["cost_usd"]
    out["cost_usd"] = None if cost is None or rec["cost_usd"] is None else cost + rec["cost_usd"]
    if rec["status"] == "unparseable":
        # a one-attempt resolve numbers its only problem "attempt 1: "
        this = str(rec["problem"]).removeprefix("attempt 1: ")
        out["problem"] = f"{prior['problem']}; attempt {prior['asks'] + 1}: {this}"
    return out


def _prior(rec: dict[str, Any], asks: int) -> dict[str, Any]:
    return {
        "asks": asks,
        "problem": rec["problem"],
        "cost_usd": rec["cost_usd"],
        **{f: rec[f] for f in _SUMS},
    }


class _Batches:
    """One ``--batch`` run (see the module docstring)."""

    def __init__(
        self,
        backend: Any,
        holder: Leaseholder,
        plan: Plan,
        progress: _Progress,
        max_parse_retries: int,
        poll_interval: float,
        batch_timeout: float | None,
    ) -> None:
        self.backend = backend
        self.holder = holder
        self.ledger: Ledger = holder.ledger
        self.judge: str = backend.spec
        self.by_key: dict[str, JudgeRequest] = {r.key: r for r in plan.requests}
        self.progress = progress
        self.max_parse_retries = max_parse_retries
        self.poll_interval = poll_interval
        self.batch_timeout = batch_timeout
        self.started = time.monotonic()

    def _check_timeout(self, waiting: str) -> None:
        if self.batch_timeout is not None and time.monotonic() - self.started > self.batch_timeout:
            raise JudgeError(
                f"{waiting} still in progress after {self.batch_timeout:g} s; re-run the "
                "same command to resume polling (nothing will be resubmitted)"
            )

    async def submit(self, items: dict[str, dict[str, Any]], closes: str | None = None) -> None:
        """Write the intent for ``items``, create the batch, record its id."""
        intent = begin(self.holder, self.judge, items, closes=closes)
        if intent is not None:
            await self._create(intent)

    async def _create(self, intent: Intent) -> None:
        missing = [k for k in intent.items if k not in self.by_key]
        if missing:
            raise JudgeError(
                f"batch intent {intent.intent_id} of {self.judge} holds {len(missing)} "
                "request(s) this run does not plan and no batch was found for it; re-run the "
                "command that made it (same cases and dimensions) to send it"
            )
        batch_id = await self.backend.submit_batch([self.by_key[k] for k in intent.items])
        self.ledger.add_batch(batch_id, self.judge, intent.items, intent=intent.intent_id)

    async def orphans(self) -> None:
        """Adopt the batch of each orphaned intent, or send the intent again."""
        for intent in take_orphans(self.holder, self.judge):
            found = await self._find(intent)
            if found is not None:
                self.ledger.add_batch(found, self.judge, intent.items, intent=intent.intent_id)
            else:
                await self._create(restart(self.holder, intent))

    async def _find(self, intent: Intent) -> str | None:
        """The provider's batch made for ``intent``, if there is one: a candidate of
        :func:`candidates` whose results hold exactly the intent's
        custom ids (an unended candidate is waited for: its ids show only once it ends)."""
        listed = await self.backend.list_batches(since=intent.requested_at - 600.0)
        for cand in candidates(intent, listed, self.ledger.batch_ids(), time.time()):
            status = cand.status
            while status != "ended":
                self._check_timeout(f"batch {cand.batch_id} (a candidate to adopt)")
                await asyncio.sleep(self.poll_interval)
                status = await self.backend.batch_status(cand.batch_id)
            replies = await self.backend.batch_results(cand.batch_id)
            if set(replies) == set(intent.items):
                return str(cand.batch_id)
        return None

    async def collect(self, batch_id: str, items: dict[str, dict[str, Any]]) -> None:
        """Record the answers of an ended batch; re-ask the unparseable ones as one batch."""
        replies = await self.backend.batch_results(batch_id)
        recorded = self.ledger.statuses(items)
        reasks: dict[str, dict[str, Any]] = {}
        for key, meta in items.items():
            if recorded.get(key) in FINAL_STATUSES:
                continue
            first = replies.get(key) or Reply("error", error="no result in the batch")
            one = await _resolve(self.backend, _bare(meta), None, first, 0, batch_id)
            prior = meta.get("prior")
            rec = merge_prior(prior, one)
            asks = (prior or {}).get("asks", 0) + 1
            unparseable = rec["status"] == "unparseable"
            if unparseable and asks <= self.max_parse_retries and key in self.by_key:
                reasks[key] = {**_bare(meta), "prior": _prior(rec, asks)}
                continue
            self.ledger.record(rec)
            self.progress.update(rec)
        if reasks:
            await self.submit(reasks, closes=batch_id)
        else:
            self.ledger.close_batch(batch_id)

    async def run(self, to_send: list[JudgeRequest]) -> None:
        await self.orphans()
        for i in range(0, len(to_send), BATCH_CHUNK):
            await self.submit({r.key: r.metadata() for r in to_send[i : i + BATCH_CHUNK]})
        while True:
            open_batches = self.ledger.open_batches(self.judge)
            for batch_id, items in open_batches.items():
                if await self.backend.batch_status(batch_id) == "ended":
                    await self.collect(batch_id, items)
            await self.orphans()
            left = list(self.ledger.open_batches(self.judge))
            pending = intents(self.holder, self.judge)
            if not left and not pending:
                return
            made = [f"{i.intent_id} (being created)" for i in pending]
            self._check_timeout(f"batch(es) {', '.join(left + made)}")
            await asyncio.sleep(self.poll_interval)


async def run_batches(
    backend: Any,
    ledger: Ledger,
    plan: Plan,
    progress: _Progress,
    max_parse_retries: int,
    poll_interval: float,
    batch_timeout: float | None,
) -> None:
    """Send ``plan.to_send`` as Message Batches and collect every open batch of the
    judge (see the module docstring)."""
    holder = Leaseholder(ledger)
    async with holder.renewing():
        run = _Batches(
            backend, holder, plan, progress, max_parse_retries, poll_interval, batch_timeout
        )
        await run.run(list(plan.to_send))
