"""Issue #30's attacks on the gate's evidence, kept as tests (ADR-0030).

Each fails on the gate of before this wave: a forged ledger passed, answers about rewritten
replies were read, any label file replaced the consensus, and labels edited after the judge
answered went unnoticed.
"""

from __future__ import annotations

import json
import os
import subprocess
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pandas as pd
import pytest

from evalkit.catalogue import Catalogue, load
from evalkit.cli import main
from evalkit.gate import evaluate, label_history
from evalkit.judge import export_jsonl, judge_cases, load_ledger
from tests.factory import build_balanced, consensus_answers, record_ledger

PINNED = "claude-sonnet-4-6"


@pytest.fixture
def world(tmp_path: Path) -> tuple[Catalogue, pd.DataFrame]:
    return build_balanced(tmp_path / "catalogues", copies=2)


def _codes(verdict: object, severity: str = "hard_fail") -> set[str]:
    return {
        r.code
        for v in verdict.dimensions.values()  # type: ignore[attr-defined]
        for r in v.reasons
        if r.severity == severity
    }


def test_a_frame_rows_jsonl_is_not_evidence(
    world: tuple[Catalogue, pd.DataFrame], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The forged ledger of #30: frame rows under a pinned judge, bins set to the consensus."""
    cat, oracle = world
    forged = oracle.assign(judge=f"anthropic:{PINNED}", backend="anthropic", model=PINNED)
    path = tmp_path / "forged.jsonl"
    forged.to_json(path, orient="records", lines=True)
    assert main(["gate", "--catalogue", str(cat.root), "--ledger", str(path)]) == 2
    err = capsys.readouterr().err
    assert "frame rows" in err and "--export-jsonl" in err and str(path) in err


def test_a_renamed_export_is_refused(
    world: tuple[Catalogue, pd.DataFrame], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The baseline's export renamed to a pinned judge with the consensus for bins: the
    request keys no longer match what the catalogue rebuilds, exit 2 naming the line."""
    cat, _ = world
    ledger, export = tmp_path / "baseline.sqlite", tmp_path / "baseline.jsonl"
    judge_cases(cat, judge="baseline", ledger=ledger, progress=False)
    export_jsonl(ledger, export)
    truth = consensus_answers(cat)
    forged = []
    for line in export.read_text().splitlines():
        rec = json.loads(line)
        rec.update(judge=f"anthropic:{PINNED}", backend="anthropic", model=PINNED)
        rec["response_model"] = PINNED
        for res in rec["results"]:
            res["bin"] = truth[(rec["case_id"], res["dimension"])]
        forged.append(json.dumps(rec))
    export.write_text("\n".join(forged) + "\n")
    assert main(["gate", "--catalogue", str(cat.root), "--ledger", str(export)]) == 2
    err = capsys.readouterr().err
    assert "request_key" in err and "line 1" in err


def _rewrite_reply(cat: Catalogue, case_id: str) -> Catalogue:
    old = f"Reply 0 to {case_id}."
    path = next(p for p in (cat.root / "cases").rglob("*.yaml") if old in p.read_text())
    text = path.read_text()
    path.write_text(text.replace(old, f"A rewritten reply to {case_id}."))
    return load(cat.root)


def test_answers_about_a_rewritten_reply_are_stale(
    world: tuple[Catalogue, pd.DataFrame], tmp_path: Path
) -> None:
    cat, _ = world
    path = tmp_path / "ledger.sqlite"
    record_ledger(cat, path)
    assert evaluate(load_ledger(path), cat.labels, cat, n_resamples=50).passed
    case_id = cat.split("calibration")[0].id
    changed = _rewrite_reply(cat, case_id)
    verdict = evaluate(
        load_ledger(path, catalogue=changed), changed.labels, changed, n_resamples=50
    )
    assert not verdict.passed and "stale_answers" in _codes(verdict)
    reason = next(r for r in verdict.dimensions["self_harm"].reasons if r.code == "stale_answers")
    assert case_id in reason.message
    # Judged again into the same ledger: the old answers are set aside with a note.
    record_ledger(changed, path)
    again = evaluate(load_ledger(path), changed.labels, changed, n_resamples=50)
    assert again.passed, again.to_json(indent=1)
    assert "stale_rows_set_aside" in _codes(again, "note")


def test_labels_the_catalogue_does_not_declare_never_pass(
    world: tuple[Catalogue, pd.DataFrame], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A judge that fails against the consensus, gated on a file holding its own bins."""
    cat, _ = world
    answers = {k: "high" if k[1] == "escalation" else v for k, v in consensus_answers(cat).items()}
    path = tmp_path / "ledger.sqlite"
    record_ledger(cat, path, answers)
    mine = tmp_path / "mine.csv"
    rows = [f"{c},{d},{b},me," for (c, d), b in answers.items()]
    mine.write_text("case_id,dimension,bin,labeler,note\n" + "\n".join(rows) + "\n")
    base = ["gate", "--catalogue", str(cat.root), "--ledger", str(path)]
    assert main(base) == 1
    capsys.readouterr()
    md, junit = tmp_path / "gate.md", tmp_path / "gate.xml"
    extra = ["--labels", str(mine), "--json", "--markdown", str(md), "--junit", str(junit)]
    assert main([*base, *extra]) == 1
    out = json.loads(capsys.readouterr().out)
    assert out["overall"] == "FAIL" and str(mine) in out["hashes"]["labels"]
    for dim in out["dimensions"].values():
        (reason,) = [r for r in dim["reasons"] if r["code"] == "undeclared_labels"]
        assert "not gate evidence" in reason["message"] and str(mine) in reason["message"]
    assert "not gate evidence" in md.read_text() and "not gate evidence" in junit.read_text()


def _git(root: Path, *args: str, when: datetime | None = None) -> None:
    env = {**os.environ}
    if when is not None:
        env["GIT_COMMITTER_DATE"] = env["GIT_AUTHOR_DATE"] = when.isoformat()
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.org", *args],
        cwd=root,
        check=True,
        capture_output=True,
        env=env,
    )


def test_labels_changed_after_the_judge_answered_are_a_hard_fail(
    world: tuple[Catalogue, pd.DataFrame], tmp_path: Path
) -> None:
    cat, _ = world
    assert not label_history(cat).in_git
    path = tmp_path / "ledger.sqlite"
    before = datetime.now(UTC) - timedelta(minutes=5)
    _git(cat.root, "init", "-q")
    _git(cat.root, "add", "-A")
    _git(cat.root, "commit", "-qm", "labels", when=before)
    record_ledger(cat, path)
    ledger = load_ledger(path)

    def verdict() -> object:
        return evaluate(ledger, cat.labels, cat, n_resamples=50, label_history=label_history(cat))

    assert verdict().passed  # type: ignore[attr-defined]
    labels = cat.root / "labels" / "gate.csv"
    labels.write_text(labels.read_text().replace("\n", "\r\n", 1))  # any edit
    assert "labels_after_answers" in _codes(verdict())
    _git(cat.root, "commit", "-qam", "labels again", when=datetime.now(UTC) + timedelta(minutes=5))
    assert "labels_after_answers" in _codes(verdict())


def test_outside_git_the_gate_says_it_cannot_tell(
    world: tuple[Catalogue, pd.DataFrame], tmp_path: Path
) -> None:
    cat, _ = world
    path = tmp_path / "ledger.sqlite"
    record_ledger(cat, path)
    verdict = evaluate(
        load_ledger(path), cat.labels, cat, n_resamples=50, label_history=label_history(cat)
    )
    assert verdict.passed and "labels_timing_unknown" in _codes(verdict, "note")


def test_a_folder_as_the_ledger_and_a_bad_labels_file_are_named(
    world: tuple[Catalogue, pd.DataFrame], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cat, _ = world
    base = ["gate", "--catalogue", str(cat.root)]
    assert main([*base, "--ledger", str(tmp_path)]) == 2
    assert "a folder, not a ledger" in capsys.readouterr().err
    path = tmp_path / "ledger.sqlite"
    record_ledger(cat, path)
    bad = tmp_path / "bad.csv"
    bad.write_text("case_id,dimension,bin,labeler,note\nnope,self_harm,low,me,\n")
    assert main([*base, "--ledger", str(path), "--labels", str(bad)]) == 2
    err = capsys.readouterr().err
    assert f"in the labels file {bad}" in err and "in the catalogue" not in err


def test_the_rule_of_three_is_given_only_with_no_miss(
    world: tuple[Catalogue, pd.DataFrame],
) -> None:
    cat, oracle = world
    clean = evaluate(oracle, cat.labels, cat, n_resamples=20).dimensions["self_harm"].recall
    assert clean["false_negatives"] == 0 and clean["rule_of_three_upper_95"] is not None
    missing = oracle.assign(bin=oracle["bin"].where(oracle["dimension"] != "self_harm", "low"))
    recall = evaluate(missing, cat.labels, cat, n_resamples=20).dimensions["self_harm"].recall
    assert recall["false_negatives"] > 0 and recall["rule_of_three_upper_95"] is None
