"""Attacks on `evalkit import inspect` (issue #30): secrets in the log, a corrected log
re-imported into the same ledger, paths that overlap.

The template catalogue is the small ``mini_catalogue`` (the shipped one takes seconds to
load at every import)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from evalkit.cli import main
from evalkit.errors import EvalkitError
from evalkit.interop import from_inspect, write_import
from evalkit.interop._inspect import InspectSample, InspectScore
from evalkit.interop._redaction import scrub_sample
from evalkit.judge import load_ledger
from evalkit.secrets import scrubber
from tests.interop.inspect_logs import edited_log

ANTHROPIC = "sk-ant-api03-" + "A" * 40
IN_TURN = "sk-ant-api03-" + "B" * 40
URL_KEY = "qs-secret-0123456789"
CONFIGURED = "configured-secret-0123456789"
SECRETS = (ANTHROPIC, IN_TURN, URL_KEY, CONFIGURED)


@pytest.fixture
def like(mini_catalogue: Path) -> Path:
    return mini_catalogue


def _import(log: Path, mapping: Path, out: Path, ledger: Path, like: str, *extra: str) -> int:
    args = ["import", "inspect", str(log), "--out", str(out), "--map", str(mapping)]
    return main([*args, "--like", like, "--ledger", str(ledger), *extra])


def _sample(log: Any, sample_id: str) -> Any:
    return next(s for s in log.samples if s.id == sample_id)


def _leaky(log: Any) -> None:
    log.eval.model = f"openai/https://llm.example/v1?api_key={URL_KEY}:gpt"
    sample = _sample(log, "r-ok1")
    sample.metadata["note"] = f"called with {ANTHROPIC}"
    user = next(m for m in sample.messages if m.role == "user")
    user.content = f"Rough five? My key is {IN_TURN}"
    sample.scores["quality"].explanation = f"scored with {CONFIGURED}"


def test_secrets_in_the_log_are_scrubbed_before_anything_is_written(
    inspect_logs: dict[str, Path],
    mapping_file: Path,
    like: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("EVALKIT_ATTACK_API_KEY", CONFIGURED)
    log = edited_log(inspect_logs["rough"], tmp_path / "leaky.eval", _leaky)
    out, ledger = tmp_path / "cat", tmp_path / "ledgers" / "l.sqlite"
    assert _import(log, mapping_file, out, ledger, str(like)) == 0
    assert _import(log, mapping_file, tmp_path / "cat2", tmp_path / "l.jsonl", str(like)) == 0
    err = capsys.readouterr().err
    written = [p for p in tmp_path.rglob("*") if p.is_file() and p != log]
    assert {p.name for p in written} >= {"inspect.yaml", "labelstudio-tasks.json", "l.jsonl"}
    for path in written:
        data = path.read_bytes()
        assert not any(s.encode() in data for s in SECRETS), path
    tasks = (tmp_path / "cat-labeling" / "labelstudio-tasks.json").read_text(encoding="utf-8")
    assert "My key is [redacted]" in tasks
    cases = (out / "cases" / "calibration" / "en-US" / "inspect.yaml").read_text()
    assert "api_key=[redacted]:gpt" in cases and '"note": "called with [redacted]"' in cases
    frame = load_ledger(ledger)
    assert "[redacted]" in " ".join(frame["rationale"].dropna().astype(str))
    # where and which kind, never the secret
    assert not any(s in err for s in SECRETS)
    assert "leaky.eval eval model: credential query parameter" in err
    assert "[sample r-ok1] metadata.note: Anthropic-shaped key" in err
    assert "[sample r-ok1] turn t0 (user): Anthropic-shaped key" in err
    assert "[sample r-ok1] scores.quality.explanation: EVALKIT_ATTACK_API_KEY" in err


def _corrected(log: Any) -> None:
    _sample(log, "r-ok1").scores["quality"].value = {"helpful": 0.1, "tone": "warm"}


def test_a_corrected_reimport_into_the_same_ledger_is_refused(
    inspect_logs: dict[str, Path],
    mapping_file: Path,
    like: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    rough = inspect_logs["rough"]
    corrected = edited_log(rough, tmp_path / "corrected.eval", _corrected)
    moved = shutil.copy(rough, tmp_path / "moved.eval")
    ledger, export = tmp_path / "l.sqlite", tmp_path / "l.jsonl"
    assert _import(rough, mapping_file, tmp_path / "a", ledger, str(like)) == 0
    assert _import(rough, mapping_file, tmp_path / "a2", export, str(like)) == 0
    before, text = load_ledger(ledger), export.read_text(encoding="utf-8")
    capsys.readouterr()
    assert _import(corrected, mapping_file, tmp_path / "b", ledger, str(like)) == 2
    err = capsys.readouterr().err
    assert f"{ledger}: already records other answers to 1 of the 12 requests" in err
    assert "case r-ok1" in err and "new ledger" in err
    assert _import(corrected, mapping_file, tmp_path / "b2", export, str(like)) == 2
    assert f"{export}: exists and holds other records" in capsys.readouterr().err
    assert not (tmp_path / "b").exists() and not (tmp_path / "b-labeling").exists()
    assert load_ledger(ledger).equals(before) and export.read_text(encoding="utf-8") == text
    # the same answers from a copy of the log, or the same log again: a no-op, exit 0
    assert _import(Path(moved), mapping_file, tmp_path / "c", ledger, str(like)) == 0
    assert "the ledger keeps its first record" in capsys.readouterr().out
    assert _import(rough, mapping_file, tmp_path / "c2", export, str(like)) == 0
    assert "'identical': 12" in capsys.readouterr().out
    assert load_ledger(ledger).equals(before) and export.read_text(encoding="utf-8") == text
    # the corrected log into a new ledger
    assert _import(corrected, mapping_file, tmp_path / "d", tmp_path / "new.sqlite", str(like)) == 0


def test_labeling_inside_out_exits_2_before_writing(
    inspect_logs: dict[str, Path],
    mapping_file: Path,
    like: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    out, ledger = tmp_path / "cat", tmp_path / "l.sqlite"
    assert (
        _import(inspect_logs["rough"], mapping_file, out, ledger, str(like), "--labeling", str(out))
        == 2
    )
    assert "--labeling" in capsys.readouterr().err
    assert not out.exists() and not ledger.exists()


def test_overlapping_paths_are_refused_before_writing(
    inspect_logs: dict[str, Path], mapping_file: Path, like: Path, tmp_path: Path
) -> None:
    out = tmp_path / "cat"
    result = from_inspect([inspect_logs["rough"]], mapping_file, like=like, out=out)
    kit, ledger = tmp_path / "kit", tmp_path / "l.sqlite"
    (tmp_path / "file").write_text("x")
    cases = {
        "kit inside the catalogue": ({"labeling": out / "kit"}, "inside --out"),
        "kit is the catalogue": ({"labeling": out}, "inside --out"),
        "ledger inside the catalogue": ({"ledger": out / "l.sqlite"}, "inside --out"),
        "ledger inside the blind kit": (
            {"labeling": kit, "ledger": kit / "l.sqlite"},
            "kit is blind",
        ),
        "catalogue inside the blind kit": ({"labeling": tmp_path}, "inside --labeling"),
        "kit inside the template": ({"labeling": like / "kit"}, "inside the template"),
        "ledger inside the template": ({"ledger": like / "l.sqlite"}, "inside the template"),
        "kit is a file": ({"labeling": tmp_path / "file"}, "not a folder"),
        "ledger is a folder": ({"ledger": tmp_path}, "is a folder"),
    }
    for name, (paths, message) in cases.items():
        args: dict[str, Any] = {"ledger": ledger, "labeling": kit, **paths}
        with pytest.raises(EvalkitError, match=message):
            write_import(result, **args)
        assert not out.exists() and not ledger.exists() and not kit.exists(), name
    inside = from_inspect([inspect_logs["rough"]], mapping_file, like=like, out=like / "cat")
    with pytest.raises(EvalkitError, match=r"--out .* inside the template"):
        write_import(inside, ledger=ledger, labeling=kit)
    assert not (like / "cat").exists()


def test_every_text_of_a_sample_is_scrubbed() -> None:
    sample = InspectSample(
        log=f"/logs/{ANTHROPIC}.eval",
        task="t",
        model="m",
        eval_id="e1",
        created="2026-01-01T00:00:00+00:00",
        sample_id="s1",
        epoch=1,
        turns=(("user", "hi"), ("assistant", f"Bearer {URL_KEY}")),
        metadata={ANTHROPIC: 1, "deep": {"list": [f"https://u:{URL_KEY}@h.example/"]}},
        scores={"q": InspectScore({"v": ANTHROPIC}, ANTHROPIC, None)},
        error=f"failed with {ANTHROPIC}",
    )
    clean, redactions = scrub_sample(sample, scrubber())
    assert not any(s in repr(clean) for s in SECRETS)
    assert clean.metadata == {"[redacted]": 1, "deep": {"list": ["https://[redacted]@h.example/"]}}
    assert clean.turns[1] == ("assistant", "Bearer [redacted]")
    shown = "\n".join(map(str, redactions))
    assert not any(s in shown for s in SECRETS)
    for field in ("log path", "turn t1", "metadata keys", "metadata.deep", "scores.q.value"):
        assert field in shown
    assert "scores.q.answer" in shown and "error" in shown
