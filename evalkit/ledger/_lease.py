"""Leases: several processes on one ledger, and no request answered twice because of it.

A process about to send a request *claims* it: in one SQLite write transaction (``BEGIN
IMMEDIATE``, which holds the database's write lock across processes) it re-reads the
request's row and its lease, and writes a lease ``(request_key, owner, expires_at,
claimed_at)`` unless the request is already final or another owner's lease has not
expired. A second process on the same ledger therefore skips a request the first is
sending and picks other work. Recording the answer deletes the lease in the same
transaction as the row (:meth:`evalkit.ledger._store.Ledger.record`).

* Owner: ``host/pid/token`` (:func:`new_owner`), the token random per run, so a restarted
  process never mistakes an old lease for its own.
* Expiry: ``expires_at`` is wall-clock seconds (``time.time()``), stored in the ledger,
  so it runs on while its owner is stopped (SIGSTOP, a closed laptop lid) and every
  process reads the same deadline; processes sharing a ledger share a clock (one host,
  or hosts whose clocks agree to well under a lease). A crashed owner's leases expire
  after :func:`lease_seconds` (``EVALKIT_LEASE_SECONDS``, default 60); a live owner
  renews every lease it holds (and every batch intent it owns,
  :mod:`evalkit.ledger._intent`) every third of that (:meth:`Leaseholder.renewing`), so a
  long call with retries keeps its lease.
* Takeover (ADR-0032): an owner stopped past its lease may find, once resumed, that
  another process took the request over. So it re-checks the lease before every HTTP
  attempt (:meth:`Leaseholder.confirm`, called by :mod:`evalkit.judging._takeover`) and
  before recording (:meth:`Leaseholder.release`, inside the recording transaction): a
  lease still its own (even expired, if nobody took it) is renewed and the call goes
  on; a lease gone to another process, or a request another process has recorded,
  raises :class:`LeaseLost`: nothing more is sent, nothing recorded over the other's
  answer, and the sender says on stderr that the request was sent twice (by both
  processes) if this one had sent it. So a takeover costs the one call in flight when
  the lease expired, never a third by the resumed owner. The process that takes over
  says how many leases it took from an expired owner.
* Waiting: the run (:func:`evalkit.judging._sharing.send_sharing`) sends round after
  round: requests leased by others are waited for (polling the ledger with backoff)
  until they are final or their lease expires, then claimed; so the last process to
  finish leaves a complete ledger.
* Damage: a lease row is ledger input and is read strictly
  (:func:`~evalkit.ledger._claims.check_lease`); a damaged one (owner not
  ``host/pid/token``, a time that is not a finite number) is a :class:`LedgerError`
  naming the file, the request and the field, never an expired lease: treating it as
  expired could send a request another process is sending.

Leases live in their own tables (:data:`~evalkit.ledger._schema.LEASE_DDL`), so every
reader of requests and results (frames, gate, reports, replay, the JSONL export and its
validation) never sees them. See ADR-0019 and ADR-0032.
"""

from __future__ import annotations

import asyncio
import math
import os
import re
import secrets
import socket
import sqlite3
import sys
import time
from collections import Counter
from collections.abc import AsyncIterator, Iterable
from contextlib import asynccontextmanager, suppress
from pathlib import Path
from typing import TYPE_CHECKING

from evalkit.errors import JudgeError, LedgerError
from evalkit.ledger._claims import check_lease
from evalkit.ledger._records import FINAL_STATUSES

if TYPE_CHECKING:
    from evalkit.ledger._store import Ledger

LEASE_ENV = "EVALKIT_LEASE_SECONDS"
DEFAULT_LEASE_S = 60.0


_POLL_CAP_S = 2.0


def lease_seconds() -> float:
    """The lease duration: ``EVALKIT_LEASE_SECONDS`` if set (a positive number), else 60."""
    raw = os.environ.get(LEASE_ENV)
    if raw is None or not raw.strip():
        return DEFAULT_LEASE_S
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise LedgerError(f"{LEASE_ENV}={raw!r}: expected a positive number of seconds")
    return value


def new_owner() -> str:
    """``host/pid/token`` of this process, with a fresh random token."""
    host = re.sub(r"[/\s]", "_", socket.gethostname() or "localhost")[:255]
    return f"{host}/{os.getpid()}/{secrets.token_hex(8)}"


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


class Leaseholder:
    """The leases one run holds on one ledger (see the module docstring).

    Creating it attaches it to ``ledger`` (``ledger.leases``): from then on the ledger's
    :meth:`~evalkit.ledger._store.Ledger.record` releases the lease of what it records,
    and the direct sender claims each request before sending it. ``held``: requests
    leased now; ``tried``: every request this run has claimed (it does not send one twice);
    ``sent``: HTTP attempts started per request (counted by :meth:`confirm`);
    ``taken``: requests this run took over from another owner's expired lease, with
    that owner.
    """

    def __init__(self, ledger: Ledger, ttl: float | None = None, owner: str | None = None):
        self.ledger = ledger
        self.ttl = lease_seconds() if ttl is None else ttl
        self.owner = owner or new_owner()
        self.held: set[str] = set()
        self.tried: set[str] = set()
        self.sent: Counter[str] = Counter()
        self.taken: dict[str, str] = {}
        ledger.leases = self

    def claim(self, key: str, now: float | None = None) -> bool:
        """Lease ``key`` to this run; False if it is final or another live lease holds it."""
        now = time.time() if now is None else now
        path = self.ledger.path
        with self.ledger.transaction() as db:
            status = db.execute(
                "SELECT status FROM requests WHERE request_key = ?", (key,)
            ).fetchone()
            if status is not None and status[0] in FINAL_STATUSES:
                return False
            row = db.execute(
                "SELECT request_key, owner, expires_at, claimed_at FROM leases "
                "WHERE request_key = ?",
                (key,),
            ).fetchone()
            taken_from = None
            if row is not None:
                _, owner, expires, _ = check_lease(path, row)
                if owner != self.owner and expires > now:
                    return False
                taken_from = owner if owner != self.owner else None
            db.execute(
                "INSERT OR REPLACE INTO leases VALUES (?, ?, ?, ?)",
                (key, self.owner, now + self.ttl, now),
            )
        self.held.add(key)
        self.tried.add(key)
        if taken_from is not None:
            self.taken[key] = taken_from
        return True

    def _taker(self, db: sqlite3.Connection, key: str) -> str | None:
        row = db.execute("SELECT owner FROM leases WHERE request_key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def confirm(self, key: str, now: float | None = None) -> None:
        """Before an HTTP attempt for ``key``: the lease is still this run's (renewed
        now, also if it had expired and nobody took it), and the attempt is counted in
        ``sent``; else :class:`LeaseLost` (the request is not in ``held`` any more)."""
        now = time.time() if now is None else now
        with self.ledger.transaction() as db:
            cur = db.execute(
                "UPDATE leases SET expires_at = ? WHERE request_key = ? AND owner = ?",
                (now + self.ttl, key, self.owner),
            )
            if cur.rowcount == 0:
                self.held.discard(key)
                raise LeaseLost(self.ledger.path, key, self._taker(db, key), self.sent[key] > 0)
        self.sent[key] += 1

    def release(self, db: sqlite3.Connection, key: str, *, sent: bool = True) -> None:
        """Drop this run's lease of ``key`` inside the caller's transaction ``db`` (the
        one recording it). A request this run claimed whose lease is no longer its own
        raises :class:`LeaseLost` (the caller's transaction then writes nothing);
        ``sent``: the record being written comes from a call this run sent."""
        cur = db.execute(
            "DELETE FROM leases WHERE request_key = ? AND owner = ?", (key, self.owner)
        )
        self.held.discard(key)
        if cur.rowcount == 0 and key in self.tried:
            sent = sent or self.sent[key] > 0
            raise LeaseLost(self.ledger.path, key, self._taker(db, key), sent)

    def release_all(self) -> None:
        """Drop every lease this run still holds (its unsent or unrecorded requests)."""
        with self.ledger.transaction() as db:
            db.execute("DELETE FROM leases WHERE owner = ?", (self.owner,))
        self.held.clear()

    def renew(self, now: float | None = None) -> set[str]:
        """Push back the expiry of every lease and batch intent this run holds; return
        the requests whose lease was lost (taken by another process after it expired)."""
        now = time.time() if now is None else now
        lost: set[str] = set()
        with self.ledger.transaction() as db:
            for key in sorted(self.held):
                cur = db.execute(
                    "UPDATE leases SET expires_at = ? WHERE request_key = ? AND owner = ?",
                    (now + self.ttl, key, self.owner),
                )
                if cur.rowcount == 0:
                    lost.add(key)
            db.execute(
                "UPDATE batch_intents SET expires_at = ? WHERE owner = ?",
                (now + self.ttl, self.owner),
            )
        self.held -= lost
        return lost

    @asynccontextmanager
    async def renewing(self) -> AsyncIterator[Leaseholder]:
        """Renew every third of the lease while the block runs; release all at its end."""

        async def loop() -> None:  # a lost lease is said by the sender (LeaseLost)
            while True:
                await asyncio.sleep(self.ttl / 3)
                self.renew()

        task = asyncio.create_task(loop())
        try:
            yield self
        finally:
            task.cancel()
            with suppress(asyncio.CancelledError):
                await task
            self.release_all()

    def open_untried(self, keys: Iterable[str]) -> list[str]:
        """Of ``keys``, those not final in the ledger that this run has not claimed."""
        keys = [k for k in keys if k not in self.tried]
        statuses = self.ledger.statuses(keys)
        return [k for k in keys if statuses.get(k) not in FINAL_STATUSES]

    def claimable(self, keys: Iterable[str], now: float | None = None) -> list[str]:
        """Of ``keys``, those no other owner holds a live lease on (a read; no claim)."""
        now = time.time() if now is None else now
        keys = list(keys)
        busy: set[str] = set()
        for i in range(0, len(keys), 500):
            chunk = keys[i : i + 500]
            rows = self.ledger.lease_rows(chunk)
            for row in rows:
                key, owner, expires, _ = check_lease(self.ledger.path, row)
                if owner != self.owner and expires > now:
                    busy.add(key)
        return [k for k in keys if k not in busy]

    def poll_cap(self) -> float:
        """Longest wait between two looks at the ledger: a quarter lease, at most 2 s."""
        return min(_POLL_CAP_S, self.ttl / 4)

    def say_taken(self) -> None:
        """On stderr: how many leases this run took over from expired owners (once)."""
        if not self.taken:
            return
        owners = sorted(set(self.taken.values()))
        print(
            f"note: {self.ledger.path}: took over {len(self.taken)} request(s) whose lease had "
            f"expired (owner {', '.join(owners[:3])}{', ...' if len(owners) > 3 else ''}: "
            "killed or suspended?); any that owner had sent were sent twice",
            file=sys.stderr,
        )
        self.taken.clear()
