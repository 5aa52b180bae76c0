"""A lease taken over while its owner was suspended: found before sending or recording.

An owner stopped past its lease (SIGSTOP, a closed laptop lid) may, once resumed, find
its request taken over by another process (:mod:`evalkit.ledger._lease`, ADR-0032). The
direct sender marks the request each call is for (:func:`sending`); the run's
:class:`LeasedTraffic` confirms that request's lease once each attempt's turn has come,
right before the attempt is sent, and recording re-checks it in the recording
transaction. A lease lost either way is a :class:`~evalkit.ledger.LeaseLost`, whose
message is the warning the sender prints on stderr.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

from evalkit.traffic import Charge, Ticket, TrafficController

if TYPE_CHECKING:
    from evalkit.ledger._lease import Leaseholder

#: The request the current task is sending (set by :func:`sending`), so the
#: traffic controller knows whose lease to confirm before an attempt.
_SENDING: ContextVar[str | None] = ContextVar("evalkit_lease_sending", default=None)


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
    process has taken the request over; :class:`~evalkit.ledger.LeaseLost` ends the call
    instead."""

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
