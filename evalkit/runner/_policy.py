"""The failure policy of networked targets: the judge's, shared rather than copied.

Transport failures are retried inside one logical call: HTTP 408, 409, 429, 5xx and
529, timeouts and connection errors, up to ``max_retries`` further attempts, waiting
what ``retry-after``/``retry-after-ms`` says (up to ``max_wait``) or else exponential
backoff (0.5 s doubling, capped at 8 s, jittered) — :data:`RETRY_STATUSES`,
:func:`parse_retry_after` and :func:`retry_delay` of :mod:`evalkit.judge._base`. Any
other HTTP status fails at once. A call that still fails raises
:class:`TargetCallError`; the runner records it on the turn and leaves the
conversation unfinished, to be run again on the next run (as the judge re-sends its
``error`` rows and never its final ones).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import TypeVar

from evalkit.judge._base import RETRY_STATUSES, parse_retry_after, retry_delay, scrub
from evalkit.runner._types import TargetCallError

T = TypeVar("T")

__all__ = ["RETRY_STATUSES", "Failure", "retrying", "scrub"]


@dataclass(frozen=True)
class Failure:
    """How an adapter reads an exception: a transport failure, maybe retryable."""

    description: str
    status: int | None = None
    headers: Mapping[str, str] | None = None
    transient: bool = False
    """True for timeouts and connection errors (retryable without a status)."""

    @property
    def retryable(self) -> bool:
        return self.transient or (self.status is not None and self.status in RETRY_STATUSES)


async def retrying(
    fn: Callable[[], Awaitable[T]],
    classify: Callable[[BaseException], Failure | None],
    *,
    max_retries: int = 4,
    max_wait: float = 120.0,
) -> tuple[T, int]:
    """Run ``fn`` under the policy; return (result, attempts).

    ``classify`` maps an exception to a :class:`Failure`, or None for exceptions that
    are not transport failures (those propagate unchanged: they are bugs). Raises
    :class:`TargetCallError` (with the failure's description, which the adapter has
    scrubbed) when the policy gives up.
    """
    attempt = 0
    while True:
        attempt += 1
        try:
            return await fn(), attempt
        except Exception as exc:
            failure = classify(exc)
            if failure is None:
                raise
            if not failure.retryable or attempt > max_retries:
                raise TargetCallError(failure.description, attempt) from None
            wait = parse_retry_after(failure.headers) if failure.status is not None else None
        await asyncio.sleep(retry_delay(attempt, wait, max_wait=max_wait))
