"""Batch intents: what a run is about to submit as a Message Batch, written down first.

Creating a batch and learning its id are one HTTP call; a process killed during it (or
after it returned, before the id reached the ledger) would orphan a batch that a re-run
pays for again. So before the create, :func:`begin` writes an *intent* in one
transaction: an id, the judge, the request keys with their metadata, their count, the
wall-clock time, and an owner with an expiry as for a lease (:mod:`evalkit.judge._lease`;
the owner renews it while the create is in flight). Once the create returns,
:meth:`~evalkit.judge._ledger.Ledger.add_batch` records the batch and deletes the
intent in one transaction.

An intent still in the ledger when its lease has expired is an orphan: the create may
or may not have reached the server. :func:`take_orphans` hands it to the current run,
which looks for the batch among the provider's batches (:func:`candidates`: same count,
created in a window around the intent's time, not already in this ledger; then the
custom ids in its results must be exactly the intent's keys) and adopts it, or, if
there is none, sends the intent again (:func:`restart` moves its time first).

:func:`begin` never puts a request in two live batches: in its transaction it leaves
out requests already final, in an open batch or in another intent. With ``closes`` it
also closes the batch whose unparseable answers it re-asks, in that same transaction,
so a crash between the two can neither lose the answers paid for nor ask twice.
"""

from __future__ import annotations

import json
import re
import secrets
import sqlite3
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalkit.errors import LedgerError
from evalkit.judge._lease import KEY, check_owner, check_time
from evalkit.judge._records import FINAL_STATUSES
from evalkit.secrets import scrubber

if TYPE_CHECKING:
    from evalkit.judge._lease import Leaseholder

#: Slack (seconds) around an intent's time when matching a batch's ``created_at``:
#: clock differences between this machine and the provider, and a slow create.
MATCH_SKEW_S = 600.0
_INTENT_ID = re.compile(r"intent_[0-9a-f]{32}")


@dataclass(frozen=True)
class Intent:
    """One batch intent: ``items`` maps request key -> request metadata."""

    intent_id: str
    judge: str
    requested_at: float
    owner: str
    expires_at: float
    items: dict[str, dict[str, Any]]


@dataclass(frozen=True)
class BatchInfo:
    """A batch as the provider lists it: id, creation time (epoch s), request count,
    processing status (``in_progress``, ``canceling``, ``ended``)."""

    batch_id: str
    created_at: float
    count: int
    status: str


def _read(db: sqlite3.Connection, path: Path, row: Sequence[Any]) -> Intent:
    """An intent row ``(intent_id, judge, count, requested_at, owner, expires_at)`` and
    its items, validated strictly."""
    iid, judge, count, requested, owner, expires = row
    if not isinstance(iid, str) or not _INTENT_ID.fullmatch(iid):
        raise LedgerError(f"{path}: damaged ledger: batch intent {iid!r}: not an intent id")
    what = f"batch intent {iid!r}"
    if not isinstance(judge, str) or not judge:
        raise LedgerError(f"{path}: damaged ledger: {what}: judge is {judge!r}")
    items: dict[str, dict[str, Any]] = {}
    for key, text in db.execute(
        "SELECT request_key, request FROM batch_intent_items WHERE intent_id = ?", (iid,)
    ):
        if not isinstance(key, str) or not KEY.fullmatch(key):
            raise LedgerError(f"{path}: damaged ledger: {what}: item {key!r} is not a request key")
        try:
            meta = json.loads(text)
        except (TypeError, ValueError) as exc:
            raise LedgerError(
                f"{path}: damaged ledger: {what}: item {key!r} request is not JSON ({exc})"
            ) from None
        if not isinstance(meta, dict) or meta.get("request_key") != key:
            raise LedgerError(
                f"{path}: damaged ledger: {what}: item {key!r} request is not its metadata"
            )
        items[key] = meta
    if isinstance(count, bool) or not isinstance(count, int) or count != len(items):
        raise LedgerError(
            f"{path}: damaged ledger: {what}: count is {count!r}, it has {len(items)} item(s)"
        )
    return Intent(
        iid,
        judge,
        check_time(path, what, "requested_at", requested),
        check_owner(path, what, owner),
        check_time(path, what, "expires_at", expires),
        items,
    )


def _intents(db: sqlite3.Connection, path: Path, judge: str | None = None) -> list[Intent]:
    sql = "SELECT intent_id, judge, count, requested_at, owner, expires_at FROM batch_intents"
    args: tuple[str, ...] = ()
    if judge is not None:
        sql, args = sql + " WHERE judge = ?", (scrubber().scrub(judge),)
    rows = db.execute(sql + " ORDER BY requested_at, intent_id", args).fetchall()
    return [_read(db, path, r) for r in rows]


def check_intents(db: sqlite3.Connection, path: Path) -> None:
    """Every batch intent of ``db`` is well formed (the open-time damage check)."""
    _intents(db, path)


def intents(holder: Leaseholder, judge: str) -> list[Intent]:
    """The intents of ``judge`` (compared scrubbed, as stored), oldest first."""
    with holder.ledger.transaction() as db:
        return _intents(db, holder.ledger.path, judge)


def begin(
    holder: Leaseholder,
    judge: str,
    items: dict[str, dict[str, Any]],
    *,
    closes: str | None = None,
    now: float | None = None,
) -> Intent | None:
    """Write the intent to submit ``items`` as one batch of ``judge`` (see the module
    docstring); None if nothing is left to submit, or if ``closes`` names a batch that
    is no longer open (another process collected it)."""
    now = time.time() if now is None else now
    s = scrubber()
    with holder.ledger.transaction() as db:
        if closes is not None:
            cur = db.execute(
                "UPDATE batches SET status = 'collected', updated_at = ? "
                "WHERE batch_id = ? AND status = 'open'",
                (_iso(now), closes),
            )
            if cur.rowcount == 0:
                return None
        busy = {
            r[0]
            for r in db.execute(
                "SELECT request_key FROM batch_items JOIN batches USING (batch_id) "
                "WHERE batches.status = 'open' UNION SELECT request_key FROM batch_intent_items"
            )
        }
        keys = [k for k in items if k not in busy]
        final = _final(db, keys)
        keys = [k for k in keys if k not in final]
        if not keys:
            return None
        iid = f"intent_{secrets.token_hex(16)}"
        expires = now + holder.ttl
        db.execute(
            "INSERT INTO batch_intents VALUES (?, ?, ?, ?, ?, ?)",
            (iid, s.scrub(judge), len(keys), now, holder.owner, expires),
        )
        stored = {k: json.loads(json.dumps(items[k], sort_keys=True)) for k in keys}
        db.executemany(
            "INSERT INTO batch_intent_items VALUES (?, ?, ?)",
            [(iid, k, json.dumps(v, sort_keys=True)) for k, v in stored.items()],
        )
    return Intent(iid, s.scrub(judge), now, holder.owner, expires, stored)


def _final(db: sqlite3.Connection, keys: list[str]) -> set[str]:
    out: set[str] = set()
    for i in range(0, len(keys), 500):
        chunk = keys[i : i + 500]
        q = ",".join("?" * len(chunk))
        rows = db.execute(
            f"SELECT request_key, status FROM requests WHERE request_key IN ({q})", chunk
        )
        out |= {k for k, st in rows if st in FINAL_STATUSES}
    return out


def _iso(ts: float) -> str:
    return datetime.fromtimestamp(ts, UTC).isoformat(timespec="microseconds")


def take_orphans(holder: Leaseholder, judge: str, now: float | None = None) -> list[Intent]:
    """Take over the intents of ``judge`` whose lease has expired (their owner is gone):
    they now belong to ``holder``, with a fresh expiry."""
    now = time.time() if now is None else now
    taken = []
    with holder.ledger.transaction() as db:
        for it in _intents(db, holder.ledger.path, judge):
            if it.owner != holder.owner and it.expires_at > now:
                continue
            db.execute(
                "UPDATE batch_intents SET owner = ?, expires_at = ? WHERE intent_id = ?",
                (holder.owner, now + holder.ttl, it.intent_id),
            )
            taken.append(it)
    return taken


def restart(holder: Leaseholder, intent: Intent, now: float | None = None) -> Intent:
    """Move ``intent``'s time to now before sending it again (nothing matched it)."""
    now = time.time() if now is None else now
    with holder.ledger.transaction() as db:
        cur = db.execute(
            "UPDATE batch_intents SET requested_at = ?, expires_at = ? "
            "WHERE intent_id = ? AND owner = ?",
            (now, now + holder.ttl, intent.intent_id, holder.owner),
        )
        if cur.rowcount == 0:
            raise LedgerError(
                f"{holder.ledger.path}: batch intent {intent.intent_id} was taken by another "
                "process while this one held it; re-run to resume"
            )
    return Intent(intent.intent_id, intent.judge, now, holder.owner, now + holder.ttl, intent.items)


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
