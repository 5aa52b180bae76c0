"""The damage checks run when an existing ledger is opened.

:func:`check_ledger` checks the schema version, that every table and column of the core
schema is there, that the nonce salt is 64 hex digits, the coordination tables
of :data:`~evalkit.ledger._schema.LEASE_DDL` (optional: a ledger written before them
lacks them, and they are created on open) column by column when present, every lease
and batch intent row, and finally SQLite's ``quick_check``. Any failure is a
:class:`LedgerError` naming the file (and the table, row and field where there is one).
"""

from __future__ import annotations

import functools
import re
import sqlite3
from pathlib import Path

from evalkit.errors import LedgerError
from evalkit.ledger._claims import check_intents, check_leases
from evalkit.ledger._schema import LEASE_DDL

_SALT = re.compile(r"[0-9a-f]{64}")


@functools.cache
def schema_columns(ddl: str) -> dict[str, list[str]]:
    """Table -> columns of the schema ``ddl``."""
    db = sqlite3.connect(":memory:")
    try:
        db.executescript(ddl)
        tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        return {t: [c[1] for c in db.execute(f"PRAGMA table_info({t})")] for t in tables}
    finally:
        db.close()


def _columns(db: sqlite3.Connection, path: Path, table: str, columns: list[str]) -> None:
    have = {c[1] for c in db.execute(f"PRAGMA table_info({table})")}
    missing = [c for c in columns if c not in have]
    if missing:
        raise LedgerError(f"{path}: damaged ledger: table {table!r} has no column(s) {missing}")


def check_ledger(
    db: sqlite3.Connection,
    path: Path,
    meta: dict[str, str],
    tables: set[str],
    *,
    schema: str,
    core_ddl: str,
) -> None:
    """Check an existing ledger (see the module docstring); ``schema`` is the version
    this evalkit reads, ``core_ddl`` its required tables."""
    if meta["schema"] != schema:
        raise LedgerError(
            f"{path}: ledger schema {meta['schema']!r}, this evalkit reads {schema!r}"
        )
    for table, columns in schema_columns(core_ddl).items():
        if table not in tables:
            raise LedgerError(f"{path}: damaged ledger: table {table!r} is missing")
        _columns(db, path, table, columns)
    salt = meta.get("nonce_salt")
    if salt is None or not _SALT.fullmatch(salt):
        shown = "missing" if salt is None else f"{len(salt)} characters, not 64 hex digits"
        raise LedgerError(f"{path}: damaged ledger: meta nonce_salt is {shown}")
    optional = schema_columns(LEASE_DDL)
    for table, columns in optional.items():
        if table in tables:
            _columns(db, path, table, columns)
    if "leases" in tables:
        check_leases(db, path)
    if {"batch_intents", "batch_intent_items"} <= tables:
        check_intents(db, path)
    problems = [r[0] for r in db.execute("PRAGMA quick_check(5)")]
    if problems != ["ok"]:
        found = "; ".join(" ".join(p.split()) for p in problems)
        raise LedgerError(f"{path}: damaged ledger: {found}")
