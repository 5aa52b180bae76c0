"""Fault suite, crash: a 500-call judge run killed with SIGKILL ten times, resumed each time.

``evalkit judge`` (the CLI, in a subprocess, ``--concurrency 8``) judges 500 distinct
cases through the real ``anthropic`` SDK against the stub Messages API (50 ms latency,
so the run lasts a few seconds). The test kills it with SIGKILL at ten random points
(fixed seed: once the ledger holds a drawn number of answers) and starts the same
command again each time; the eleventh run finishes. Then:

* every request is in the ledger exactly once, ``ok``, with one result per dimension;
* no request the ledger held at the start of a run was ever sent again (server side);
* within one run no request was sent twice;
* what was sent but not recorded when a run was killed (calls in flight) is at most
  the concurrency per kill, and only those were sent again (by a later run, once the
  killed run's leases expired: ADR-0019);
* the stub answered no body more than once beyond those in-flight calls.

Also a ``--batch`` run killed while it creates the batch that re-asks the unparseable
answers of an ended batch, then resumed: the orphaned batch is adopted, not made twice,
and nothing already recorded is asked for again.

No count races the clock: after each kill the test waits until the stub is idle (every
request the killed process sent has been logged) before reading what was sent, and the
batch run is killed at a point fixed by the stub holding the re-ask batch's create.
"""

from __future__ import annotations

import itertools
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from evalkit.judge import load_ledger
from tests.factory import REPO
from tests.faults._support import FAKE_KEY, MODEL, CountingStub, HostileStub, synthetic_catalogue
from tests.stubs.anthropic_stub import default_answer, request_id_of

N_CALLS = 500
KILLS = 10
CONCURRENCY = 8
SEED = 9
LATENCY_S = 0.05
PATIENCE_S = 300.0  # a generous bound on waiting for progress, never a pace


def recorded(ledger: Path) -> set[str]:
    """Request ids in the ledger, read through a separate read-only connection."""
    if not ledger.exists():
        return set()
    try:
        db = sqlite3.connect(f"file:{ledger}?mode=ro", uri=True, timeout=5)
        try:
            return {r[0] for r in db.execute("SELECT request_id FROM requests")}
        finally:
            db.close()
    except sqlite3.OperationalError:  # created but not yet initialised
        return set()


def kill_points(seed: int) -> list[int]:
    """Ten ledger sizes at which to kill, at least 20 answers apart, in (15, 485)."""
    rng = random.Random(seed)
    while True:
        points = sorted(rng.sample(range(15, 485), KILLS))
        if all(b - a >= 20 for a, b in itertools.pairwise(points)):
            return points


@pytest.mark.slow
def test_sigkill_ten_times_then_resume_answers_everything_once(tmp_path: Path) -> None:
    root = synthetic_catalogue(tmp_path / "catalogue", N_CALLS, prefix="k")
    ledger = tmp_path / "ledger.sqlite"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "EVALKIT_"))}
    cmd = [
        sys.executable, "-m", "evalkit", "judge",
        "--judge", f"anthropic:{MODEL}", "--ledger", str(ledger), "--catalogue", str(root),
        "--yes", "--quiet", "--concurrency", str(CONCURRENCY),
    ]  # fmt: skip
    segments: list[tuple[set[str], list[str], set[str]]] = []  # before, sent, after
    with CountingStub(latency=LATENCY_S) as stub:
        # a killed run's leases hold its calls in flight for one lease (ADR-0019)
        env.update(
            ANTHROPIC_BASE_URL=stub.base_url, ANTHROPIC_API_KEY=FAKE_KEY, EVALKIT_LEASE_SECONDS="2"
        )
        for point in [*kill_points(SEED), None]:
            before = recorded(ledger)
            start = len(stub.message_requests())
            proc = subprocess.Popen(
                cmd, env=env, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE
            )
            if point is None:
                _, err = proc.communicate(timeout=PATIENCE_S)
                assert proc.returncode == 0, err.decode()
            else:
                deadline = time.monotonic() + PATIENCE_S
                while len(recorded(ledger)) < point:
                    assert proc.poll() is None, proc.communicate()
                    assert time.monotonic() < deadline, f"no progress towards {point}"
                    time.sleep(0.01)
                os.kill(proc.pid, signal.SIGKILL)
                proc.communicate()
            assert stub.wait_idle(PATIENCE_S), "the stub never saw the killed client go"
            sent = [r.body for r in stub.message_requests()[start:]]
            ids = [rid for rid in (request_id_of(b) for b in sent) if rid]
            segments.append((before, ids, recorded(ledger)))
        answered = stub.answered_counts()

    # every request answered exactly once in the ledger
    frame = load_ledger(ledger)
    requests = frame.drop_duplicates("request_key")
    assert len(requests) == N_CALLS and requests["request_id"].is_unique
    assert (requests["status"] == "ok").all() and (requests["attempts"] == 1).all()
    assert len(frame) == 2 * N_CALLS and frame["bin"].notna().all()
    assert not frame.duplicated(["request_key", "dimension"]).any()

    lost_in_flight = 0
    for i, (before, ids, after) in enumerate(segments):
        assert len(ids) == len(set(ids)), f"run {i}: a request was sent twice in one run"
        assert not set(ids) & before, f"run {i}: a recorded request was sent again"
        lost = set(ids) - after
        if i < KILLS:
            assert len(lost) <= CONCURRENCY, f"kill {i}: {len(lost)} calls lost in flight"
            lost_in_flight += len(lost)
            # what was lost is sent again by a later run, once its lease has expired
            assert lost <= {rid for _, later, _ in segments[i + 1 :] for rid in later}
        else:
            assert not lost and after == set(requests["request_id"])
    assert lost_in_flight > 0, "no kill caught a call in flight: the kills were not mid-run"
    sends = Counter(rid for _, ids, _ in segments for rid in ids)
    assert sum(sends.values()) == N_CALLS + lost_in_flight
    assert max(sends.values()) <= 1 + KILLS
    # the stub side: a body answered twice only if its first answer was lost at a kill
    assert sum(n - 1 for n in answered.values()) <= lost_in_flight
    assert FAKE_KEY.encode() not in ledger.read_bytes()


# -- a crash while collecting a Message Batch ---------------------------------------------


def _alto_for_every_fourth(body: dict[str, Any]) -> tuple[list[dict[str, Any]], str]:
    """A valid answer, except every 4th request (by id) answers the Spanish bin ``alto``."""
    answer = default_answer(body)
    if int(request_id_of(body) or "0", 16) % 4 == 0:
        answer["scores"][0]["bin"] = "alto"
    block = {"type": "tool_use", "id": "toolu_batch", "name": "record_scores", "input": answer}
    return [block], "tool_use"


def _count(ledger: Path, sql: str) -> int:
    try:
        db = sqlite3.connect(f"file:{ledger}?mode=ro", uri=True, timeout=5)
        try:
            return int(db.execute(sql).fetchone()[0])
        finally:
            db.close()
    except sqlite3.OperationalError:
        return 0


@pytest.mark.slow
def test_sigkill_while_the_re_ask_batch_is_created_re_asks_nothing_already_recorded(
    tmp_path: Path,
) -> None:
    root = synthetic_catalogue(tmp_path / "catalogue", 40, prefix="bk")
    ledger = tmp_path / "ledger.sqlite"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "EVALKIT_"))}
    cmd = [
        sys.executable, "-m", "evalkit", "judge",
        "--judge", f"anthropic:{MODEL}", "--ledger", str(ledger), "--catalogue", str(root),
        "--yes", "--quiet", "--batch", "--batch-poll", "0.05",
    ]  # fmt: skip
    with HostileStub(_alto_for_every_fourth, latency=LATENCY_S) as stub:
        # The 10 unparseable answers of the first batch are re-asked as ONE batch (twice:
        # two re-asks). The first batch is held in progress until the stub also holds
        # creates, so the kill lands inside the create of the first re-ask batch.
        stub.hold_batches = True
        env.update(
            ANTHROPIC_BASE_URL=stub.base_url, ANTHROPIC_API_KEY=FAKE_KEY, EVALKIT_LEASE_SECONDS="1"
        )
        proc = subprocess.Popen(
            cmd, env=env, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        deadline = time.monotonic() + PATIENCE_S
        while len(stub.batches) < 1:
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "the first batch was never created"
            time.sleep(0.01)
        first = next(iter(stub.batches.values()))["requests"]
        # which answers are "alto" depends on the request ids, hence on the rubric hashes
        bad = sum(int(request_id_of(i["params"]) or "0", 16) % 4 == 0 for i in first)
        assert 0 < bad < 40
        stub.hold_creates("create")
        stub.release_batches()
        assert stub.create_arrived.wait(PATIENCE_S), "the re-ask batch was never created"
        os.kill(proc.pid, signal.SIGKILL)
        proc.communicate()
        stub.create_hold = None
        stub.release_creates()
        while len(stub.batches) < 2:  # the server makes the batch the client never learned
            assert time.monotonic() < deadline, "the held create never made its batch"
            time.sleep(0.01)
        assert _count(ledger, "SELECT COUNT(*) FROM requests WHERE status='ok'") == 40 - bad
        assert _count(ledger, "SELECT COUNT(*) FROM requests WHERE status='unparseable'") == 0
        assert _count(ledger, "SELECT COUNT(*) FROM batches WHERE status='open'") == 0
        assert _count(ledger, "SELECT COUNT(*) FROM batch_intents") == 1
        before = recorded(ledger)
        done = subprocess.run(cmd, env=env, cwd=REPO, capture_output=True, timeout=PATIENCE_S)
        assert done.returncode == 0, done.stderr.decode()
        assert stub.message_requests() == []  # re-asks go out as batches, never one by one
        batches = list(stub.batches.values())
    # the orphaned re-ask batch was adopted: one batch per ask, no copy of any
    assert len(batches) == 3
    asked = Counter(request_id_of(item["params"]) for b in batches for item in b["requests"])
    assert sorted(Counter(asked.values()).items()) == [(1, 40 - bad), (3, bad)]
    after_kill = {request_id_of(item["params"]) for b in batches[1:] for item in b["requests"]}
    assert not after_kill & before, "a recorded request was asked again"
    frame = load_ledger(ledger).drop_duplicates("request_key")
    assert len(frame) == 40 and sorted(Counter(frame["status"]).items()) == [
        ("ok", 40 - bad),
        ("unparseable", bad),
    ]
    three = "status='unparseable' AND attempts=3 AND problem LIKE '%; attempt 3: %'"
    assert _count(ledger, f"SELECT COUNT(*) FROM requests WHERE {three}") == bad
