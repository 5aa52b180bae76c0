"""Batch intents: what a run is about to submit as a Message Batch, written down first.

Creating a batch and learning its id are one HTTP call; a process killed during it (or
after it returned, before the id reached the ledger) would orphan a batch that a re-run
pays for again. So before the create, :func:`begin` writes an *intent* in one
transaction: an id, the judge, the request keys with their metadata, their count, the
wall-clock time, and an owner with an expiry as for a lease (:mod:`evalkit.ledger._lease`;
the owner renews it while the create is in flight). Once the create returns,
:meth:`~evalkit.ledger._store.Ledger.add_batch` records the batch and deletes the
intent in one transaction.

An intent still in the ledger when its lease has expired is an orphan: the create may
or may not have reached the server. :func:`take_orphans` hands it to the current run,
which looks for the batch among the provider's batches
(:func:`evalkit.judging._batches.candidates`: same count,
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
import secrets
import sqlite3
import time
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from evalkit.errors import LedgerError
from evalkit.ledger._claims import Intent, read_intents
from evalkit.ledger._records import FINAL_STATUSES
from evalkit.secrets import scrubber

if TYPE_CHECKING:
    from evalkit.ledger._lease import Leaseholder


def intents(holder: Leaseholder, judge: str) -> list[Intent]:
    """The intents of ``judge`` (compared scrubbed, as stored), oldest first."""
    with holder.ledger.transaction() as db:
        return read_intents(db, holder.ledger.path, judge)


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
        for it in read_intents(db, holder.ledger.path, judge):
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
