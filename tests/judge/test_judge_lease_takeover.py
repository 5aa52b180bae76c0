"""A lease taken over while its owner was suspended: nothing is paid a third time.

In process, with the clock driven through ``now=``: a lease still one's own is renewed
before an attempt, even expired; a lease taken over ends the call before its next
attempt and is never recorded over (ADR-0032). The takeover is simulated by a backend
that, during its first attempt, lets a second holder on the same ledger take the
request over, as a process would while the first was stopped. A batch that another
process adopted while its creator was stopped is remembered once.

End to end (issue #30): a judge process is stopped (SIGSTOP) with its only call in
flight, past its lease; a second process takes the request over and answers it; the
first is resumed (SIGCONT) after its call deadline has passed on the monotonic clock.
It re-checks its lease before the retry, finds it taken, sends nothing more, records
nothing, and says on stderr that the request was sent twice. The stub counts what it
received, so the count is the server's, not the client's.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from evalkit.catalogue import Catalogue, load
from evalkit.judge import Ledger, judge_cases, load_ledger
from evalkit.judge._base import Reply
from evalkit.judge._prompt import JudgeRequest
from evalkit.judge.baseline import BaselineBackend
from evalkit.judging._takeover import LeasedTraffic, sending
from evalkit.ledger._lease import Leaseholder, LeaseLost
from evalkit.traffic import Charge, TrafficController
from tests.factory import REPO
from tests.faults._support import FAKE_KEY, MODEL, CountingStub, synthetic_catalogue
from tests.stubs._server import timeout

PATIENCE_S = 300.0  # a bound on waiting for progress, never a pace
CALL_DEADLINE_S = 5.0  # long enough that the first call cannot time out before SIGSTOP
KEY = "a" * 64


@pytest.fixture
def ledger(tmp_path: Path) -> Iterator[Ledger]:
    with Ledger(tmp_path / "l.sqlite") as led:
        yield led


def test_an_expired_lease_nobody_took_is_renewed_before_the_next_attempt(
    ledger: Ledger,
) -> None:
    mine = Leaseholder(ledger, ttl=10.0)
    assert mine.claim(KEY, now=100.0)
    mine.confirm(KEY, now=150.0)  # stopped past its lease, but nobody took the request
    ((_, owner, expires, _),) = ledger.lease_rows([KEY])
    assert (owner, expires) == (mine.owner, 160.0)
    assert mine.sent[KEY] == 1 and mine.held == {KEY}


def test_a_lease_taken_over_ends_the_call_before_its_next_attempt(ledger: Ledger) -> None:
    with Ledger(ledger.path) as other_ledger:
        mine = Leaseholder(ledger, ttl=10.0)
        other = Leaseholder(other_ledger, ttl=10.0)
        assert mine.claim(KEY, now=100.0)
        mine.confirm(KEY, now=100.0)  # the first attempt goes out
        assert other.claim(KEY, now=111.0)  # expired: taken over
        assert other.taken == {KEY: mine.owner}
        with pytest.raises(LeaseLost, match=f"sent twice, by this process and by {other.owner}"):
            mine.confirm(KEY, now=112.0)
        assert mine.held == set()
        ((_, owner, _, _),) = ledger.lease_rows([KEY])
        assert owner == other.owner  # the other's lease is left alone


def test_a_lease_taken_over_before_the_first_attempt_is_not_sent(ledger: Ledger) -> None:
    with Ledger(ledger.path) as other_ledger:
        mine = Leaseholder(ledger, ttl=10.0)
        assert mine.claim(KEY, now=100.0)
        assert Leaseholder(other_ledger, ttl=10.0).claim(KEY, now=111.0)
        with pytest.raises(LeaseLost, match=r"before this process sent it; .*not sent twice"):
            mine.confirm(KEY, now=112.0)


def test_the_leased_controller_gives_the_turn_back_when_the_lease_is_lost(
    ledger: Ledger,
) -> None:
    with Ledger(ledger.path) as other_ledger:
        mine = Leaseholder(ledger, ttl=10.0)
        traffic = LeasedTraffic(mine, ceiling=2)
        assert mine.claim(KEY)
        assert Leaseholder(other_ledger, ttl=10.0).claim(KEY, now=time.time() + 11.0)

        async def attempt() -> None:
            with sending(KEY):
                await traffic.acquire(Charge())

        with pytest.raises(LeaseLost):
            asyncio.run(attempt())
        assert traffic.in_flight == 0
        assert mine.sent[KEY] == 0


def test_a_batch_another_process_adopted_is_remembered_once(ledger: Ledger) -> None:
    from evalkit.ledger._intent import begin

    mine = Leaseholder(ledger, ttl=10.0)
    intent = begin(mine, "anthropic:m", {KEY: {"request_key": KEY}}, now=100.0)
    assert intent is not None
    with Ledger(ledger.path) as other_ledger:  # adopted while this one was stopped
        other_ledger.add_batch("msgbatch_1", "anthropic:m", intent.items, intent=intent.intent_id)
    ledger.add_batch("msgbatch_1", "anthropic:m", intent.items, intent=intent.intent_id)
    assert list(ledger.open_batches("anthropic:m")) == ["msgbatch_1"]


class _Suspended(BaselineBackend):
    """The baseline judge behind the run's traffic controller, whose first attempt for
    each request outlives its lease: meanwhile a second process takes the request over.
    ``retry``: the attempt then times out and the call asks for a second attempt;
    otherwise its answer arrives and is to be recorded."""

    def __init__(self, catalogue: Catalogue, other: Leaseholder, *, retry: bool) -> None:
        super().__init__(catalogue.rubrics, catalogue.resources)
        self.traffic = TrafficController()
        self.other, self.retry = other, retry
        self.answered = 0

    async def call(self, request: JudgeRequest) -> Reply:
        first = await self.traffic.acquire(Charge())
        assert self.other.claim(request.key, now=time.time() + 2 * self.other.ttl)
        self.traffic.release(first, ok=not self.retry)
        if self.retry:
            self.traffic.release(await self.traffic.acquire(Charge()))
        self.answered += 1
        return await super().call(request)


@pytest.mark.parametrize("retry", [True, False], ids=["retry", "answer"])
def test_a_resumed_call_neither_sends_again_nor_records_over_the_taker(
    catalogue: Catalogue, tmp_path: Path, capsys: pytest.CaptureFixture[str], retry: bool
) -> None:
    path = tmp_path / "l.sqlite"
    Ledger(path).close()
    with Ledger(path) as other_ledger:
        other = Leaseholder(other_ledger, ttl=60.0)
        backend = _Suspended(catalogue, other, retry=retry)
        case = catalogue.split("calibration")[0]
        frame = judge_cases(catalogue, [case], backend=backend, ledger=path, progress=False)
        assert frame.empty  # nothing recorded: the request is the other process's
        assert backend.answered == (0 if retry else 1)  # no second attempt was sent
        (key,) = other.held
        ((_, owner, _, _),) = other_ledger.lease_rows([key])
        assert owner == other.owner
    err = capsys.readouterr().err
    assert f"request {key[:12]} was sent twice, by this process and by {other.owner}" in err


def _cmd(root: Path, ledger: Path, *extra: str) -> list[str]:
    return [
        sys.executable, "-m", "evalkit", "judge",
        "--judge", f"anthropic:{MODEL}", "--ledger", str(ledger), "--catalogue", str(root),
        "--yes", "--quiet", *extra,
    ]  # fmt: skip


def _env(stub: CountingStub, lease_s: float) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "EVALKIT_"))}
    env.update(
        ANTHROPIC_BASE_URL=stub.base_url,
        ANTHROPIC_API_KEY=FAKE_KEY,
        EVALKIT_LEASE_SECONDS=str(lease_s),
    )
    return env


@pytest.mark.slow
def test_a_process_stopped_past_its_lease_pays_nothing_a_third_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    root = synthetic_catalogue(tmp_path / "catalogue", 1, prefix="stop")
    ledger = tmp_path / "ledger.sqlite"
    with CountingStub(hang_s=PATIENCE_S) as stub:
        stub.script(timeout())  # the first attempt is never answered: it stays in flight
        env = _env(stub, lease_s=1.0)
        for name in ("ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY", "EVALKIT_LEASE_SECONDS"):
            monkeypatch.setenv(name, env[name])
        first = subprocess.Popen(
            _cmd(root, ledger, "--call-deadline", str(CALL_DEADLINE_S)),
            env=env,
            cwd=REPO,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        limit = time.monotonic() + PATIENCE_S
        while not [r for r in stub.requests if r.path == "/v1/messages"]:
            assert first.poll() is None, first.communicate()
            assert time.monotonic() < limit, "the first process never sent"
            time.sleep(0.01)
        sent_at = stub.requests[-1].at
        os.kill(first.pid, signal.SIGSTOP)
        try:  # the second run waits for the stopped owner's lease to expire, then sends
            judge_cases(load(root), judge=f"anthropic:{MODEL}", ledger=ledger, progress=False)
            # Resume only once the stopped call's deadline has passed on the monotonic
            # clock (which runs on while a process is stopped): it times out on resume.
            time.sleep(max(0.0, sent_at + CALL_DEADLINE_S + 0.1 - time.monotonic()))
        finally:
            os.kill(first.pid, signal.SIGCONT)
        _, err = first.communicate(timeout=PATIENCE_S)
        assert first.returncode == 0, err
        assert stub.wait_idle(PATIENCE_S)
        sent = stub.sent_by_request_id()
    assert list(sent.values()) == [2], (sent, err)  # the stopped one's, the other's
    assert "was sent twice, by this process and by " in err, err
    assert "took over 1 request(s) whose lease had expired" in capsys.readouterr().err
    (row,) = load_ledger(ledger).drop_duplicates("request_key").itertuples()
    assert row.status == "ok"
