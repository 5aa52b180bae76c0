"""Ratified constants (ADR-0013): an edited constant is a named hard fail until ratified."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from evalkit.catalogue import load
from evalkit.cli import main
from evalkit.gate import evaluate
from tests.factory import SHIPPED, agreeing_ledger, build_balanced


def _loosen(root: Path) -> None:
    text = (root / "constants.yaml").read_text(encoding="utf-8")
    assert "threshold: 0.60" in text
    (root / "constants.yaml").write_text(text.replace("threshold: 0.60", "threshold: 0.05"))


def test_the_shipped_constants_are_ratified() -> None:
    status = load(SHIPPED).ratification
    assert status.ratified and status.adr == "ADR-0029"
    assert (SHIPPED.parent / status.record.adr_file).is_file()  # type: ignore[union-attr]


def test_an_edited_threshold_fails_the_gate_until_ratified(tmp_path: Path) -> None:
    root = tmp_path / "catalogues"
    build_balanced(root, copies=2)
    cat = load(root)
    assert evaluate(agreeing_ledger(cat), cat.labels, cat, n_resamples=50).passed
    _loosen(root)
    loose = load(root)
    verdict = evaluate(agreeing_ledger(loose), loose.labels, loose, n_resamples=50)
    assert not verdict.passed
    for v in verdict.dimensions.values():
        first = v.reasons[0]
        assert first.code == "constants_not_ratified" and first.severity == "hard_fail"
        assert "constants not ratified: changed since ADR-0029" in first.message
    adr = tmp_path / "docs" / "adr" / "0099-lower-the-gate.md"
    adr.parent.mkdir(parents=True)
    adr.write_text("# ADR-0099: Lower the gate\n")
    assert main(["constants", "ratify", "--catalogue", str(root), "--adr", str(adr)]) == 0
    ratified = load(root)
    assert ratified.ratification.adr == "ADR-0099"
    again = evaluate(agreeing_ledger(ratified), ratified.labels, ratified, n_resamples=50)
    assert again.passed and again.hashes["ratified_by"] == "ADR-0099"


def test_the_gate_cli_exits_1_naming_the_break(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from evalkit.judge import judge_cases

    root = tmp_path / "catalogues"
    shutil.copytree(SHIPPED, root)
    ledger = tmp_path / "l.sqlite"
    cases = load(root).split("calibration")[:3]
    judge_cases(load(root), cases, judge="baseline", ledger=ledger, progress=False)
    _loosen(root)
    code = main(["gate", "--catalogue", str(root), "--ledger", str(ledger), "--json"])
    assert code == 1
    doc = json.loads(capsys.readouterr().out)
    reasons = doc["dimensions"]["self_harm"]["reasons"]
    assert reasons[0]["code"] == "constants_not_ratified" and reasons[0]["adr"] == "ADR-0013"
    assert main(["constants", "status", "--catalogue", str(root)]) == 1


def test_bad_ratify_input_is_exit_2(tmp_path: Path) -> None:
    root = tmp_path / "catalogues"
    build_balanced(root, copies=1)
    _loosen(root)
    assert main(["constants", "ratify", "--catalogue", str(root), "--adr", "nope.md"]) == 2
    bad_name = tmp_path / "lower.md"
    bad_name.write_text("# no number\n")
    assert main(["constants", "ratify", "--catalogue", str(root), "--adr", str(bad_name)]) == 2
    (root / "ratified.yaml").write_text("ratifications:\n- constants_sha256: xyz\n")
    assert main(["constants", "status", "--catalogue", str(root)]) == 2


def test_the_report_header_names_the_adr_or_says_not_ratified(tmp_path: Path) -> None:
    import evalkit.report as rp

    root = tmp_path / "catalogues"
    build_balanced(root, copies=1)
    page = str(rp.header("t", "l", catalogue=load(root), judge="baseline", parameters={}))
    assert "ADR-0029" in page and "not ratified" not in page.lower()
    _loosen(root)
    page = str(rp.header("t", "l", catalogue=load(root), judge="baseline", parameters={}))
    assert "Constants not ratified: not gate evidence" in page
    assert "changed since ADR-0029" in page and "NOT RATIFIED" in page
