"""A ``--batch`` run killed with SIGKILL around the batch create, then resumed.

The stub holds the create inside the server (``create_arrived``) until the test has
killed the client, then makes the batch (the orphan a re-run must adopt) or drops it
(the create never took effect: the re-run must send it). For a kill *after* the create
returned, the test holds the ledger's write lock from the moment the create arrives, so
the client cannot record the batch id, and kills it once the stub has written the
answer. In every case the resumed run creates no second batch and records every result
once. No sleeps race the server: every wait is on an event or a count.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from evalkit.judge import load_ledger
from evalkit.judging._batches import merge_prior
from tests.factory import REPO
from tests.faults._support import FAKE_KEY, MODEL, synthetic_catalogue
from tests.stubs.anthropic_stub import AnthropicStub

N = 10
PATIENCE_S = 300.0


def _count(ledger: Path, sql: str) -> int:
    db = sqlite3.connect(f"file:{ledger}?mode=ro", uri=True, timeout=30)
    try:
        return int(db.execute(sql).fetchone()[0])
    finally:
        db.close()


def _until(cond: object, what: str) -> None:
    deadline = time.monotonic() + PATIENCE_S
    while not cond():  # type: ignore[operator]
        assert time.monotonic() < deadline, what
        time.sleep(0.01)


@pytest.mark.slow
@pytest.mark.parametrize("when", ["inside create, made", "inside create, lost", "after create"])
def test_a_batch_run_killed_around_create_resumes_without_a_second_batch(
    tmp_path: Path, when: str
) -> None:
    root = synthetic_catalogue(tmp_path / "catalogue", N, prefix="bc")
    ledger = tmp_path / "ledger.sqlite"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "EVALKIT_"))}
    cmd = [
        sys.executable, "-m", "evalkit", "judge",
        "--judge", f"anthropic:{MODEL}", "--ledger", str(ledger), "--catalogue", str(root),
        "--yes", "--quiet", "--batch", "--batch-poll", "0.05",
    ]  # fmt: skip
    with AnthropicStub() as stub:
        env.update(
            ANTHROPIC_BASE_URL=stub.base_url, ANTHROPIC_API_KEY=FAKE_KEY, EVALKIT_LEASE_SECONDS="1"
        )
        stub.hold_creates("discard" if when == "inside create, lost" else "create")
        proc = subprocess.Popen(
            cmd, env=env, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        _until(lambda: stub.create_arrived.is_set() or proc.poll() is not None, "no create")
        assert proc.poll() is None, proc.communicate()
        assert _count(ledger, "SELECT COUNT(*) FROM batch_intents") == 1  # written first
        lock = None
        if when == "after create":
            lock = sqlite3.connect(ledger, isolation_level=None, timeout=30)
            lock.execute("BEGIN IMMEDIATE")  # the client can no longer record anything
            stub.create_hold = None
            stub.release_creates()
            assert stub.create_answered.wait(PATIENCE_S)
        os.kill(proc.pid, signal.SIGKILL)
        proc.communicate()
        if lock is not None:
            lock.execute("ROLLBACK")
            lock.close()
        else:
            stub.create_hold = None
            stub.release_creates()
        if when != "inside create, lost":
            _until(lambda: len(stub.batches) == 1, "the held create never made its batch")
        assert _count(ledger, "SELECT COUNT(*) FROM batches") == 0  # the id was never recorded
        done = subprocess.run(cmd, env=env, cwd=REPO, capture_output=True, timeout=PATIENCE_S)
        assert done.returncode == 0, done.stderr.decode()
        assert len(stub.batches) == 1  # adopted (or, if it was never made, made once)
        assert stub.message_requests() == []
        ids = stub.request_ids()
        assert len(ids) == len(set(ids)) == N
    frame = load_ledger(ledger).drop_duplicates("request_key")
    assert len(frame) == N and (frame["status"] == "ok").all()
    assert frame["batch_id"].nunique() == 1 and frame["batch_id"].iloc[0] in stub.batches
    assert _count(ledger, "SELECT COUNT(*) FROM batch_intents") == 0


def test_earlier_answers_are_added_to_the_last() -> None:
    prior = {"asks": 1, "problem": "attempt 1: bad bin", "attempts": 1, "input_tokens": 10,
             "output_tokens": 5, "cache_read_tokens": 0, "cache_creation_tokens": 2,
             "latency_s": 0.0, "cost_usd": 0.5}  # fmt: skip
    rec = {"status": "unparseable", "problem": "attempt 1: no tool call", "attempts": 1,
           "input_tokens": 10, "output_tokens": 7, "cache_read_tokens": 2,
           "cache_creation_tokens": 0, "latency_s": 0.0, "cost_usd": 0.25}  # fmt: skip
    out = merge_prior(prior, rec)
    assert out["problem"] == "attempt 1: bad bin; attempt 2: no tool call"
    assert (out["attempts"], out["input_tokens"], out["output_tokens"]) == (2, 20, 12)
    assert out["cost_usd"] == 0.75
    assert merge_prior(prior, {**rec, "cost_usd": None})["cost_usd"] is None
    ok = merge_prior(prior, {**rec, "status": "ok", "problem": None})
    assert ok["problem"] is None and ok["attempts"] == 2
    assert merge_prior(None, rec) is rec
