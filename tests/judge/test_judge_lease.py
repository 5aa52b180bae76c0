"""Leases on the ledger: two processes share one ledger and no request is answered twice.

Unit tests drive the clock through ``now=`` (no sleeps): expiry, renewal, a damaged
lease, release on record, readers that never see leases. End to end: two ``evalkit
judge`` processes on one ledger against the counting stub (both are shown to be sending
at once: the stub holds every answer until the leases table holds two owners), and a
process killed with SIGKILL whose leases expire and whose work the next run does.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from evalkit.catalogue import Catalogue
from evalkit.errors import LedgerError
from evalkit.judge import Ledger, judge_cases, load_ledger
from evalkit.ledger._lease import Leaseholder, lease_seconds
from tests.factory import REPO
from tests.faults._support import FAKE_KEY, MODEL, CountingStub, synthetic_catalogue

KEY_A = "a" * 64
KEY_B = "b" * 64
PATIENCE_S = 300.0  # a bound on waiting for progress, never a pace


@pytest.fixture
def catalogue_records(catalogue: Catalogue, tmp_path: Path) -> list[dict[str, object]]:
    """Real ledger records (the baseline judge on the five-case catalogue)."""
    src = tmp_path / "src.sqlite"
    judge_cases(catalogue, judge="baseline", ledger=src, progress=False)
    with Ledger(src) as led:
        return led.records()


@pytest.fixture
def ledger(tmp_path: Path) -> Iterator[Ledger]:
    with Ledger(tmp_path / "l.sqlite") as led:
        yield led


def test_a_lease_keeps_others_off_until_it_expires(ledger: Ledger, tmp_path: Path) -> None:
    with Ledger(ledger.path) as other_ledger:
        one = Leaseholder(ledger, ttl=10.0)
        two = Leaseholder(other_ledger, ttl=10.0)
        assert one.claim(KEY_A, now=100.0)
        assert not two.claim(KEY_A, now=109.999)
        assert two.claim(KEY_B, now=105.0)  # other work is free
        assert two.claimable([KEY_A, KEY_B], now=105.0) == [KEY_B]
        assert two.claim(KEY_A, now=110.001)  # expired: taken over
        assert not one.claim(KEY_A, now=111.0)


def test_renewal_keeps_a_long_call_leased(ledger: Ledger) -> None:
    with Ledger(ledger.path) as other_ledger:
        one = Leaseholder(ledger, ttl=10.0)
        two = Leaseholder(other_ledger, ttl=10.0)
        assert one.claim(KEY_A, now=100.0)
        assert one.renew(now=108.0) == set()  # now expires at 118
        assert not two.claim(KEY_A, now=115.0)
        assert two.claim(KEY_A, now=118.5)
        assert one.renew(now=119.0) == {KEY_A}  # lost: reported, no longer held
        assert one.held == set()


def test_recording_releases_the_lease_and_a_final_row_is_never_claimed(
    ledger: Ledger, catalogue_records: list[dict[str, object]]
) -> None:
    rec = dict(catalogue_records[0])
    one = Leaseholder(ledger, ttl=10.0)
    assert one.claim(str(rec["request_key"]))
    ledger.record(rec)
    assert ledger.lease_rows([str(rec["request_key"])]) == []
    with Ledger(ledger.path) as other_ledger:
        assert not Leaseholder(other_ledger).claim(str(rec["request_key"]))


@pytest.mark.parametrize(
    ("row", "field"),
    [
        ((KEY_A, "nobody", 1.0, 0.0), "owner"),
        ((KEY_A, "host/12/0123456789abcdef", "soon", 0.0), "expires_at"),
        ((KEY_A, "host/12/0123456789abcdef", 1.0, 5.0), "claimed_at"),
        (("not-a-key", "host/12/0123456789abcdef", 1.0, 0.0), "not a request key"),
    ],
)
def test_a_damaged_lease_is_a_named_ledger_error(
    tmp_path: Path, row: tuple[object, ...], field: str
) -> None:
    path = tmp_path / "l.sqlite"
    Ledger(path).close()
    db = sqlite3.connect(path)
    db.execute("INSERT INTO leases VALUES (?, ?, ?, ?)", row)
    db.commit()
    db.close()
    with pytest.raises(LedgerError, match=rf"{path}: damaged ledger: lease.*{field}"):
        Ledger(path)
    with pytest.raises(LedgerError, match="damaged ledger"):
        load_ledger(path)


def test_the_lease_duration_is_read_strictly(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EVALKIT_LEASE_SECONDS", "2.5")
    assert lease_seconds() == 2.5
    for bad in ("0", "-1", "soon", "nan", "inf"):
        monkeypatch.setenv("EVALKIT_LEASE_SECONDS", bad)
        with pytest.raises(LedgerError, match="EVALKIT_LEASE_SECONDS"):
            lease_seconds()


def test_readers_never_see_leases_or_intents(
    ledger: Ledger, catalogue_records: list[dict[str, object]], tmp_path: Path
) -> None:
    from evalkit.ledger._intent import begin

    for rec in catalogue_records:
        ledger.record(dict(rec))
    before = ledger.frame()
    holder = Leaseholder(ledger, ttl=10.0)
    assert holder.claim(KEY_A)
    meta = {"request_key": KEY_B, "case_id": "x"}
    assert begin(holder, "anthropic:m", {KEY_B: meta}) is not None
    assert ledger.frame().equals(before)
    assert ledger.export_jsonl(tmp_path / "x.jsonl") == len(catalogue_records)
    assert load_ledger(ledger.path).equals(load_ledger(tmp_path / "x.jsonl"))


_HOLD = """
import sys, time
from evalkit.judge import Ledger
from evalkit.ledger._lease import Leaseholder
led = Ledger(sys.argv[1])
holder = Leaseholder(led, ttl=float(sys.argv[2]))
assert holder.claim(sys.argv[3])
print("claimed", flush=True)
time.sleep(3600)
"""


def test_a_crashed_owners_lease_expires_and_the_other_takes_the_work(tmp_path: Path) -> None:
    path = tmp_path / "l.sqlite"
    Ledger(path).close()
    proc = subprocess.Popen(
        [sys.executable, "-c", _HOLD, str(path), "30", KEY_A],
        cwd=REPO,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None and proc.stdout.readline().strip() == "claimed"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    with Ledger(path) as led:
        ((_, owner, expires, _),) = led.lease_rows([KEY_A])
        assert f"/{proc.pid}/" in owner
        mine = Leaseholder(led, ttl=30.0)
        assert not mine.claim(KEY_A, now=expires - 0.001)  # dead, but not yet expired
        assert mine.claim(KEY_A, now=expires + 0.001)


# -- end to end: the CLI, in subprocesses ----------------------------------------------


def _cmd(root: Path, ledger: Path, *extra: str) -> list[str]:
    return [
        sys.executable, "-m", "evalkit", "judge",
        "--judge", f"anthropic:{MODEL}", "--ledger", str(ledger), "--catalogue", str(root),
        "--yes", "--quiet", *extra,
    ]  # fmt: skip


def _env(stub: CountingStub, lease_s: float = 60.0) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "EVALKIT_"))}
    env.update(
        ANTHROPIC_BASE_URL=stub.base_url,
        ANTHROPIC_API_KEY=FAKE_KEY,
        EVALKIT_LEASE_SECONDS=str(lease_s),
    )
    return env


def _owners(ledger: Path) -> int:
    try:
        db = sqlite3.connect(f"file:{ledger}?mode=ro", uri=True, timeout=5)
        try:
            return int(db.execute("SELECT COUNT(DISTINCT owner) FROM leases").fetchone()[0])
        finally:
            db.close()
    except sqlite3.OperationalError:  # not created yet
        return 0


def _wait(cond: object, procs: list[subprocess.Popen[bytes]], what: str) -> None:
    deadline = time.monotonic() + PATIENCE_S
    while not cond():  # type: ignore[operator]
        for p in procs:
            assert p.poll() is None, p.communicate()
        assert time.monotonic() < deadline, what
        time.sleep(0.01)


@pytest.mark.slow
def test_two_processes_on_one_ledger_send_each_request_once(tmp_path: Path) -> None:
    n = 40
    root = synthetic_catalogue(tmp_path / "catalogue", n, prefix="two")
    ledger = tmp_path / "ledger.sqlite"
    with CountingStub(latency=0.02) as stub:
        stub.hold_after(0)  # hold every answer until both processes are sending
        env = _env(stub)
        procs = [
            subprocess.Popen(
                _cmd(root, ledger, "--concurrency", "4"),
                env=env,
                cwd=REPO,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
            )
            for _ in range(2)
        ]
        _wait(lambda: _owners(ledger) == 2, procs, "the two processes never both held leases")
        stub.release()
        for p in procs:
            _, err = p.communicate(timeout=PATIENCE_S)
            assert p.returncode == 0, err.decode()
        assert stub.wait_idle(PATIENCE_S)
        assert stub.duplicates() == 0
        sent = stub.sent_by_request_id()
        assert len(sent) == n and set(sent.values()) == {1}
    frame = load_ledger(ledger).drop_duplicates("request_key")
    assert len(frame) == n and (frame["status"] == "ok").all()
    assert _owners(ledger) == 0  # every lease released


@pytest.mark.slow
def test_a_killed_process_leases_expire_and_the_next_run_finishes(tmp_path: Path) -> None:
    n = 12
    root = synthetic_catalogue(tmp_path / "catalogue", n, prefix="kl")
    ledger = tmp_path / "ledger.sqlite"
    with CountingStub() as stub:
        stub.hold_after(0)
        env = _env(stub, lease_s=1.0)
        first = subprocess.Popen(
            _cmd(root, ledger, "--concurrency", "4"),
            env=env,
            cwd=REPO,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        _wait(lambda: stub.held() >= 1 and _owners(ledger) == 1, [first], "nothing in flight")
        os.kill(first.pid, signal.SIGKILL)
        first.communicate()
        stub.release()
        assert stub.wait_idle(PATIENCE_S)
        before = stub.sent_by_request_id()
        done = subprocess.run(
            _cmd(root, ledger), env=env, cwd=REPO, capture_output=True, timeout=PATIENCE_S
        )
        assert done.returncode == 0, done.stderr.decode()
        assert stub.wait_idle(PATIENCE_S)
        again = stub.sent_by_request_id() - before
    frame = load_ledger(ledger).drop_duplicates("request_key")
    assert len(frame) == n and (frame["status"] == "ok").all()
    assert set(again.values()) == {1}  # the second run sent each request once
    assert len(again) == n  # the killed run recorded nothing: all its work was redone
