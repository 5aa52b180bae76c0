"""A lease taken over while its owner was suspended: found before sending or recording.

An owner stopped past its lease (SIGSTOP, a closed laptop lid) may, once resumed, find
its request taken over by another process (:mod:`evalkit.judge._lease`, ADR-0032). The
direct sender marks the request each call is for (:func:`sending`); the run's
:class:`LeasedTraffic` confirms that request's lease once each attempt's turn has come,
right before the attempt is sent, and recording re-checks it in the recording
transaction. A lease lost either way is a :class:`LeaseLost`, whose message is the
warning the sender prints on stderr.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalkit.errors import JudgeError
from evalkit.traffic import Charge, Ticket, TrafficController

if TYPE_CHECKING:
    from evalkit.judge._lease import Leaseholder

#: The request the current task is sending (set by :func:`sending`), so the
#: traffic controller knows whose lease to confirm before an attempt.
_SENDING: ContextVar[str | None] = ContextVar("evalkit_lease_sending", default=None)


class LeaseLost(JudgeError):
    """This run's lease on ``key`` is gone: another process took the request over after
    the lease expired (this one was suspended past it), and may have answered it.

    ``taker``: the owner now holding the lease (None: nobody; the request was recorded
    or released by the other process). ``sent``: this run had sent the request, so it
    was sent twice. The message is the stderr warning.
    """

    def __init__(self, path: Path, key: str, taker: str | None, sent: bool) -> None:
        who = taker or "another process"
        if sent:
            what = (
                f"request {key[:12]} was sent twice, by this process and by {who}, which "
                "took it over when this process's lease expired (was this process "
                "suspended?); the provider may bill both. This process sends it no more "
                "and does not record its answer"
            )
        else:
            what = (
                f"request {key[:12]} was taken over by {who} when this process's lease "
                "expired (was this process suspended?) before this process sent it; "
                "left to that process, not sent twice"
            )
        super().__init__(f"{path}: {what}")
        self.key, self.taker, self.sent = key, taker, sent


@contextmanager
def sending(key: str) -> Iterator[None]:
    """Within the block, this task's HTTP attempts are for request ``key``: the run's
    :class:`LeasedTraffic` confirms its lease before each."""
    token = _SENDING.set(key)
    try:
        yield
    finally:
        _SENDING.reset(token)


class LeasedTraffic(TrafficController):
    """A run's traffic controller that confirms the lease of the request an attempt is
    for (:func:`sending`) once the attempt's turn has come, right before it
    is sent: so a call resumed after its owner was stopped past its lease (a retry
    after a timeout, a re-ask after an unparseable answer) sends nothing once another
    process has taken the request over; :class:`LeaseLost` ends the call instead."""

    def __init__(self, holder: Leaseholder, **options: Any) -> None:
        super().__init__(**options)
        self.holder = holder

    async def acquire(self, charge: Charge) -> Ticket:
        ticket = await super().acquire(charge)
        key = _SENDING.get()
        if key is not None:
            try:
                self.holder.confirm(key)
            except BaseException:
                self.release(ticket, None, ok=False)
                raise
        return ticket
