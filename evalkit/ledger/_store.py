"""The :class:`Ledger`: the one class that reads and writes a ledger's rows.

Opening the file and its transactions are :class:`~evalkit.ledger._file.LedgerFile`'s.
The tables, the status rules, the nonce salt and the scrubbing of secrets are described
in :mod:`evalkit.ledger._schema`; leases and batch intents write their own tables through
:meth:`Ledger.transaction` (:mod:`evalkit.ledger._lease`, :mod:`evalkit.ledger._intent`).
Reading a ledger or an export into a frame, and the file-level JSONL export and import,
are in :mod:`evalkit.ledger._load`.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalkit.errors import LedgerError
from evalkit.ledger._file import LedgerFile, named_errors
from evalkit.ledger._records import (
    FINAL_STATUSES,
    JSON_FIELDS,
    REQUEST_FIELDS,
    STATUSES,
    records_frame,
)
from evalkit.ledger._schema import now_iso, scrub_record
from evalkit.ledger._validate import read_jsonl
from evalkit.secrets import Scrubber, scrubber

if TYPE_CHECKING:
    import pandas as pd

    from evalkit.catalogue import Catalogue


def _bool_or_none(value: Any) -> bool | None:
    return None if value is None else bool(value)


class Ledger(LedgerFile):
    """An open ledger. Use as a context manager; one instance per thread.

    ``Ledger(path)`` creates the file if needed; with ``create=False`` a missing
    file or a database that is not a ledger is a :class:`LedgerError`. A database
    with tables but no ``meta`` table is never made into a ledger, and an existing
    ledger that is damaged (:mod:`evalkit.ledger._damage`) is a :class:`LedgerError` either
    way. Every method that writes commits before it returns; every method turns an
    SQLite error into a :class:`LedgerError` naming the file.
    """

    # -- requests -----------------------------------------------------------------

    @named_errors
    def statuses(self, keys: Iterable[str]) -> dict[str, str]:
        """Status of each of ``keys`` that has a row."""
        out: dict[str, str] = {}
        keys = list(keys)
        for i in range(0, len(keys), 500):
            chunk = keys[i : i + 500]
            q = ",".join("?" * len(chunk))
            rows = self._db.execute(
                f"SELECT request_key, status FROM requests WHERE request_key IN ({q})", chunk
            )
            out.update(dict(rows.fetchall()))
        return out

    @named_errors
    def by_content(self, content_keys: Iterable[str]) -> dict[str, list[dict[str, Any]]]:
        """For each content key, its rows (request_key, judge, status, created_at)."""
        out: dict[str, list[dict[str, Any]]] = {}
        keys = list(content_keys)
        for i in range(0, len(keys), 500):
            chunk = keys[i : i + 500]
            q = ",".join("?" * len(chunk))
            rows = self._db.execute(
                "SELECT content_key, request_key, judge, status, created_at FROM requests "
                f"WHERE content_key IN ({q})",
                chunk,
            )
            for ck, rk, judge, status, created in rows.fetchall():
                out.setdefault(ck, []).append(
                    {"request_key": rk, "judge": judge, "status": status, "created_at": created}
                )
        return out

    @named_errors
    def record(self, rec: dict[str, Any]) -> bool:
        """Write one request (``REQUEST_FIELDS`` plus ``results``) in one transaction.

        Returns False, writing nothing, if the key already holds a final status. With a
        :class:`~evalkit.ledger._lease.Leaseholder` attached, a request whose lease this
        run held and lost (another process took it over) raises
        :class:`~evalkit.judging._takeover.LeaseLost`, writing nothing (ADR-0032).
        """
        if rec["status"] not in STATUSES:
            raise LedgerError(f"request {rec['request_key']}: unknown status {rec['status']!r}")
        with self._tx() as db:
            if self.leases is not None:  # recorded: the lease has done its work
                self.leases.release(db, rec["request_key"], sent=bool(rec.get("attempts")))
            old = db.execute(
                "SELECT status, attempts, input_tokens, output_tokens, cache_read_tokens, "
                "cache_creation_tokens, cost_usd FROM requests WHERE request_key = ?",
                (rec["request_key"],),
            ).fetchone()
            if old is not None and old[0] in FINAL_STATUSES:
                return False
            row = dict(rec)
            if old is not None:
                row["attempts"] += old[1]
                for j, name in enumerate(
                    ("input_tokens", "output_tokens", "cache_read_tokens", "cache_creation_tokens"),
                    start=2,
                ):
                    row[name] += old[j]
                if row["cost_usd"] is not None and old[6] is not None:
                    row["cost_usd"] += old[6]
                db.execute("DELETE FROM requests WHERE request_key = ?", (rec["request_key"],))
            self._insert(db, row)
        return True

    @named_errors
    def record_all(self, recs: Sequence[dict[str, Any]]) -> int:
        """Write new requests in ONE transaction (all or none, e.g. on a full disk);
        keys already holding any row are left as they are. Returns how many were written."""
        for rec in recs:
            if rec["status"] not in STATUSES:
                raise LedgerError(f"request {rec['request_key']}: unknown status {rec['status']!r}")
        written = 0
        with self._tx() as db:
            for rec in recs:
                old = db.execute(
                    "SELECT status FROM requests WHERE request_key = ?", (rec["request_key"],)
                ).fetchone()
                if old is not None and old[0] in FINAL_STATUSES:
                    continue
                if old is not None:
                    db.execute("DELETE FROM requests WHERE request_key = ?", (rec["request_key"],))
                self._insert(db, rec)
                written += 1
        return written

    @staticmethod
    def _insert(db: sqlite3.Connection, row: dict[str, Any], s: Scrubber | None = None) -> None:
        """Write one request and its results: the single place rows are written, and
        so where they are scrubbed (``s``: the secrets now, by default)."""
        row = scrub_record(row, s or scrubber())
        values = [
            json.dumps(row[f], sort_keys=True) if f in JSON_FIELDS else row[f]
            for f in REQUEST_FIELDS
        ]
        db.execute(
            f"INSERT INTO requests ({','.join(REQUEST_FIELDS)}) "
            f"VALUES ({','.join('?' * len(REQUEST_FIELDS))})",
            values,
        )
        for res in row.get("results") or []:
            db.execute(
                "INSERT INTO results (request_key, dimension, bin, signal_present, "
                "evidence_turns, rationale, injection_attempt) VALUES (?,?,?,?,?,?,?)",
                (
                    row["request_key"],
                    res["dimension"],
                    res["bin"],
                    None if res["signal_present"] is None else int(res["signal_present"]),
                    json.dumps(list(res["evidence_turns"])),
                    res["rationale"],
                    int(res["injection_attempt"]),
                ),
            )

    @named_errors
    def records(
        self, keys: Sequence[str] | None = None, *, with_raw: bool = True
    ) -> list[dict[str, Any]]:
        """Requests as dicts (``REQUEST_FIELDS`` plus ``results``), oldest first;
        ``with_raw=False`` leaves ``raw_response`` None, unread (most of a big ledger)."""
        cols = ",".join(
            "NULL" if f == "raw_response" and not with_raw else f for f in REQUEST_FIELDS
        )
        rows = self._db.execute(
            f"SELECT {cols} FROM requests ORDER BY created_at, request_key"
        ).fetchall()
        wanted = None if keys is None else set(keys)
        results: dict[str, list[dict[str, Any]]] = {}
        for r in self._db.execute(
            "SELECT request_key, dimension, bin, signal_present, evidence_turns, rationale, "
            "injection_attempt FROM results ORDER BY request_key, dimension"
        ):
            results.setdefault(r[0], []).append(
                {
                    "dimension": r[1],
                    "bin": r[2],
                    "signal_present": _bool_or_none(r[3]),
                    "evidence_turns": self._json(r[4], r[0], "results.evidence_turns"),
                    "rationale": r[5],
                    "injection_attempt": bool(r[6]),
                }
            )
        out = []
        for row in rows:
            rec = dict(zip(REQUEST_FIELDS, row, strict=True))
            if wanted is not None and rec["request_key"] not in wanted:
                continue
            for f in JSON_FIELDS:
                rec[f] = self._json(rec[f], rec["request_key"], f)
            rec["results"] = results.get(rec["request_key"], [])
            out.append(rec)
        return out

    @named_errors
    def frame(self, keys: Sequence[str] | None = None) -> pd.DataFrame:
        """The long frame of :func:`load_ledger`, limited to ``keys`` if given."""
        return records_frame(self.records(keys, with_raw=False))

    # -- batches --------------------------------------------------------------------

    @named_errors
    def add_batch(
        self,
        batch_id: str,
        judge: str,
        items: dict[str, dict[str, Any]],
        *,
        intent: str | None = None,
    ) -> None:
        """Remember a submitted batch and the metadata of each of its requests (scrubbed
        like a request row); with ``intent``, delete that batch intent in the same
        transaction (:mod:`evalkit.ledger._intent`). A batch already remembered is left as
        it is: another process adopted it while this one, suspended past its intent's
        lease, was still creating it (ADR-0032)."""
        s = scrubber()
        with self._tx() as db:
            if intent is not None:
                db.execute("DELETE FROM batch_intents WHERE intent_id = ?", (intent,))
            if db.execute("SELECT 1 FROM batches WHERE batch_id = ?", (batch_id,)).fetchone():
                return
            ts = now_iso()
            db.execute(
                "INSERT INTO batches VALUES (?, ?, 'open', ?, ?)",
                (batch_id, s.scrub(judge), ts, ts),
            )
            db.executemany(
                "INSERT INTO batch_items VALUES (?, ?, ?)",
                [
                    (batch_id, k, json.dumps(scrub_record(v, s), sort_keys=True))
                    for k, v in items.items()
                ],
            )

    @named_errors
    def open_batches(self, judge: str) -> dict[str, dict[str, dict[str, Any]]]:
        """Open batches of ``judge`` (compared scrubbed, as stored): batch id -> request
        key -> request metadata."""
        out: dict[str, dict[str, dict[str, Any]]] = {}
        for (bid,) in self._db.execute(
            "SELECT batch_id FROM batches WHERE judge = ? AND status = 'open' ORDER BY created_at",
            (scrubber().scrub(judge),),
        ).fetchall():
            items = self._db.execute(
                "SELECT request_key, request FROM batch_items WHERE batch_id = ?", (bid,)
            ).fetchall()
            out[bid] = {k: self._json(v, k, "batch_items.request") for k, v in items}
        return out

    @named_errors
    def batch_ids(self) -> set[str]:
        """Every batch id this ledger knows, open or not."""
        return {r[0] for r in self._db.execute("SELECT batch_id FROM batches")}

    @named_errors
    def awaited(self, judge: str) -> set[str]:
        """Request keys awaited in an open batch or a batch intent of ``judge``."""
        rows = self._db.execute(
            "SELECT request_key FROM batch_items JOIN batches USING (batch_id) "
            "WHERE batches.status = 'open' AND batches.judge = ? UNION "
            "SELECT request_key FROM batch_intent_items JOIN batch_intents USING (intent_id) "
            "WHERE batch_intents.judge = ?",
            (scrubber().scrub(judge),) * 2,
        )
        return {r[0] for r in rows}

    @named_errors
    def lease_rows(self, keys: Sequence[str]) -> list[tuple[Any, ...]]:
        """The ``leases`` rows of ``keys`` (at most 500), unvalidated."""
        q = ",".join("?" * len(keys))
        return self._db.execute(
            "SELECT request_key, owner, expires_at, claimed_at FROM leases "
            f"WHERE request_key IN ({q})",
            list(keys),
        ).fetchall()

    @named_errors
    def close_batch(self, batch_id: str, status: str = "collected") -> None:
        with self._tx() as db:
            db.execute(
                "UPDATE batches SET status = ?, updated_at = ? WHERE batch_id = ?",
                (status, now_iso(), batch_id),
            )

    # -- JSONL ------------------------------------------------------------------------

    @named_errors
    def export_jsonl(self, path: str | Path) -> int:
        """Write every request as one JSON line (sorted keys, scrubbed), oldest first;
        return the count."""
        s = scrubber()
        recs = [scrub_record(r, s) for r in self.records()]
        Path(path).write_text(
            "".join(json.dumps(r, sort_keys=True, ensure_ascii=False) + "\n" for r in recs),
            encoding="utf-8",
        )
        return len(recs)

    def import_jsonl(self, path: str | Path, *, catalogue: Catalogue) -> dict[str, int]:
        """Add the requests of a JSONL export, all or nothing. Existing final rows win.

        Every line is validated first against ``catalogue`` (its frozen bins, and the
        keys it can rebuild; see :mod:`evalkit.ledger._validate`); any problem raises
        :class:`LedgerError` naming the file, line and field, and nothing is written.
        Returns counts: ``added``, ``identical`` (already present, same content),
        ``kept`` (a different final row was already present and was kept).
        """
        return self.import_records(read_jsonl(path, catalogue=catalogue))

    @named_errors
    def import_records(
        self,
        records: Sequence[dict[str, Any]],
        *,
        check: Callable[[dict[str, dict[str, Any]]], None] | None = None,
        before_commit: Callable[[], None] | None = None,
    ) -> dict[str, int]:
        """Write validated records in one transaction (see :meth:`import_jsonl`).

        ``check`` is given the rows the ledger holds for these requests (by request key,
        as :meth:`records` gives them), read inside the transaction, under the write lock:
        no other process writes between what it sees and the write. It may raise to
        write nothing. ``before_commit`` runs once the rows are written, just before the
        commit, so a caller can make the commit its last step; should it raise, nothing
        is written. Either exception goes through as raised."""
        counts = {"added": 0, "identical": 0, "kept": 0}
        s = scrubber()
        with self._tx() as db:
            present = {r["request_key"]: r for r in self.records()}
            if check is not None:
                keys = {r["request_key"] for r in records}
                check({k: r for k, r in present.items() if k in keys})
            for rec in records:
                clean = scrub_record(rec, s)
                old = present.get(clean["request_key"])
                if old is not None and old["status"] in FINAL_STATUSES:
                    counts["identical" if old == clean else "kept"] += 1
                    continue
                db.execute("DELETE FROM requests WHERE request_key = ?", (clean["request_key"],))
                self._insert(db, clean, s)
                counts["added"] += 1
            if before_commit is not None:
                before_commit()
        return counts
