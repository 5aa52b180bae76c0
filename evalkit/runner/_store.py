"""Transcript stores: JSONL or SQLite, one record per turn, written a conversation at a time.

A record has the columns :data:`~evalkit.runner._types.TRANSCRIPT_COLUMNS`:
``conversation`` (the resume key: case content × target fingerprint × user-side
fingerprint), ``attempt`` (1, 2, ... per conversation), ``case_id``, ``turn``,
``role``, ``text``, ``signal`` (user turns: annotated or intended level), ``target``
and ``user`` (specs, never secrets), ``latency_s``, ``input_tokens``,
``output_tokens``, ``error`` (None, or why this turn failed) and ``created_at``.

Each conversation's records are written together (one ``write`` + ``fsync`` for
JSONL, one transaction for SQLite), so a killed run loses at most the conversations
in flight. A conversation is *finished* when its latest attempt has records and no
error; a re-run skips finished conversations and runs the others again as a new
attempt. Reading keeps only the latest attempt of each conversation. A JSONL line cut
short by a crash (the last line) is ignored on reading and removed before the next
append; a malformed line elsewhere is an error.

The format follows the file name: ``.jsonl`` → JSONL, ``.sqlite``/``.sqlite3``/``.db``
→ SQLite.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from evalkit.runner._types import TRANSCRIPT_COLUMNS, RunnerError

_SQLITE_SUFFIXES = (".sqlite", ".sqlite3", ".db")
_DDL = """
CREATE TABLE IF NOT EXISTS transcripts (
    conversation TEXT NOT NULL, attempt INTEGER NOT NULL, case_id TEXT NOT NULL,
    turn INTEGER NOT NULL, role TEXT NOT NULL, text TEXT NOT NULL, signal TEXT,
    target TEXT NOT NULL, user TEXT NOT NULL, latency_s REAL, input_tokens INTEGER,
    output_tokens INTEGER, error TEXT, created_at TEXT NOT NULL,
    PRIMARY KEY (conversation, attempt, turn)
);
CREATE INDEX IF NOT EXISTS transcripts_case ON transcripts (case_id);
"""


def _latest(frame: pd.DataFrame) -> pd.DataFrame:
    if frame.empty:
        return pd.DataFrame(columns=list(TRANSCRIPT_COLUMNS))
    last = frame.groupby("conversation")["attempt"].transform("max")
    out = frame[frame["attempt"] == last]
    return out.sort_values(["conversation", "turn"], kind="stable").reset_index(drop=True)


class TranscriptStore:
    """A transcript file (JSONL or SQLite); open with :func:`open_store`."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()

    def frame(self) -> pd.DataFrame:
        """Every record of the latest attempt of each conversation, ordered by turn."""
        return _latest(self._all())

    def finished(self) -> set[str]:
        """Conversation keys whose latest attempt has records and no error."""
        f = self.frame()
        if f.empty:
            return set()
        failed = f.groupby("conversation")["error"].apply(lambda s: s.notna().any())
        return set(failed.index[~failed])

    def attempts(self) -> dict[str, int]:
        """Latest attempt number per conversation key."""
        f = self._all()
        if f.empty:
            return {}
        return {str(k): int(v) for k, v in f.groupby("conversation")["attempt"].max().items()}

    def write(self, records: Sequence[dict[str, Any]]) -> None:
        """Append one conversation's records atomically (see the module docstring)."""
        raise NotImplementedError

    def _all(self) -> pd.DataFrame:
        raise NotImplementedError


class JsonlStore(TranscriptStore):
    """Records as JSON lines, appended."""

    def write(self, records: Sequence[dict[str, Any]]) -> None:
        if not records:
            return
        text = "".join(
            json.dumps({c: r.get(c) for c in TRANSCRIPT_COLUMNS}, ensure_ascii=False) + "\n"
            for r in records
        )
        with self._lock:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._drop_partial_line()
            with self.path.open("a", encoding="utf-8") as fh:
                fh.write(text)
                fh.flush()
                os.fsync(fh.fileno())

    def _drop_partial_line(self) -> None:
        """Cut a last line left without its newline by a crash, before appending."""
        if not self.path.exists():
            return
        with self.path.open("rb+") as fh:
            size = fh.seek(0, os.SEEK_END)
            if size == 0:
                return
            fh.seek(size - 1)
            if fh.read(1) == b"\n":
                return
            fh.seek(0)
            data = fh.read()
            fh.truncate(data.rfind(b"\n") + 1)

    def _all(self) -> pd.DataFrame:
        if not self.path.exists():
            return pd.DataFrame(columns=list(TRANSCRIPT_COLUMNS))
        rows = []
        lines = self.path.read_text(encoding="utf-8").splitlines()
        for i, line in enumerate(lines):
            if not line.strip():
                continue
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError:
                if i == len(lines) - 1:
                    continue  # cut short by a crash: its conversation is re-run
                raise RunnerError(f"{self.path}:{i + 1}: not a JSON record") from None
        return pd.DataFrame(rows, columns=list(TRANSCRIPT_COLUMNS))


class SqliteStore(TranscriptStore):
    """Records in the ``transcripts`` table of an SQLite database (WAL)."""

    def _connect(self) -> sqlite3.Connection:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        db = sqlite3.connect(self.path, timeout=30.0)
        db.execute("PRAGMA journal_mode=WAL")
        db.executescript(_DDL)
        return db

    def write(self, records: Sequence[dict[str, Any]]) -> None:
        if not records:
            return
        cols = ", ".join(TRANSCRIPT_COLUMNS)
        marks = ", ".join("?" for _ in TRANSCRIPT_COLUMNS)
        rows = [tuple(r.get(c) for c in TRANSCRIPT_COLUMNS) for r in records]
        with self._lock:
            db = self._connect()
            try:
                with db:
                    db.executemany(f"INSERT INTO transcripts ({cols}) VALUES ({marks})", rows)
            finally:
                db.close()

    def _all(self) -> pd.DataFrame:
        if not self.path.exists():
            return pd.DataFrame(columns=list(TRANSCRIPT_COLUMNS))
        db = self._connect()
        try:
            cur = db.execute(f"SELECT {', '.join(TRANSCRIPT_COLUMNS)} FROM transcripts")
            data = cur.fetchall()
        except sqlite3.DatabaseError as exc:
            raise RunnerError(f"{self.path}: not a transcript database ({exc})") from None
        finally:
            db.close()
        return pd.DataFrame(data, columns=list(TRANSCRIPT_COLUMNS))


def open_store(path: str | Path) -> TranscriptStore:
    """The store for ``path``, by suffix (``.jsonl`` or ``.sqlite``/``.sqlite3``/``.db``)."""
    p = Path(path)
    if p.suffix == ".jsonl":
        return JsonlStore(p)
    if p.suffix in _SQLITE_SUFFIXES:
        return SqliteStore(p)
    raise RunnerError(f"{p}: transcripts are stored as .jsonl or .sqlite, not {p.suffix!r}")


def read_transcripts(path: str | Path) -> pd.DataFrame:
    """The latest attempt of every conversation stored at ``path`` (one row per turn)."""
    p = Path(path)
    if not p.exists():
        raise RunnerError(f"{p}: no such transcript file")
    return open_store(p).frame()


def default_transcripts_path(ledger: str | Path) -> Path:
    """Where transcripts live beside a judge ledger: ``<ledger stem>.transcripts.jsonl``."""
    p = Path(ledger)
    return p.with_name(f"{p.stem}.transcripts.jsonl")
