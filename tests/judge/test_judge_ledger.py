"""The ledger: final rows are never overwritten, errors are, JSONL round-trips exactly,
and a damaged ledger is a named error."""

from __future__ import annotations

import json
import random
import shutil
import sqlite3
from pathlib import Path

import pandas as pd
import pytest

from evalkit.catalogue import Catalogue
from evalkit.errors import LedgerError
from evalkit.judge import LEDGER_COLUMNS, Ledger, judge_cases, load_ledger

ISSUE_COLUMNS = {
    "request_key", "case_id", "dimension", "turn", "status", "bin", "model", "rubric_hash",
    "input_tokens", "output_tokens", "cost_usd",
}  # fmt: skip
LEAD_COLUMNS = {
    "framing_hash", "constants_hash", "judge", "signal_present", "injection_attempt",
    "rationale", "attempts", "created_at", "latency_s", "cache_read_tokens",
    "cache_creation_tokens",
}  # fmt: skip


def record(key: str, status: str, **extra: object) -> dict[str, object]:
    rec: dict[str, object] = {
        "request_key": key, "content_key": key[::-1], "request_id": key[:8], "nonce": "0" * 16,
        "case_id": "case-1", "turn": 1,
        "dimensions": [{"dimension": "self_harm", "version": "v2", "rubric_hash": "2" * 64,
                        "presence_gated": True}],
        "framing_hash": "f" * 64, "constants_hash": "1" * 64, "judge": "anthropic:m",
        "backend": "anthropic",
        "model": "m", "params": {"max_tokens": 10}, "status": status, "attempts": 1,
        "raw_response": None, "problem": None, "error": None, "input_tokens": 10,
        "output_tokens": 5, "cache_read_tokens": 0, "cache_creation_tokens": 0,
        "cost_usd": 0.5, "latency_s": 0.1, "response_model": None, "batch_id": None,
        "created_at": "2026-11-30T00:00:00.000000+00:00", "results": [],
    }  # fmt: skip
    rec.update(extra)
    return rec


OK_RESULT = [
    {
        "dimension": "self_harm",
        "bin": "high",
        "signal_present": True,
        "evidence_turns": ["t1"],
        "rationale": "r",
        "injection_attempt": False,
    }
]


def test_final_rows_are_kept_and_error_rows_replaced(tmp_path: Path) -> None:
    with Ledger(tmp_path / "l.sqlite") as led:
        assert led.record(record("a" * 64, "error", error="HTTP 500"))
        assert led.record(record("a" * 64, "ok", results=OK_RESULT, attempts=2))
        assert not led.record(record("a" * 64, "refused"))
        (rec,) = led.records()
    assert rec["status"] == "ok"
    assert rec["attempts"] == 3  # the error row's attempt is kept in the count
    assert rec["input_tokens"] == 20 and rec["cost_usd"] == pytest.approx(1.0)


def test_load_ledger_columns_and_failed_rows(catalogue: Catalogue, tmp_path: Path) -> None:
    path = tmp_path / "l.sqlite"
    with Ledger(path) as led:
        led.record(record("b" * 64, "unparseable", problem="attempt 1: no entry"))
    judge_cases(catalogue, judge="baseline", ledger=path, progress=False)
    frame = load_ledger(path)
    assert list(frame.columns) == list(LEDGER_COLUMNS)
    assert set(frame.columns) >= ISSUE_COLUMNS | LEAD_COLUMNS
    failed = frame[frame["status"] == "unparseable"]
    assert len(failed) == 1 and failed["bin"].isna().all()
    ok = frame[frame["status"] == "ok"]
    assert set(ok["bin"]) <= {"low", "partial", "high"}
    assert (ok["judge"] == "baseline").all() and (ok["model"] == "baseline-v2").all()
    assert frame["turn"].dtype == "int64" and frame["signal_present"].dtype == "boolean"


def test_jsonl_round_trips_exactly(catalogue: Catalogue, tmp_path: Path) -> None:
    a, b = tmp_path / "a.sqlite", tmp_path / "b.sqlite"
    judge_cases(catalogue, judge="baseline", ledger=a, progress=False)
    with Ledger(a) as led:
        led.record(record("c" * 64, "error", error="timeout"))
        led.export_jsonl(tmp_path / "a.jsonl")
    with Ledger(b) as led:
        counts = led.import_jsonl(tmp_path / "a.jsonl", catalogue=catalogue)
        led.export_jsonl(tmp_path / "b.jsonl")
        again = led.import_jsonl(tmp_path / "a.jsonl", catalogue=catalogue)
    assert counts == {"added": 6, "identical": 0, "kept": 0}
    assert again["identical"] == 5  # the error row is re-imported, final rows are kept
    assert (tmp_path / "a.jsonl").read_bytes() == (tmp_path / "b.jsonl").read_bytes()
    pd.testing.assert_frame_equal(load_ledger(a), load_ledger(b))
    pd.testing.assert_frame_equal(load_ledger(a), load_ledger(tmp_path / "a.jsonl"))


def test_frame_rows_jsonl_loads_like_the_ledger(catalogue: Catalogue, tmp_path: Path) -> None:
    from evalkit.judge import export_jsonl, import_jsonl

    ledger = tmp_path / "l.sqlite"
    judge_cases(catalogue, judge="baseline", ledger=ledger, progress=False)
    with Ledger(ledger) as led:
        led.record(record("e" * 64, "refused"))
    frame = load_ledger(ledger)
    frame.to_json(tmp_path / "rows.jsonl", orient="records", lines=True)
    pd.testing.assert_frame_equal(load_ledger(tmp_path / "rows.jsonl"), frame)
    assert export_jsonl(ledger, tmp_path / "x.jsonl") == 6
    assert import_jsonl(tmp_path / "y.sqlite", tmp_path / "x.jsonl", catalogue=catalogue) == {
        "added": 6,
        "identical": 0,
        "kept": 0,
    }
    frame[["case_id", "status"]].to_json(tmp_path / "bad.jsonl", orient="records", lines=True)
    with pytest.raises(LedgerError, match="missing columns"):
        load_ledger(tmp_path / "bad.jsonl")


def test_salt_is_in_the_ledger_but_not_in_the_export(tmp_path: Path) -> None:
    with Ledger(tmp_path / "l.sqlite") as led:
        led.record(record("d" * 64, "ok", results=OK_RESULT))
        salt = led.salt.hex()
        led.export_jsonl(tmp_path / "l.jsonl")
    assert len(salt) == 64
    assert salt not in (tmp_path / "l.jsonl").read_text()
    with Ledger(tmp_path / "l.sqlite") as led:
        assert led.salt.hex() == salt  # stable across openings


def test_env_salt_wins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EVALKIT_NONCE_SALT", "from-env")
    with Ledger(tmp_path / "l.sqlite") as led:
        assert led.salt == b"from-env"
    db = sqlite3.connect(tmp_path / "l.sqlite")
    assert "from-env" not in json.dumps(db.execute("SELECT * FROM meta").fetchall())


def test_unusable_ledgers_are_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(LedgerError, match="no such ledger"):
        load_ledger(tmp_path / "missing.sqlite")
    bad = tmp_path / "bad.sqlite"
    bad.write_text("not sqlite at all, just text " * 20)
    with pytest.raises(LedgerError, match="not a judge ledger"):
        load_ledger(bad)
    other = tmp_path / "other.sqlite"
    sqlite3.connect(other).execute("CREATE TABLE x (y)")
    with pytest.raises(LedgerError, match="not a judge ledger"):
        load_ledger(other)
    (tmp_path / "broken.jsonl").write_text("{not json\n")
    with pytest.raises(LedgerError, match=r"\[line 1\]: not a JSON record"):
        load_ledger(tmp_path / "broken.jsonl")
    (tmp_path / "partial.jsonl").write_text('{"request_key": "k", "results": []}\n')
    with pytest.raises(LedgerError, match=r"\[line 1\] content_key: is missing"):
        load_ledger(tmp_path / "partial.jsonl")
    (tmp_path / "latin1.jsonl").write_bytes(b'{"case_id": "caf\xe9"}\n')
    with pytest.raises(LedgerError, match="not UTF-8"):
        load_ledger(tmp_path / "latin1.jsonl")


# --- damaged ledgers: each is a copy of a good one, damaged one way ---------------------


@pytest.fixture
def good_ledger(catalogue: Catalogue, tmp_path: Path) -> Path:
    path = tmp_path / "good.sqlite"
    judge_cases(catalogue, judge="baseline", ledger=path, progress=False)
    with Ledger(path) as led:
        led.record(record("e" * 64, "error", error="HTTP 500"))
    assert not path.with_name("good.sqlite-wal").exists()  # checkpointed on close
    return path


def damaged(good: Path, name: str, sql: str = "") -> Path:
    path = good.with_name(name)
    shutil.copy(good, path)
    if sql:
        db = sqlite3.connect(path)
        db.executescript(sql)
        db.close()
    return path


def assert_named(path: Path, match: str) -> None:
    with pytest.raises(LedgerError, match=match) as err:
        Ledger(path, create=False)
    assert str(path) in str(err.value)
    with pytest.raises(LedgerError, match=match):
        load_ledger(path)
    with pytest.raises(LedgerError, match=match):
        Ledger(path)  # create=True does not paper over the damage either


def test_random_bytes_inside_a_ledger(good_ledger: Path) -> None:
    size = good_ledger.stat().st_size
    page = 4096
    assert size >= 4 * page
    rng = random.Random(7)
    for n in range(1, size // page):  # every page but the header, one copy each
        path = damaged(good_ledger, f"bytes-{n}.sqlite")
        with path.open("r+b") as fh:
            fh.seek(n * page)
            fh.write(bytes(rng.randrange(256) for _ in range(page)))
        assert_named(path, "damaged")


@pytest.mark.parametrize(
    ("sql", "match"),
    [
        ("UPDATE meta SET value = 'not hex at all' WHERE key = 'nonce_salt'", "nonce_salt is"),
        ("UPDATE meta SET value = 'abcd' WHERE key = 'nonce_salt'", "4 characters"),
        ("UPDATE meta SET value = upper(value) WHERE key = 'nonce_salt'", "not 64 hex"),
        ("DELETE FROM meta WHERE key = 'nonce_salt'", "nonce_salt is missing"),
        ("DROP TABLE results", "table 'results' is missing"),
        ("DROP TABLE batch_items", "table 'batch_items' is missing"),
        (
            "ALTER TABLE requests DROP COLUMN batch_id",
            r"'requests' has no column\(s\) \['batch_id'\]",
        ),
        ("UPDATE meta SET value = 'evalkit-judge-ledger/0' WHERE key = 'schema'", "schema"),
    ],
)
def test_damaged_meta_tables_and_columns(good_ledger: Path, sql: str, match: str) -> None:
    assert_named(damaged(good_ledger, "bad.sqlite", sql), match)


@pytest.mark.parametrize(
    ("sql", "match"),
    [
        ("UPDATE requests SET dimensions = '[{\"dimen'", "dimensions is not JSON"),
        ("UPDATE requests SET params = 'garbage'", "params is not JSON"),
        ("UPDATE results SET evidence_turns = '['", "evidence_turns is not JSON"),
        ("UPDATE requests SET dimensions = '[{\"x\": 1}]'", "is malformed"),
        ("UPDATE requests SET turn = 'three'", "turn"),
    ],
)
def test_damaged_values_are_named_on_reading(good_ledger: Path, sql: str, match: str) -> None:
    path = damaged(good_ledger, "bad.sqlite", sql)
    with pytest.raises(LedgerError, match=match):
        load_ledger(path)


def test_a_foreign_database_is_never_made_into_a_ledger(tmp_path: Path) -> None:
    other = tmp_path / "other.sqlite"
    db = sqlite3.connect(other)
    db.execute("CREATE TABLE x (y)")
    db.commit()
    db.close()
    with pytest.raises(LedgerError, match="no meta table"):
        Ledger(other)
    tables = sqlite3.connect(other).execute("SELECT name FROM sqlite_master").fetchall()
    assert tables == [("x",)]
