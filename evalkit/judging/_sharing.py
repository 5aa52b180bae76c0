"""Several processes on one ledger: send what this run holds, wait for what others hold.

The leases themselves (claim, confirm, release, renew) are in
:mod:`evalkit.ledger._lease`; this is the run's round loop around them (ADR-0019).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from evalkit.judging._plan import Plan
    from evalkit.ledger._lease import Leaseholder

_POLL_FIRST_S = 0.05


async def send_sharing(
    holder: Leaseholder, plan: Plan, send: Callable[[Plan], Awaitable[None]]
) -> None:
    """Send ``plan.to_send`` with ``send`` (which claims each request through
    ``holder`` before sending it), then wait for what other processes hold.

    After each round, the requests neither final nor claimed by this run are leased to
    another process: poll (backoff from 50 ms to :meth:`Leaseholder.poll_cap`) until some
    are final (nothing to do) or claimable (their lease expired: send them in the next
    round). Returns when every request is final or was claimed by this run (a request
    this run recorded as ``error`` is not sent again by it). Leases are renewed during
    the run and released at its end, also when ``send`` raises.
    """
    async with holder.renewing():
        todo = plan
        delay = _POLL_FIRST_S
        while True:
            try:
                await send(todo)
            finally:
                holder.say_taken()
            while True:
                left = holder.open_untried(r.key for r in plan.to_send)
                if not left:
                    return
                ready = set(holder.claimable(left))
                if ready:
                    break
                await asyncio.sleep(delay)
                delay = min(2 * delay, holder.poll_cap())
            delay = _POLL_FIRST_S
            todo = replace(plan, to_send=[r for r in plan.to_send if r.key in ready])
