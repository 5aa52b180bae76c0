"""A ledger's SQLite file: opened (created, or checked for damage), and transactions.

:class:`LedgerFile` is what every ledger operation stands on: it opens the file in WAL
mode, creates the tables (:mod:`evalkit.ledger._schema`) or runs the damage checks on
an existing ledger (:mod:`evalkit.ledger._damage`), gives one write transaction at a
time, and turns every SQLite error into a :class:`~evalkit.errors.LedgerError` naming
the file. The rows themselves are read and written by :class:`~evalkit.ledger.Ledger`.
"""

from __future__ import annotations

import functools
import json
import os
import secrets
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Concatenate, ParamSpec, Protocol, Self, TypeVar

from evalkit.errors import LedgerError
from evalkit.ledger._damage import check_ledger
from evalkit.ledger._schema import DDL, LEASE_DDL, LEDGER_SCHEMA, SALT_ENV, now_iso

_P = ParamSpec("_P")
_R = TypeVar("_R")
_L = TypeVar("_L", bound="LedgerFile")


class RunLeases(Protocol):
    """The leases of the run using this ledger (:class:`~evalkit.ledger._lease.Leaseholder`,
    named here by what is asked of it, so that the file does not import the leases):
    claim a request before sending it; drop, inside the recording transaction, the lease
    of the request recorded."""

    def claim(self, key: str, now: float | None = None) -> bool: ...

    def release(self, db: sqlite3.Connection, key: str, *, sent: bool = True) -> None: ...


def named_errors(
    method: Callable[Concatenate[_L, _P], _R],
) -> Callable[Concatenate[_L, _P], _R]:
    """Turn an SQLite error (a damaged file, a locked or read-only database) into a
    :class:`LedgerError` naming the ledger."""

    @functools.wraps(method)
    def wrapper(self: _L, /, *args: _P.args, **kwargs: _P.kwargs) -> _R:
        try:
            return method(self, *args, **kwargs)
        except sqlite3.DatabaseError as exc:
            raise LedgerError(f"{self.path}: the ledger cannot be used ({exc})") from None

    return wrapper


def _create_whole(path: Path) -> None:
    """Make a new ledger at ``path`` without ever showing a partial one there: build it
    under a private name in the same folder, close it (SQLite folds its WAL back in), then
    hard-link it to ``path``, which fails if another process got there first (its ledger
    stands). A file system without hard links falls back to an exclusive rename."""
    staging = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.creating")
    try:
        maker = LedgerFile.__new__(LedgerFile)
        maker.path, maker.leases = staging, None
        maker._connect(create=True)
        maker.close()
        try:
            os.link(staging, path)
        except FileExistsError:
            pass
        except OSError:  # no hard links here: a rename, unless the path appeared meanwhile
            if not path.exists():
                os.replace(staging, path)
    finally:
        for leftover in (staging, *(Path(f"{staging}{x}") for x in ("-wal", "-shm"))):
            leftover.unlink(missing_ok=True)


class LedgerFile:
    """An open ledger file. Use as a context manager; one instance per thread.

    ``LedgerFile(path)`` creates the file if needed; with ``create=False`` a missing
    file or a database that is not a ledger is a :class:`LedgerError`. A database
    with tables but no ``meta`` table is never made into a ledger, and an existing
    ledger that is damaged (:mod:`evalkit.ledger._damage`) is a :class:`LedgerError`
    either way. A new ledger appears whole: it is made under a private name beside its
    path and linked into place, so a process reading the path while another creates it
    (studies running side by side) never finds an empty or half-made database.
    """

    def __init__(self, path: str | Path, *, create: bool = True) -> None:
        self.path = Path(path)
        self.leases: RunLeases | None = None  # set by a Leaseholder of this run
        if self.path.suffix == ".jsonl":
            raise LedgerError(f"{self.path}: a JSONL file is an export; import it into a ledger")
        if not create and not self.path.is_file():
            raise LedgerError(f"{self.path}: no such ledger")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if create and not self.path.exists():
            try:
                _create_whole(self.path)
            except OSError as exc:
                raise LedgerError(
                    f"{self.path}: cannot create the ledger ({exc.strerror or exc})"
                ) from None
        self._connect(create)

    def _connect(self, create: bool) -> None:
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
            check_ledger(db, self.path, found, tables, schema=LEDGER_SCHEMA, core_ddl=DDL)
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=FULL")
        db.execute("PRAGMA foreign_keys=ON")
        db.executescript(DDL)
        db.executescript(LEASE_DDL)
        if "schema" not in found:
            with self._tx() as tx:  # re-read: another process may have just made it
                if tx.execute("SELECT 1 FROM meta WHERE key = 'schema'").fetchone():
                    return
                tx.execute("INSERT INTO meta VALUES ('schema', ?)", (LEDGER_SCHEMA,))
                tx.execute("INSERT INTO meta VALUES ('created_at', ?)", (now_iso(),))
                tx.execute("INSERT INTO meta VALUES ('nonce_salt', ?)", (secrets.token_hex(32),))

    def __enter__(self) -> Self:
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
    @named_errors
    def salt(self) -> bytes:
        """The nonce salt: ``EVALKIT_NONCE_SALT`` if set, else this ledger's own."""
        env = os.environ.get(SALT_ENV)
        if env:
            return env.encode("utf-8")
        row = self._db.execute("SELECT value FROM meta WHERE key = 'nonce_salt'").fetchone()
        return bytes.fromhex(row[0])

    def _json(self, text: Any, key: str, column: str) -> Any:
        try:
            return json.loads(text)
        except (TypeError, ValueError) as exc:
            raise LedgerError(
                f"{self.path}: damaged ledger: request {key!r} {column} is not JSON ({exc})"
            ) from None
