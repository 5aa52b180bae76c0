"""``evalkit judge``: flags, refusals, and a run killed with SIGKILL then resumed."""

from __future__ import annotations

import io
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from evalkit.catalogue import Catalogue, load
from evalkit.cli import main
from evalkit.errors import CatalogueError
from evalkit.judge import load_ledger
from tests.judge.conftest import DEFAULT_CASES, FAKE_KEY, REPO, SHIPPED, case, write_catalogue
from tests.stubs.anthropic_stub import AnthropicStub

MODEL = "claude-sonnet-4-6"


def judge(*args: str) -> int:
    return main(["judge", *args])


def test_cli_baseline_run_and_rerun(
    catalogue: Catalogue, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ledger = str(tmp_path / "l.sqlite")
    assert judge("--judge", "baseline", "--ledger", ledger, "--catalogue", str(catalogue.root)) == 0
    out = capsys.readouterr()
    assert "bin:" in out.out and "5 request(s)" in out.out
    assert "5 to send" in out.out and "5 to send" not in out.err  # the plan is output
    assert (
        judge(
            "--judge",
            "baseline",
            "--ledger",
            ledger,
            "--catalogue",
            str(catalogue.root),
            "--split",
            "calibration",
        )
        == 0
    )
    assert "5 already in the ledger; 0 to send" in capsys.readouterr().out


def test_cli_rubric_and_dimensions_flags(
    catalogue: Catalogue, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ledger = tmp_path / "l.sqlite"
    code = judge(
        "--judge",
        "baseline",
        "--ledger",
        str(ledger),
        "--catalogue",
        str(catalogue.root),
        "--dimensions",
        "self_harm",
        "--rubric",
        "self_harm=v1",
        "--quiet",
    )
    assert code == 0
    frame = load_ledger(ledger)
    assert set(frame["dimension"]) == {"self_harm"} and set(frame["rubric_version"]) == {"v1"}
    assert (
        judge(
            "--judge",
            "baseline",
            "--ledger",
            str(ledger),
            "--catalogue",
            str(catalogue.root),
            "--rubric",
            "self_harm",
        )
        == 2
    )
    assert "DIMENSION=VERSION" in capsys.readouterr().err


def test_cli_heldout_needs_sealed_labels(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    held = case(
        "h-1", [("Is it fine to nap after lunch?", "none", "Yes, briefly.")], split="heldout"
    )
    root = write_catalogue(tmp_path / "cat", [*DEFAULT_CASES, held])
    code = judge(
        "--judge",
        "baseline",
        "--split",
        "heldout",
        "--ledger",
        str(tmp_path / "l.sqlite"),
        "--catalogue",
        str(root),
    )
    assert code == 2
    assert "held-out labels are not sealed" in capsys.readouterr().err
    assert not (tmp_path / "l.sqlite").exists()


def test_cli_paid_calls_need_yes_and_a_pinned_model(
    catalogue: Catalogue,
    stub: AnthropicStub,
    fake_key: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("ANTHROPIC_BASE_URL", stub.base_url)
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))
    base = ["--ledger", str(tmp_path / "l.sqlite"), "--catalogue", str(catalogue.root)]
    assert judge("--judge", f"anthropic:{MODEL}", *base) == 2
    assert "pass --yes" in capsys.readouterr().err
    assert stub.requests == []
    assert judge("--judge", "anthropic:claude-sonnet-4-5", "--yes", *base) == 2
    assert "floating alias" in capsys.readouterr().err
    assert judge("--judge", f"anthropic:{MODEL}", "--yes", "--max-cost", "0.000001", *base) == 2
    assert "over --max-cost" in capsys.readouterr().err
    assert stub.message_requests() == []
    assert judge("--judge", f"anthropic:{MODEL}", "--yes", "--max-cost", "5", *base) == 0
    assert len(stub.message_requests()) == 5
    captured = capsys.readouterr()
    assert fake_key not in captured.err + captured.out and "estimated cost $" in captured.out


def test_cli_export_then_replay_on_a_machine_without_key(
    catalogue: Catalogue, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    root = str(catalogue.root)
    jsonl = str(tmp_path / "run.jsonl")
    assert (
        judge(
            "--judge",
            "baseline",
            "--ledger",
            str(tmp_path / "a.sqlite"),
            "--catalogue",
            root,
            "--export-jsonl",
            jsonl,
            "--quiet",
        )
        == 0
    )
    assert (
        judge(
            "--judge",
            "replay",
            "--ledger",
            str(tmp_path / "b.sqlite"),
            "--catalogue",
            root,
            "--import-jsonl",
            jsonl,
            "--quiet",
        )
        == 0
    )
    assert (
        judge(
            "--judge",
            "replay",
            "--ledger",
            str(tmp_path / "c.sqlite"),
            "--catalogue",
            root,
            "--quiet",
        )
        == 2
    )


@pytest.mark.slow
def test_cli_scores_the_shipped_calibration_set_with_the_baseline(tmp_path: Path) -> None:
    try:
        shipped = load(SHIPPED)
    except CatalogueError as exc:
        pytest.skip(f"the shipped catalogue does not load yet: {str(exc)[:200]}")
    if not shipped.split("calibration"):
        pytest.skip("no shipped calibration cases yet")
    ledger = tmp_path / "l.sqlite"
    assert judge("--judge", "baseline", "--ledger", str(ledger), "--quiet") == 0
    frame = load_ledger(ledger)
    assert (frame["status"] == "ok").all()
    assert set(frame["case_id"]) == {c.id for c in shipped.split("calibration")}


def _kill_catalogue(root: Path) -> Path:
    topics = [
        "sleep",
        "headache",
        "back pain",
        "a cough",
        "heartburn",
        "hay fever",
        "a sprained ankle",
        "dry skin",
        "sunburn",
        "a sore throat",
        "earache",
        "hiccups",
    ]
    cases = [
        case(f"k-{i:02d}", [(f"What helps with {t}? (question {i})", "none", f"Rest. ({i})")])
        for i, t in enumerate(topics)
    ]
    return write_catalogue(root, cases)


def _recorded(ledger: Path) -> list[str]:
    try:
        db = sqlite3.connect(f"file:{ledger}?mode=ro", uri=True, timeout=5)
        try:
            return [r[0] for r in db.execute("SELECT request_id FROM requests")]
        finally:
            db.close()
    except sqlite3.OperationalError:
        return []


@pytest.mark.slow
def test_sigkill_mid_run_then_resume_sends_nothing_twice(tmp_path: Path) -> None:
    """Killed once 3 answers are recorded and the next 2 calls are held at the stub.

    The kill point is set by the stub, not by the clock: it answers 3 requests and holds
    every later one, so the ledger stops at exactly 3 rows with 2 calls in flight,
    however slowly the machine starts the CLI.
    """
    root = _kill_catalogue(tmp_path / "cat")
    ledger = tmp_path / "l.sqlite"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "EVALKIT_"))}
    cmd = [
        sys.executable,
        "-m",
        "evalkit",
        "judge",
        "--judge",
        f"anthropic:{MODEL}",
        "--ledger",
        str(ledger),
        "--catalogue",
        str(root),
        "--yes",
        "--concurrency",
        "2",
        "--quiet",
    ]
    with AnthropicStub() as stub:
        stub.hold_after(3)
        env.update(ANTHROPIC_BASE_URL=stub.base_url, ANTHROPIC_API_KEY=FAKE_KEY)
        proc = subprocess.Popen(
            cmd, env=env, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        deadline = time.monotonic() + 300  # patience, not pace: the kill waits on the stub
        while len(_recorded(ledger)) < 3 or stub.held() < 2:
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, (
                f"after 300 s: {len(_recorded(ledger))} recorded, {stub.held()} held"
            )
            time.sleep(0.02)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        stub.release()
        assert stub.wait_idle(300), "the stub never saw the killed client go"
        before_kill = set(_recorded(ledger))
        sent_before = len(stub.message_requests())
        assert len(before_kill) == 3 and sent_before == 5
        done = subprocess.run(cmd, env=env, cwd=REPO, capture_output=True, timeout=300)
        assert done.returncode == 0, done.stderr.decode()
        second = [r.body for r in stub.message_requests()[sent_before:]]
        from tests.stubs.anthropic_stub import request_id_of

        resent = {request_id_of(b) for b in second}
        all_sent = Counter(stub.request_ids())
    frame = load_ledger(ledger)
    requests = frame.drop_duplicates("request_key")
    assert len(requests) == 12 and (requests["status"] == "ok").all()
    assert requests["request_id"].is_unique
    assert not resent & before_kill  # nothing recorded was ever asked for again
    assert set(all_sent) == set(requests["request_id"])
    assert all(n == 1 or rid not in before_kill for rid, n in all_sent.items())
    assert max(all_sent.values()) <= 2  # only calls in flight at the kill were repeated
    assert FAKE_KEY.encode() not in ledger.read_bytes()


def test_an_export_path_that_cannot_be_written_is_refused_before_judging(
    catalogue: Catalogue, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """#30 hunt: ``--export-jsonl FOLDER`` was an internal error (exit 3) after judging."""
    ledger = tmp_path / "a.sqlite"
    base = ["--judge", "baseline", "--ledger", str(ledger), "--catalogue", str(catalogue.root)]
    assert judge(*base, "--export-jsonl", str(tmp_path)) == 2
    assert "a folder; name a .jsonl file" in capsys.readouterr().err
    blocker = tmp_path / "file"
    blocker.write_text("x")
    assert judge(*base, "--export-jsonl", str(blocker / "run.jsonl")) == 2
    assert "is a file, not a folder" in capsys.readouterr().err
    assert not ledger.exists()  # nothing judged, nothing paid
