"""Lease and batch-intent rows (claims by an owner, with an expiry), read strictly.

Both tables are ledger input like any other: a damaged row (an owner not
``host/pid/token``, a time that is not a finite number, an intent whose items do not
match its count) is a :class:`~evalkit.errors.LedgerError` naming the file, the row and
the field, never read as an expired claim: treating it as expired could send a request
another process is sending. The open-time damage check (:mod:`evalkit.ledger._damage`)
reads every row through here, and so do leases (:mod:`evalkit.ledger._lease`) and
intents (:mod:`evalkit.ledger._intent`).
"""

from __future__ import annotations

import json
import math
import re
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evalkit.errors import LedgerError
from evalkit.secrets import scrubber

OWNER = re.compile(r"[^/\s]{1,255}/[0-9]{1,10}/[0-9a-f]{16}")
KEY = re.compile(r"[0-9a-f]{64}")
_INTENT_ID = re.compile(r"intent_[0-9a-f]{32}")


def check_time(path: Path, what: str, field: str, value: Any) -> float:
    """``value`` as finite seconds, or :class:`LedgerError` naming ``what`` and ``field``."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise LedgerError(
            f"{path}: damaged ledger: {what}: {field} is {value!r}, not a time in seconds"
        )
    return float(value)


def check_owner(path: Path, what: str, value: Any) -> str:
    if not isinstance(value, str) or not OWNER.fullmatch(value):
        raise LedgerError(
            f"{path}: damaged ledger: {what}: owner is {value!r}, not host/pid/token "
            "(if no evalkit process is using this ledger, delete that row)"
        )
    return value


def check_lease(path: Path, row: Sequence[Any]) -> tuple[str, str, float, float]:
    """A ``leases`` row ``(request_key, owner, expires_at, claimed_at)``, validated."""
    key, owner, expires, claimed = row
    if not isinstance(key, str) or not KEY.fullmatch(key):
        raise LedgerError(f"{path}: damaged ledger: lease of {key!r}: not a request key")
    what = f"lease of request {key!r}"
    owner = check_owner(path, what, owner)
    exp = check_time(path, what, "expires_at", expires)
    at = check_time(path, what, "claimed_at", claimed)
    if at > exp:
        raise LedgerError(f"{path}: damaged ledger: {what}: claimed_at is after expires_at")
    return key, owner, exp, at


def check_leases(db: sqlite3.Connection, path: Path) -> None:
    """Every lease row of ``db`` is well formed (the open-time damage check)."""
    for row in db.execute("SELECT request_key, owner, expires_at, claimed_at FROM leases"):
        check_lease(path, row)


@dataclass(frozen=True)
class Intent:
    """One batch intent: ``items`` maps request key -> request metadata."""

    intent_id: str
    judge: str
    requested_at: float
    owner: str
    expires_at: float
    items: dict[str, dict[str, Any]]


def read_intent(db: sqlite3.Connection, path: Path, row: Sequence[Any]) -> Intent:
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


def read_intents(db: sqlite3.Connection, path: Path, judge: str | None = None) -> list[Intent]:
    sql = "SELECT intent_id, judge, count, requested_at, owner, expires_at FROM batch_intents"
    args: tuple[str, ...] = ()
    if judge is not None:
        sql, args = sql + " WHERE judge = ?", (scrubber().scrub(judge),)
    rows = db.execute(sql + " ORDER BY requested_at, intent_id", args).fetchall()
    return [read_intent(db, path, r) for r in rows]


def check_intents(db: sqlite3.Connection, path: Path) -> None:
    """Every batch intent of ``db`` is well formed (the open-time damage check)."""
    read_intents(db, path)
