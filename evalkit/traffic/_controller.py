"""The async edge of the traffic controller: requests wait here for their turn.

One :class:`TrafficController` serves every in-flight call of one backend in one run.
A call asks :meth:`TrafficController.acquire` before each HTTP attempt, with what the
attempt will be charged; it waits until the AIMD window has room, no cool-down is on,
and every bucket can take the charge (see :mod:`evalkit.traffic._policy`). The answer
goes back through :meth:`~TrafficController.release` (with the response headers, and
whether it was a success), :meth:`~TrafficController.rate_limited` (a 429) and
:meth:`~TrafficController.correct` (the tokens the provider counted).

The run-level ``deadline`` (seconds from the controller's creation, None: none) bounds
every wait here, and the backoff sleeps of transient retries (:meth:`sleep`): when it
passes, a waiting call gets :class:`DeadlinePassed` and ends in ``error``; requests
already in flight are left to finish (they are being paid for). :meth:`stop` makes
every waiting and later call raise :class:`SendingStopped` (the run stops early).
"""

from __future__ import annotations

import asyncio
import math
import time
from collections import Counter, deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from evalkit.errors import JudgeError
from evalkit.traffic._headers import read_headers
from evalkit.traffic._policy import (
    DEFAULT_PAUSE_S,
    MAX_PAUSE_S,
    Budgets,
    Charge,
    Limits,
    Window,
)

#: Seconds over which the current pace (requests started per second) is measured.
PACE_WINDOW_S = 10.0


class DeadlinePassed(JudgeError):
    """The run's deadline passed while a call waited for its turn (or a retry)."""


class SendingStopped(JudgeError):
    """The run stopped sending (over budget, server gone) while a call waited.

    ``answered`` is set by the sender when the call had been answered once already (an
    unparseable answer whose re-ask was not sent), so that answer is still recorded.
    """

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.answered: dict[str, Any] | None = None


#: Weight of the newest call in the learned ratio of counted to estimated input tokens.
RATIO_WEIGHT = 0.3


@dataclass
class Ticket:
    """One admitted attempt: what it was charged, the caller's input estimate, and when
    it was sent."""

    charge: Charge
    sent_at: float
    estimated_input: float = 0.0
    open: bool = True


class TrafficController:
    """The shared controller of one backend (see the module docstring).

    ``ceiling``: most requests in flight (``--concurrency``). ``limits``: the user's
    per-minute limits. ``deadline``: seconds the run may take (None: no limit).
    ``max_pause`` / ``default_pause``: the cool-down cap and the cool-down when a 429
    names no wait. ``clock`` / ``wall``: monotonic and Unix time (tests pass fakes).
    """

    def __init__(
        self,
        *,
        ceiling: int = 8,
        limits: Limits | None = None,
        deadline: float | None = None,
        max_pause: float = MAX_PAUSE_S,
        default_pause: float = DEFAULT_PAUSE_S,
        clock: Callable[[], float] = time.monotonic,
        wall: Callable[[], float] = time.time,
    ) -> None:
        if deadline is not None and not deadline > 0:
            raise JudgeError(f"--deadline {deadline!r} s is not positive")
        try:
            self.window = Window(int(ceiling), max_pause=max_pause)
            self.budgets = Budgets(limits or Limits())
        except ValueError as exc:
            raise JudgeError(str(exc)) from None
        self.deadline = deadline
        self.default_pause = default_pause
        self._clock, self._wall = clock, wall
        self.started = clock()
        self.in_flight = 0
        self.sent = 0
        self.header_notes: Counter[str] = Counter()
        self._stopped: str | None = None
        self._starts: deque[float] = deque()
        self._waiters: list[asyncio.Future[None]] = []
        #: Counted / estimated input tokens, learned from :meth:`correct`. The local
        #: estimate counts the whole prompt, a provider may not (cache reads), so the
        #: charge before a call is the estimate times this ratio.
        self.input_ratio = 1.0

    # -- figures ------------------------------------------------------------------------

    def pace(self) -> float:
        """Requests started per second over the last :data:`PACE_WINDOW_S` seconds."""
        now = self._clock()
        while self._starts and now - self._starts[0] > PACE_WINDOW_S:
            self._starts.popleft()
        span = min(PACE_WINDOW_S, max(now - self.started, 1e-9))
        return len(self._starts) / span

    def figures(self) -> dict[str, Any]:
        """What the progress line and the run summary show."""
        return {
            "in_flight": self.in_flight,
            "window": self.window.size,
            "pace_per_s": round(self.pace(), 2),
            "sent": self.sent,
            "rate_limited": self.window.rate_limited,
            "episodes": self.window.episodes,
            "header_notes": sum(self.header_notes.values()),
        }

    # -- waiting --------------------------------------------------------------------------

    def _left(self, now: float) -> float:
        if self.deadline is None:
            return math.inf
        return self.started + self.deadline - now

    def _deadline_error(self) -> DeadlinePassed:
        return DeadlinePassed(
            f"the run deadline of {self.deadline:g} s (--deadline) passed before this call "
            "was answered; it was not sent again, re-run to send it"
        )

    def _check(self, now: float) -> float:
        if self._stopped is not None:
            raise SendingStopped(self._stopped)
        left = self._left(now)
        if left <= 0:
            raise self._deadline_error()
        return left

    async def _nap(self, seconds: float) -> None:
        """Sleep ``seconds`` (inf: until woken), or less if woken by a state change."""
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.append(fut)
        try:
            await asyncio.wait({fut}, timeout=None if math.isinf(seconds) else seconds)
        finally:
            if fut in self._waiters:
                self._waiters.remove(fut)

    def _wake(self) -> None:
        waiters, self._waiters = self._waiters, []
        for fut in waiters:
            if not fut.done():
                fut.set_result(None)

    def wait_for(self, charge: Charge, now: float) -> float:
        """Seconds until an attempt charged ``charge`` may start (inf: a slot must free)."""
        if self.in_flight >= self.window.size:
            return math.inf
        return max(self.window.cooling(now), self.budgets.delay(charge, now))

    async def acquire(self, charge: Charge) -> Ticket:
        """Wait for the turn of an attempt charged ``charge``; charge it and return its
        :class:`Ticket`. Raises :class:`DeadlinePassed` or :class:`SendingStopped`."""
        while True:
            now = self._clock()
            left = self._check(now)
            scaled = Charge(
                charge.requests, charge.input_tokens * self.input_ratio, charge.output_tokens
            )
            wait = self.wait_for(scaled, now)
            if wait <= 0:
                self.budgets.take(scaled, now)
                self.in_flight += 1
                self.sent += 1
                self._starts.append(now)
                return Ticket(scaled, now, charge.input_tokens)
            await self._nap(min(wait, left))

    async def sleep(self, seconds: float) -> None:
        """A backoff sleep that the deadline (or :meth:`stop`) cuts short with an error."""
        now = self._clock()
        left = self._check(now)
        if seconds >= left:
            await asyncio.sleep(max(0.0, left))
            raise self._deadline_error()
        await asyncio.sleep(max(0.0, seconds))

    def stop(self, reason: str) -> None:
        """Every waiting and later :meth:`acquire` raises :class:`SendingStopped`."""
        self._stopped = reason
        self._wake()

    # -- outcomes -------------------------------------------------------------------------

    def _observe(self, headers: Mapping[str, str] | None, now: float) -> Any:
        report = read_headers(headers, self._wall())
        for note in report.notes:
            self.header_notes[note] += 1
        self.budgets.observe(report, now)
        return report

    def _close(self, ticket: Ticket) -> None:
        if ticket.open:
            ticket.open = False
            self.in_flight -= 1

    def release(
        self, ticket: Ticket, headers: Mapping[str, str] | None = None, *, ok: bool = True
    ) -> None:
        """An attempt ended with a response other than a 429 (``ok``: a success) or with
        no response. A failed attempt's tokens are given back (it was not billed)."""
        now = self._clock()
        self._close(ticket)
        self._observe(headers, now)
        if ok:
            self.window.on_success(now)
        else:
            self.budgets.correct(ticket.charge, Charge(ticket.charge.requests), now)
        self._wake()

    def rate_limited(
        self,
        ticket: Ticket,
        headers: Mapping[str, str] | None = None,
        retry_after: float | None = None,
    ) -> bool:
        """An attempt answered 429; True if it opened a new episode (a cut). The cool-down
        is ``retry_after``, else the reset of a resource the headers say is used up,
        else ``default_pause``; capped at ``max_pause`` (see :class:`Window`)."""
        now = self._clock()
        self._close(ticket)
        report = self._observe(headers, now)
        if retry_after is None:
            retry_after = self.budgets.exhausted_reset(report)
        if retry_after is None:
            retry_after = self.default_pause
        self.budgets.correct(ticket.charge, Charge(ticket.charge.requests), now)
        new = self.window.on_rate_limited(ticket.sent_at, now, retry_after)
        self._wake()
        return new

    def correct(self, ticket: Ticket, input_tokens: int, output_tokens: int) -> None:
        """Replace the tokens charged before the attempt by those the provider counted,
        and learn the ratio of counted to estimated input tokens."""
        actual = Charge(ticket.charge.requests, float(input_tokens), float(output_tokens))
        self.budgets.correct(ticket.charge, actual, self._clock())
        if ticket.estimated_input > 0:
            ratio = input_tokens / ticket.estimated_input
            self.input_ratio += RATIO_WEIGHT * (ratio - self.input_ratio)
        self._wake()
