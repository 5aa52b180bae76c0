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

A 429 is different: a target's :class:`~evalkit.traffic.TrafficController` (built from
its ``rpm``/``input_tpm``/``output_tpm`` arguments, or shared through ``traffic=``)
makes the call wait its turn and sends it again, outside the retry budget; it also
adapts how many requests are in flight and paces to the provider's rate-limit headers.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import TypeVar

from evalkit.errors import JudgeError
from evalkit.judge._base import RETRY_STATUSES, parse_retry_after, retry_delay, scrub
from evalkit.runner._types import RunnerError, TargetCallError
from evalkit.traffic import Charge, DeadlinePassed, Limits, TrafficController

T = TypeVar("T")
#: What a success tells the controller: its headers, and the (input, output) tokens the
#: provider counted (None: unknown, the charge stands).
Observed = tuple[Mapping[str, str] | None, tuple[int, int] | None]

__all__ = ["RETRY_STATUSES", "Failure", "retrying", "scrub", "target_traffic"]


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
    traffic: TrafficController | None = None,
    charge: Charge | None = None,
    observe: Callable[[T], Observed] | None = None,
) -> tuple[T, int]:
    """Run ``fn`` under the policy; return (result, attempts).

    ``classify`` maps an exception to a :class:`Failure`, or None for exceptions that
    are not transport failures (those propagate unchanged: they are bugs). Raises
    :class:`TargetCallError` (with the failure's description, which the adapter has
    scrubbed) when the policy gives up.

    With ``traffic`` (the target's controller) each attempt waits for its turn there,
    charged ``charge``; a 429 is sent again when its turn comes without using the
    ``max_retries`` budget; ``observe(result)`` gives the success's headers and the
    (input, output) tokens the provider counted, to correct the charge.
    """
    attempt = failures = 0
    while True:
        ticket = None
        if traffic is not None:
            try:
                ticket = await traffic.acquire(charge or Charge())
            except DeadlinePassed as exc:
                raise TargetCallError(str(exc), attempt) from None
        attempt += 1
        try:
            result = await fn()
        except Exception as exc:
            failure = classify(exc)
            if failure is None:
                if traffic is not None and ticket is not None:
                    traffic.release(ticket, ok=False)
                raise
            if traffic is not None and ticket is not None:
                if failure.status == 429:
                    traffic.rate_limited(
                        ticket, failure.headers, parse_retry_after(failure.headers)
                    )
                    continue  # flow control, outside the retry budget
                traffic.release(ticket, failure.headers, ok=False)
            failures += 1
            if not failure.retryable or failures > max_retries:
                raise TargetCallError(failure.description, attempt) from None
            wait = parse_retry_after(failure.headers) if failure.status is not None else None
        else:
            if traffic is not None and ticket is not None:
                headers, counted = observe(result) if observe is not None else (None, None)
                traffic.release(ticket, headers, ok=True)
                if counted is not None:
                    traffic.correct(ticket, *counted)
            return result, attempt
        delay = retry_delay(failures, wait, max_wait=max_wait)
        if traffic is None:
            await asyncio.sleep(delay)
            continue
        try:
            await traffic.sleep(delay)
        except DeadlinePassed as exc:
            raise TargetCallError(str(exc), attempt) from None


def target_traffic(
    traffic: TrafficController | None,
    rpm: float | None,
    input_tpm: float | None,
    output_tpm: float | None,
    concurrency: int,
) -> TrafficController:
    """The controller of a target: ``traffic`` if given (shared), else one of its own
    with ceiling ``concurrency`` and the user's per-minute limits; RunnerError if a
    limit is not a positive number."""
    if traffic is not None:
        return traffic
    try:
        return TrafficController(
            ceiling=concurrency,
            limits=Limits(rpm=rpm, input_tpm=input_tpm, output_tpm=output_tpm),
        )
    except (ValueError, JudgeError) as exc:
        raise RunnerError(f"target: {exc}") from None
