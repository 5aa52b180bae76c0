"""Ledger records as plain dicts: their fields and the long frame.

A record is one judge request: the fields of :data:`REQUEST_FIELDS` plus
``results``, a list of per-dimension answers (only for status ``ok``). The JSONL export
is one record per line, keys sorted; :mod:`evalkit.ledger._validate` reads it back.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from evalkit.errors import LedgerError

STATUSES = ("ok", "unparseable", "refused", "error")
FINAL_STATUSES = frozenset({"ok", "unparseable", "refused"})

#: Columns of :func:`load_ledger`, in order.
LEDGER_COLUMNS = (
    "request_key",
    "request_id",
    "case_id",
    "turn",
    "dimension",
    "status",
    "bin",
    "signal_present",
    "injection_attempt",
    "evidence_turns",
    "rationale",
    "judge",
    "backend",
    "model",
    "response_model",
    "rubric_version",
    "rubric_hash",
    "presence_gated",
    "framing_hash",
    "constants_hash",
    "input_tokens",
    "output_tokens",
    "cache_read_tokens",
    "cache_creation_tokens",
    "cost_usd",
    "latency_s",
    "attempts",
    "batch_id",
    "error",
    "created_at",
    "seal_id",
    "sample",
    "temperature",
    "content_key",
    "schema_version",
)

REQUEST_FIELDS = (
    "request_key",
    "content_key",
    "request_id",
    "nonce",
    "case_id",
    "turn",
    "dimensions",
    "framing_hash",
    "constants_hash",
    "judge",
    "backend",
    "model",
    "params",
    "status",
    "attempts",
    "raw_response",
    "problem",
    "error",
    "input_tokens",
    "output_tokens",
    "cache_read_tokens",
    "cache_creation_tokens",
    "cost_usd",
    "latency_s",
    "response_model",
    "batch_id",
    "created_at",
)
JSON_FIELDS = ("dimensions", "params")


def records_frame(records: Sequence[dict[str, Any]]) -> pd.DataFrame:
    """One row per (request, requested dimension); see :data:`LEDGER_COLUMNS`.

    Raises :class:`LedgerError` naming the request if a record lacks a field the frame
    needs (a damaged ledger: records read from JSONL are validated first).
    """
    rows: list[dict[str, Any]] = []
    for rec in records:
        try:
            rows += _request_rows(rec)
        except (KeyError, TypeError, AttributeError) as exc:
            raise LedgerError(
                f"ledger request {rec.get('request_key')!r} is malformed "
                f"({type(exc).__name__}: {exc})"
            ) from None
    return _typed(pd.DataFrame(rows, columns=list(LEDGER_COLUMNS)))


def _request_rows(rec: dict[str, Any]) -> list[dict[str, Any]]:
    rows = []
    by_dim = {r["dimension"]: r for r in rec["results"]}
    for d in rec["dimensions"]:
        res = by_dim.get(d["dimension"])
        rows.append(
            {
                "request_key": rec["request_key"],
                "request_id": rec["request_id"],
                "case_id": rec["case_id"],
                "turn": rec["turn"],
                "dimension": d["dimension"],
                "status": rec["status"],
                "bin": res["bin"] if res else None,
                "signal_present": res["signal_present"] if res else None,
                "injection_attempt": res["injection_attempt"] if res else None,
                "evidence_turns": ",".join(res["evidence_turns"]) if res else None,
                "rationale": res["rationale"] if res else None,
                "judge": rec["judge"],
                "backend": rec["backend"],
                "model": rec["model"],
                "response_model": rec["response_model"],
                "rubric_version": d["version"],
                "rubric_hash": d["rubric_hash"],
                "presence_gated": d["presence_gated"],
                "framing_hash": rec["framing_hash"],
                "constants_hash": rec["constants_hash"],
                "input_tokens": rec["input_tokens"],
                "output_tokens": rec["output_tokens"],
                "cache_read_tokens": rec["cache_read_tokens"],
                "cache_creation_tokens": rec["cache_creation_tokens"],
                "cost_usd": rec["cost_usd"],
                "latency_s": rec["latency_s"],
                "attempts": rec["attempts"],
                "batch_id": rec["batch_id"],
                "error": rec["error"] or rec["problem"],
                "created_at": rec["created_at"],
                # the held-out seal the request was planned under (ADR-0015), None elsewhere
                "seal_id": (rec["params"] or {}).get("heldout_seal"),
                # the repeat index of --samples (ADR-0027) and the temperature sent (None:
                # not sent, the provider's default)
                "sample": (rec["params"] or {}).get("sample", 0),
                "temperature": (rec["params"] or {}).get("temperature"),
                # what the request asked about (case, turn, rubrics, framing), rebuilt
                # from the catalogue at gate time to set stale answers aside
                "content_key": rec["content_key"],
                "schema_version": (rec["params"] or {}).get("schema_version"),
            }
        )
    return rows


#: Columns a long frame must have (those the issue names, read by other packages).
REQUIRED_COLUMNS = (
    "request_key",
    "case_id",
    "dimension",
    "turn",
    "status",
    "bin",
    "model",
    "rubric_hash",
    "input_tokens",
    "output_tokens",
    "cost_usd",
)


def frame_rows_jsonl(path: Path) -> pd.DataFrame:
    """A long frame saved one row per line (``DataFrame.to_json(orient="records",
    lines=True)``), checked for :data:`REQUIRED_COLUMNS`; missing optional columns
    are None, extra columns are kept after the standard ones."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except UnicodeDecodeError as exc:
        raise LedgerError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    rows = []
    for n, line in enumerate(lines, start=1):
        if line.strip():
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError as exc:
                raise LedgerError(f"{path} line {n}: not JSON ({exc.msg})") from None
    frame = pd.DataFrame(rows)
    missing = [c for c in REQUIRED_COLUMNS if c not in frame.columns]
    if missing:
        raise LedgerError(f"{path}: not a ledger frame (missing columns {missing})")
    bad = sorted(set(frame["status"]) - set(STATUSES))
    if bad:
        raise LedgerError(f"{path}: unknown status(es) {bad}")
    for col in LEDGER_COLUMNS:
        if col not in frame.columns:
            frame[col] = None
    extra = [c for c in frame.columns if c not in LEDGER_COLUMNS]
    frame = frame[[*LEDGER_COLUMNS, *extra]]
    return _typed(frame)


_DTYPES = {
    "turn": "int64",
    "signal_present": "boolean",
    "injection_attempt": "boolean",
    "input_tokens": "int64",
    "output_tokens": "int64",
    "cache_read_tokens": "int64",
    "cache_creation_tokens": "int64",
    "attempts": "int64",
    "cost_usd": "float64",
    "latency_s": "float64",
    "sample": "int64",
    "temperature": "float64",
}


def _typed(frame: pd.DataFrame) -> pd.DataFrame:
    """Standard dtypes; an integer column with gaps (a hand-made frame) becomes ``Int64``."""
    for col, dtype in _DTYPES.items():
        try:
            if dtype == "int64" and frame[col].isna().any():
                dtype = "Int64"
            frame = frame.astype({col: dtype})
        except (TypeError, ValueError) as exc:
            raise LedgerError(f"ledger column {col!r} cannot be read as {dtype}: {exc}") from None
    return frame


def is_record_jsonl(path: Path) -> bool:
    """Whether a JSONL file holds request records (an export) rather than frame rows."""
    try:
        with path.open(encoding="utf-8") as fh:
            for line in fh:
                if line.strip():
                    try:
                        first = json.loads(line)
                    except json.JSONDecodeError:
                        return True  # let read_jsonl report the line
                    return not isinstance(first, dict) or "results" in first
    except UnicodeDecodeError:
        return True  # let read_jsonl report it
    return True
