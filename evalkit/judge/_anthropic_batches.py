"""The Message Batches half of the ``anthropic`` judge backend (50% off, asynchronous).

:class:`MessageBatches` is mixed into :class:`~evalkit.judge.anthropic.AnthropicBackend`
and uses its client, retry policy and reply parsing; what makes a batch run survive a
kill (intents, adoption) is :mod:`evalkit.judging._batches` and :mod:`._intent`, which
call these four methods.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any

import anthropic
import httpx2

from evalkit.errors import JudgeError
from evalkit.judge._base import (
    RETRY_STATUSES,
    BatchInfo,
    Reply,
    parse_retry_after,
    retry_delay,
)
from evalkit.judge._prompt import JudgeRequest


class _Failed(Exception):
    """The retry policy gave up; ``message`` is scrubbed. ``answered``: the server did
    answer (a body refused by :mod:`evalkit.judge._bounds`), so the call may be billed."""

    def __init__(self, message: str, attempts: int, *, answered: bool = False) -> None:
        super().__init__(message)
        self.message = message
        self.attempts = attempts
        self.answered = answered


class MessageBatches:
    """Create, list, poll and read Message Batches (see the module docstring)."""

    if TYPE_CHECKING:  # provided by AnthropicBackend
        max_retries: int
        backoff_base: float
        max_retry_wait: float

        def client(self) -> anthropic.AsyncAnthropic: ...
        def message_params(self, req: JudgeRequest) -> dict[str, Any]: ...
        def _describe(self, exc: anthropic.APIError) -> str: ...
        def _scrub(self, text: str) -> str: ...
        def reply_from_message(
            self, msg: Any, *, attempts: int, latency_s: float, batch: bool = False
        ) -> Reply: ...
        async def _retrying(
            self, fn: Callable[[], Awaitable[Any]], deadline: float | None = None
        ) -> tuple[Any, int]: ...

    async def submit_batch(self, requests: Sequence[JudgeRequest]) -> str:
        """Create a Message Batch (custom_id = request key); return its id.

        A create is sent again only when it surely made nothing: an HTTP error status
        from the server (429, 5xx, 529) or a connection that never opened. A timeout or a
        dropped connection after the body was sent may have made the batch, so it is a
        :class:`JudgeError` at once: the batch intent stays in the ledger and a re-run
        adopts the batch or, if there is none, sends it (:mod:`evalkit.judging._batches`).
        """
        client = self.client()
        items: list[Any] = [
            {"custom_id": r.key, "params": self.message_params(r)} for r in requests
        ]
        attempt = 0
        while True:
            attempt += 1
            try:
                batch = await client.messages.batches.create(requests=items)
                return str(batch.id)
            except anthropic.APIStatusError as exc:
                wait = parse_retry_after(dict(exc.response.headers))
                if exc.status_code not in RETRY_STATUSES or attempt > self.max_retries:
                    message = self._describe(exc)
                    raise JudgeError(
                        f"anthropic judge: batch submission failed: {message}"
                    ) from None
            except anthropic.APIConnectionError as exc:
                never_left = isinstance(exc.__cause__, (httpx2.ConnectError, httpx2.ConnectTimeout))
                if not never_left or attempt > self.max_retries:
                    raise JudgeError(
                        f"anthropic judge: batch submission failed: {self._describe(exc)} (it "
                        "may have been created: re-run to adopt it or send it again)"
                    ) from None
                wait = None
            await asyncio.sleep(
                retry_delay(attempt, wait, base=self.backoff_base, max_wait=self.max_retry_wait)
            )

    async def list_batches(self, since: float) -> list[BatchInfo]:
        """Batches of this account created at or after ``since`` (epoch seconds), newest
        first, as :class:`~evalkit.judge._base.BatchInfo`."""
        client = self.client()

        async def collect() -> list[BatchInfo]:
            out = []
            async for b in client.messages.batches.list(limit=100):
                created = b.created_at.timestamp()
                if created < since:
                    break
                c = b.request_counts
                count = c.processing + c.succeeded + c.errored + c.canceled + c.expired
                out.append(BatchInfo(b.id, created, count, str(b.processing_status)))
            return out

        try:
            listed, _ = await self._retrying(collect)
        except _Failed as failed:
            raise JudgeError(f"anthropic judge: listing batches: {failed.message}") from None
        return list(listed)

    async def batch_status(self, batch_id: str) -> str:
        """``in_progress``, ``canceling`` or ``ended``."""
        client = self.client()
        try:
            batch, _ = await self._retrying(lambda: client.messages.batches.retrieve(batch_id))
        except _Failed as failed:
            raise JudgeError(f"anthropic judge: batch {batch_id}: {failed.message}") from None
        return str(batch.processing_status)

    async def batch_results(self, batch_id: str) -> dict[str, Reply]:
        """Replies of an ended batch by custom_id (request key)."""
        client = self.client()
        out: dict[str, Reply] = {}

        async def collect() -> None:
            out.clear()
            decoder = await client.messages.batches.results(batch_id)
            async for item in decoder:
                res = item.result
                if res.type == "succeeded":
                    out[item.custom_id] = self.reply_from_message(
                        res.message, attempts=1, latency_s=0.0, batch=True
                    )
                elif res.type == "errored":
                    detail = self._scrub(res.error.model_dump_json())
                    out[item.custom_id] = Reply("error", error=f"batch item errored: {detail}")
                else:
                    out[item.custom_id] = Reply("error", error=f"batch item {res.type}")

        try:
            await self._retrying(collect)
        except _Failed as failed:
            raise JudgeError(f"anthropic judge: batch {batch_id}: {failed.message}") from None
        return out
