"""The judge ledger: an embedded SQLite database (WAL) holding every judge request.

Tables::

    meta(key PRIMARY KEY, value)          schema version, creation time, nonce salt
    requests(request_key PRIMARY KEY, content_key, request_id, nonce, case_id, turn,
             dimensions JSON, framing_hash, constants_hash, judge, backend, model,
             params JSON, status, attempts, raw_response, problem, error,
             input_tokens, output_tokens, cache_read_tokens, cache_creation_tokens,
             cost_usd, latency_s, response_model, batch_id, created_at)
    results(request_key, dimension, bin, signal_present, evidence_turns JSON,
            rationale, injection_attempt; PRIMARY KEY (request_key, dimension))
    batches(batch_id PRIMARY KEY, judge, status, created_at, updated_at)
    batch_items(batch_id, request_key, request JSON; PRIMARY KEY (batch_id, request_key))

``status`` is ``ok``, ``unparseable``, ``refused`` or ``error``. Only ``ok`` requests
have ``results`` rows; :func:`load_ledger` still yields one row per requested
dimension for the others, with ``bin`` None, so failures are counted per dimension.
A row whose status is not ``error`` is final: :meth:`Ledger.record` never overwrites
it. An ``error`` row is replaced by the next outcome, whose ``attempts``, tokens and
cost then include those of the error row. Each write is one transaction, so a process
killed at any moment loses at most the calls in flight.

The nonce salt lives in ``meta`` (unless ``EVALKIT_NONCE_SALT`` is set, which then
wins and is never stored). JSONL export leaves the salt out on purpose: an exported
ledger is committed and read by people who also write cases, and with the salt they
could compute the nonces of requests yet to be sent to this ledger. Each request's
own nonce *is* exported, so its exact prompt can be rebuilt. Importing into another
ledger does not need the salt: keys do not depend on it.

Secrets. Every row is scrubbed (:mod:`evalkit.secrets`) where it is written: in
:meth:`Ledger._insert`, which :meth:`Ledger.record` and the import both use, and in
:meth:`Ledger.add_batch`; the JSONL export is scrubbed again (a ledger written by an
older evalkit may hold a secret). Every field goes through the scrubber except the
identity digests (:data:`DIGEST_FIELDS`: hex, so they cannot hold a key-shaped string,
and scrubbing a coincidence would break the ledger). A judge spec is compared in its
scrubbed form wherever it is looked up (open batches, ``replay:JUDGE``), so a spec that
carries a credential (``openai:http://user:KEY@host/v1:model``) is stored as
``openai:http://[redacted]@host/v1:model`` and still finds its own rows.

Imports. :meth:`Ledger.import_jsonl` validates every line of the export first
(:mod:`evalkit.judge._validate`: the rules of a live answer, and the keys rebuilt from
the catalogue where they can be) and then writes all of it in one transaction, or
raises :class:`LedgerError` and writes nothing. :func:`import_jsonl` validates before
it even opens the ledger, so a refused import does not create a ledger file.

Damage. Opening an existing ledger runs the checks of :mod:`evalkit.judge._damage`
(schema version, tables, columns, salt, lease and intent rows, SQLite's
``quick_check``); any failure, and any SQLite error later (a page damaged since), is a
:class:`LedgerError` naming the file.

Sharing. Leases and batch intents (:mod:`evalkit.judge._lease`,
:mod:`evalkit.judge._intent`) live in tables of their own, which none of the readers
here touch: several processes can work on one ledger without asking twice (ADR-0019).
"""

from __future__ import annotations

import functools
import json
import os
import secrets
import sqlite3
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Concatenate, ParamSpec, TypeVar

import pandas as pd

from evalkit.catalogue import Catalogue
from evalkit.errors import LedgerError
from evalkit.judge._damage import check_ledger
from evalkit.judge._lease import LEASE_DDL
from evalkit.judge._records import (
    FINAL_STATUSES,
    JSON_FIELDS,
    REQUEST_FIELDS,
    STATUSES,
    frame_rows_jsonl,
    is_record_jsonl,
    records_frame,
)
from evalkit.judge._validate import read_jsonl
from evalkit.secrets import Scrubber, scrubber

if TYPE_CHECKING:
    from evalkit.judge._lease import Leaseholder

LEDGER_SCHEMA = "evalkit-judge-ledger/1"
SALT_ENV = "EVALKIT_NONCE_SALT"

_DDL = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS requests (
    request_key TEXT PRIMARY KEY, content_key TEXT NOT NULL, request_id TEXT NOT NULL,
    nonce TEXT NOT NULL, case_id TEXT NOT NULL, turn INTEGER NOT NULL,
    dimensions TEXT NOT NULL, framing_hash TEXT NOT NULL, constants_hash TEXT NOT NULL,
    judge TEXT NOT NULL, backend TEXT NOT NULL, model TEXT NOT NULL, params TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('ok', 'unparseable', 'refused', 'error')),
    attempts INTEGER NOT NULL, raw_response TEXT, problem TEXT, error TEXT,
    input_tokens INTEGER NOT NULL, output_tokens INTEGER NOT NULL,
    cache_read_tokens INTEGER NOT NULL, cache_creation_tokens INTEGER NOT NULL,
    cost_usd REAL, latency_s REAL NOT NULL, response_model TEXT, batch_id TEXT,
    created_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS requests_content ON requests (content_key);
CREATE TABLE IF NOT EXISTS results (
    request_key TEXT NOT NULL REFERENCES requests (request_key) ON DELETE CASCADE,
    dimension TEXT NOT NULL, bin TEXT NOT NULL, signal_present INTEGER,
    evidence_turns TEXT NOT NULL, rationale TEXT NOT NULL, injection_attempt INTEGER NOT NULL,
    PRIMARY KEY (request_key, dimension)
);
CREATE TABLE IF NOT EXISTS batches (
    batch_id TEXT PRIMARY KEY, judge TEXT NOT NULL, status TEXT NOT NULL,
    created_at TEXT NOT NULL, updated_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS batch_items (
    batch_id TEXT NOT NULL REFERENCES batches (batch_id), request_key TEXT NOT NULL,
    request TEXT NOT NULL, PRIMARY KEY (batch_id, request_key)
);
"""


#: Fields never scrubbed: hex digests that identify a request (see the module docstring).
DIGEST_FIELDS = frozenset(
    {"request_key", "content_key", "request_id", "nonce", "framing_hash", "constants_hash"}
)

_P = ParamSpec("_P")
_R = TypeVar("_R")


def _named_errors(
    method: Callable[Concatenate[Ledger, _P], _R],
) -> Callable[Concatenate[Ledger, _P], _R]:
    """Turn an SQLite error (a damaged file, a locked or read-only database) into a
    :class:`LedgerError` naming the ledger."""

    @functools.wraps(method)
    def wrapper(self: Ledger, /, *args: _P.args, **kwargs: _P.kwargs) -> _R:
        try:
            return method(self, *args, **kwargs)
        except sqlite3.DatabaseError as exc:
            raise LedgerError(f"{self.path}: the ledger cannot be used ({exc})") from None

    return wrapper


def scrub_record(rec: dict[str, Any], s: Scrubber) -> dict[str, Any]:
    """A copy of ``rec`` with every field but :data:`DIGEST_FIELDS` scrubbed."""
    return {k: v if k in DIGEST_FIELDS else s.scrub_value(v) for k, v in rec.items()}


def now_iso() -> str:
    """UTC timestamp with microseconds, ISO 8601."""
    return datetime.now(UTC).isoformat(timespec="microseconds")


def _bool_or_none(value: Any) -> bool | None:
    return None if value is None else bool(value)


class Ledger:
    """An open ledger. Use as a context manager; one instance per thread.

    ``Ledger(path)`` creates the file if needed; with ``create=False`` a missing
    file or a database that is not a ledger is a :class:`LedgerError`. A database
    with tables but no ``meta`` table is never made into a ledger, and an existing
    ledger that is damaged (see the module docstring) is a :class:`LedgerError` either
    way. Every method that writes commits before it returns; every method turns an
    SQLite error into a :class:`LedgerError` naming the file.
    """

    def __init__(self, path: str | Path, *, create: bool = True) -> None:
        self.path = Path(path)
        self.leases: Leaseholder | None = None  # set by a Leaseholder of this run
        if self.path.suffix == ".jsonl":
            raise LedgerError(f"{self.path}: a JSONL file is an export; import it into a ledger")
        if not create and not self.path.is_file():
            raise LedgerError(f"{self.path}: no such ledger")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self._db = sqlite3.connect(self.path, timeout=30.0, isolation_level=None)
        except sqlite3.DatabaseError as exc:
            raise LedgerError(f"{self.path}: cannot open the ledger ({exc})") from None
        try:
            self._open(create)
        except sqlite3.DatabaseError as exc:
            self._db.close()
            raise LedgerError(
                f"{self.path}: not a judge ledger, or a damaged one ({exc})"
            ) from None
        except BaseException:
            self._db.close()
            raise

    def _open(self, create: bool) -> None:
        db = self._db
        db.execute("PRAGMA busy_timeout=30000")
        tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        if "meta" not in tables and (tables or not create):
            raise LedgerError(f"{self.path}: not a judge ledger (no meta table)")
        found = dict(db.execute("SELECT key, value FROM meta").fetchall()) if tables else {}
        if "schema" in found:
            check_ledger(db, self.path, found, tables, schema=LEDGER_SCHEMA, core_ddl=_DDL)
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=FULL")
        db.execute("PRAGMA foreign_keys=ON")
        db.executescript(_DDL)
        db.executescript(LEASE_DDL)
        if "schema" not in found:
            with self._tx() as tx:  # re-read: another process may have just made it
                if tx.execute("SELECT 1 FROM meta WHERE key = 'schema'").fetchone():
                    return
                tx.execute("INSERT INTO meta VALUES ('schema', ?)", (LEDGER_SCHEMA,))
                tx.execute("INSERT INTO meta VALUES ('created_at', ?)", (now_iso(),))
                tx.execute("INSERT INTO meta VALUES ('nonce_salt', ?)", (secrets.token_hex(32),))

    def __enter__(self) -> Ledger:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._db.close()

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """One write transaction (``BEGIN IMMEDIATE``: the write lock, across processes);
        an SQLite error inside it is a :class:`LedgerError` naming the file."""
        try:
            with self._tx() as db:
                yield db
        except sqlite3.DatabaseError as exc:
            raise LedgerError(f"{self.path}: the ledger cannot be used ({exc})") from None

    @contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
        self._db.execute("BEGIN IMMEDIATE")
        try:
            yield self._db
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")

    @property
    @_named_errors
    def salt(self) -> bytes:
        """The nonce salt: ``EVALKIT_NONCE_SALT`` if set, else this ledger's own."""
        env = os.environ.get(SALT_ENV)
        if env:
            return env.encode("utf-8")
        row = self._db.execute("SELECT value FROM meta WHERE key = 'nonce_salt'").fetchone()
        return bytes.fromhex(row[0])

    # -- requests -----------------------------------------------------------------

    @_named_errors
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

    @_named_errors
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

    @_named_errors
    def record(self, rec: dict[str, Any]) -> bool:
        """Write one request (``REQUEST_FIELDS`` plus ``results``) in one transaction.

        Returns False, writing nothing, if the key already holds a final status. With a
        :class:`~evalkit.judge._lease.Leaseholder` attached, a request whose lease this
        run held and lost (another process took it over) raises
        :class:`~evalkit.judge._takeover.LeaseLost`, writing nothing (ADR-0032).
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

    @_named_errors
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

    @_named_errors
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

    def _json(self, text: Any, key: str, column: str) -> Any:
        try:
            return json.loads(text)
        except (TypeError, ValueError) as exc:
            raise LedgerError(
                f"{self.path}: damaged ledger: request {key!r} {column} is not JSON ({exc})"
            ) from None

    @_named_errors
    def frame(self, keys: Sequence[str] | None = None) -> pd.DataFrame:
        """The long frame of :func:`load_ledger`, limited to ``keys`` if given."""
        return records_frame(self.records(keys, with_raw=False))

    # -- batches --------------------------------------------------------------------

    @_named_errors
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
        transaction (:mod:`evalkit.judge._intent`). A batch already remembered is left as
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

    @_named_errors
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

    @_named_errors
    def batch_ids(self) -> set[str]:
        """Every batch id this ledger knows, open or not."""
        return {r[0] for r in self._db.execute("SELECT batch_id FROM batches")}

    @_named_errors
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

    @_named_errors
    def lease_rows(self, keys: Sequence[str]) -> list[tuple[Any, ...]]:
        """The ``leases`` rows of ``keys`` (at most 500), unvalidated."""
        q = ",".join("?" * len(keys))
        return self._db.execute(
            "SELECT request_key, owner, expires_at, claimed_at FROM leases "
            f"WHERE request_key IN ({q})",
            list(keys),
        ).fetchall()

    @_named_errors
    def close_batch(self, batch_id: str, status: str = "collected") -> None:
        with self._tx() as db:
            db.execute(
                "UPDATE batches SET status = ?, updated_at = ? WHERE batch_id = ?",
                (status, now_iso(), batch_id),
            )

    # -- JSONL ------------------------------------------------------------------------

    @_named_errors
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
        keys it can rebuild; see :mod:`evalkit.judge._validate`); any problem raises
        :class:`LedgerError` naming the file, line and field, and nothing is written.
        Returns counts: ``added``, ``identical`` (already present, same content),
        ``kept`` (a different final row was already present and was kept).
        """
        return self.import_records(read_jsonl(path, catalogue=catalogue))

    @_named_errors
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


def load_ledger(path: str | Path, *, catalogue: Catalogue | None = None) -> pd.DataFrame:
    """The ledger at ``path`` as a long DataFrame.

    ``path`` is a SQLite ledger, a ``.jsonl`` export (one request per line, see
    :meth:`Ledger.export_jsonl`) or a ``.jsonl`` of this frame's rows (one row per
    line, as ``DataFrame.to_json(orient="records", lines=True)`` writes it).

    With ``catalogue`` (the gate, the prevalence pool: whatever is evidence), a JSONL
    export is validated against it as :func:`import_jsonl` validates it (request and
    content keys, hashes and bins rebuilt from the catalogue), and a frame-rows JSONL is
    refused: its rows carry no request to rebuild, so nothing in it can be checked
    (issue #30: a renamed baseline ledger with the consensus for bins passed the gate).

    One row per (request, requested dimension), columns :data:`LEDGER_COLUMNS`.
    Failed requests (``unparseable``, ``refused``, ``error``) give one row per
    requested dimension with ``bin`` None. Token, cost, latency and attempt columns
    describe the whole request and repeat on each of its dimension rows: sum them
    over ``frame.drop_duplicates("request_key")``. Raises :class:`LedgerError` if
    the file does not exist, is not a ledger or is damaged, or if a line of a JSONL
    export breaks the rules of :mod:`evalkit.judge._validate` (bins and keys are checked
    only with ``catalogue``).
    """
    p = Path(path)
    if not p.exists():
        raise LedgerError(f"{p}: no such ledger")
    if p.is_dir():
        raise LedgerError(f"{p}: a folder, not a ledger (give the .sqlite file or a .jsonl)")
    if p.suffix == ".jsonl":
        if is_record_jsonl(p):
            return records_frame(read_jsonl(p, catalogue=catalogue))
        if catalogue is not None:
            raise LedgerError(
                f"{p}: a JSONL of frame rows, not a ledger export: its answers cannot be "
                "checked against the catalogue, so they are not evidence. Give the SQLite "
                "ledger or its export (`evalkit judge ... --export-jsonl FILE`), which is "
                "validated; an export goes into a ledger with `--import-jsonl FILE`"
            )
        return frame_rows_jsonl(p)
    with Ledger(p, create=False) as ledger:
        return ledger.frame()


def export_jsonl(ledger: str | Path, path: str | Path) -> int:
    """Export the SQLite ledger ``ledger`` to JSONL at ``path``; return the request count."""
    with Ledger(ledger, create=False) as led:
        return led.export_jsonl(path)


def import_jsonl(ledger: str | Path, path: str | Path, *, catalogue: Catalogue) -> dict[str, int]:
    """Import a JSONL export into ``ledger`` (created if missing), all or nothing.

    The export is validated (:meth:`Ledger.import_jsonl`) before the ledger is opened,
    so a refused import leaves no ledger file behind. Returns the counts of
    :meth:`Ledger.import_jsonl`.
    """
    records = read_jsonl(path, catalogue=catalogue)
    with Ledger(ledger) as led:
        return led.import_records(records)
