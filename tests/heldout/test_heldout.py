"""The sealed held-out protocol: blind template, seal, verify, and every refusal."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from evalkit.errors import SealError
from evalkit.heldout import (
    assert_sealed,
    assert_sealed_before,
    read_filled,
    seal_labels,
    sealed_labels,
    verify_seals,
    write_template,
)
from tests.factory import build_mini_catalogue
from tests.heldout.world import cli, fill, template, with_heldout


def test_template_is_blind_and_blank(tmp_path: Path) -> None:
    cat = with_heldout(tmp_path)
    path = write_template(cat, tmp_path / "t.csv")
    frame = pd.read_csv(path, dtype=str, keep_default_na=False, encoding="utf-8-sig")
    assert list(frame.columns) == [
        "case_id",
        "conversation",
        "self_harm",
        "escalation",
        "faithfulness",
        "labeler",
        "note",
    ]
    assert len(frame) == 3
    assert set(frame["self_harm"]) == {""} and set(frame["escalation"]) == {""}
    assert sorted(frame["faithfulness"]) == ["", "n/a", "n/a"]
    text = path.read_text(encoding="utf-8-sig")
    for hint in ("benign", "masked", "explicit", "ho-0", "stratum", "ideation"):
        assert hint not in text


def test_seal_then_verify_then_tamper(tmp_path: Path) -> None:
    cat = with_heldout(tmp_path)
    filled = fill(template(cat), cat.root / "heldout" / "labels.csv")
    seal = seal_labels(cat, filled)
    assert seal.n_cases == 3 and seal.n_labels == 7 and len(seal.sha256) == 64
    assert sorted(seal.files) == [
        "cases/heldout/en-US/ho.yaml",
        "heldout/labels.csv",
        "heldout/template.csv",
    ]
    assert [s.status for s in verify_seals(cat)] == ["OK"]
    assert len(sealed_labels(cat)) == 7
    # change one character
    data = filled.read_bytes()
    filled.write_bytes(data.replace(b"owner", b"owneR", 1))
    assert [s.status for s in verify_seals(cat)] == ["TAMPERED"]
    with pytest.raises(SealError, match="TAMPERED"):
        sealed_labels(cat)


def test_blank_slot_is_refused(tmp_path: Path) -> None:
    cat = with_heldout(tmp_path)
    blank = write_template(cat, tmp_path / "t.csv")
    with pytest.raises(SealError, match="blank slot"):
        seal_labels(cat, blank)
    _, problems = read_filled(blank, cat)
    assert len(problems) >= 7  # every blank slot and labeler listed, not only the first


def test_invalid_bin_is_refused(tmp_path: Path) -> None:
    cat = with_heldout(tmp_path)
    filled = fill(write_template(cat, tmp_path / "t.csv"), tmp_path / "f.csv", value="medium")
    with pytest.raises(SealError, match="medium"):
        seal_labels(cat, filled)


def test_unsealed_is_refused(tmp_path: Path) -> None:
    cat = with_heldout(tmp_path)
    with pytest.raises(SealError, match=r"no held-out seal recorded in .*heldout/seals\.json"):
        assert_sealed(cat)


def test_unsealed_judge_run_says_not_sealed_once(tmp_path: Path) -> None:
    """#30: the judge printed "held-out labels are not sealed: held-out labels are not
    sealed: ..."; the seal's own message now names the registry instead."""
    cat = with_heldout(tmp_path)
    ledger = tmp_path / "l.sqlite"
    run = cli("judge", "--catalogue", cat.root, "--judge", "baseline", "--split", "heldout",
              "--ledger", ledger)  # fmt: skip
    assert run.code == 2
    assert run.err.count("not sealed") == 1 and "no held-out seal recorded in" in run.err
    assert run.err.endswith("(ADR-0008)\n")


def test_seal_after_judge_run_is_refused(tmp_path: Path) -> None:
    cat = with_heldout(tmp_path)
    seal = seal_labels(cat, fill(template(cat), cat.root / "heldout" / "f.csv"))

    def rows(created_at: str, seal_id: str | None = seal.id) -> pd.DataFrame:
        return pd.DataFrame({"case_id": ["h0a9"], "created_at": [created_at], "seal_id": [seal_id]})

    with pytest.raises(SealError, match="dated before it"):
        assert_sealed_before(cat, rows("2020-01-01T00:00:00+00:00"))
    with pytest.raises(SealError, match="name no seal"):
        assert_sealed_before(cat, rows("2999-01-01T00:00:00+00:00", None))
    with pytest.raises(SealError, match="not in"):
        assert_sealed_before(cat, rows("2999-01-01T00:00:00+00:00", "f" * 64))
    assert assert_sealed_before(cat, rows("2999-01-01T00:00:00+00:00")) == seal


def test_shared_template_family_is_refused(tmp_path: Path) -> None:
    cat = with_heldout(tmp_path, family="fam-c1")
    with pytest.raises(SealError, match="template family"):
        seal_labels(cat, fill(write_template(cat, tmp_path / "t.csv"), tmp_path / "f.csv"))


def test_near_copy_of_a_calibration_turn_is_refused(tmp_path: Path) -> None:
    cat = with_heldout(
        tmp_path, text="My dad's face is drooping on one side and his speech is slurred!"
    )
    with pytest.raises(SealError, match="nearly copy"):
        seal_labels(cat, fill(write_template(cat, tmp_path / "t.csv"), tmp_path / "f.csv"))


@pytest.mark.slow
def test_cli_template_seal_verify(tmp_path: Path) -> None:
    cat = with_heldout(tmp_path)
    run = [sys.executable, "-m", "evalkit", "heldout", "--catalogue", str(cat.root)]
    out = subprocess.run([*run, "template"], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    template = cat.root / "heldout" / "template.csv"
    filled = fill(template, cat.root / "heldout" / "labels.csv")
    assert subprocess.run([*run, "seal", str(filled)], capture_output=True).returncode == 0
    ok = subprocess.run([*run, "verify"], capture_output=True, text=True)
    assert ok.returncode == 0 and "not a git checkout" in ok.stdout
    filled.write_text(filled.read_text().replace("low", "high", 1))
    bad = subprocess.run([*run, "verify"], capture_output=True, text=True)
    assert bad.returncode == 2 and "TAMPERED" in bad.stdout and "labels.csv" in bad.stdout


def test_gate_on_the_heldout_split_end_to_end(tmp_path: Path) -> None:
    """Template → fill → seal → judge → `evalkit gate --split heldout`; then tamper."""
    from evalkit.judge import judge_cases

    cat = with_heldout(tmp_path)
    filled = fill(template(cat), cat.root / "heldout" / "labels.csv")
    seal_labels(cat, filled)
    ledger = tmp_path / "ledger.sqlite"
    judge_cases(cat, cat.split("heldout"), None, judge="baseline", ledger=ledger, progress=False)
    gate = [
        sys.executable,
        "-m",
        "evalkit",
        "gate",
        "--ledger",
        str(ledger),
        "--catalogue",
        str(cat.root),
        "--split",
        "heldout",
        "--json",
    ]
    out = subprocess.run(gate, capture_output=True, text=True)
    # every sealed label is "low", so the human column is degenerate: a hard fail, exit 1
    assert out.returncode == 1, out.stderr
    verdict = json.loads(out.stdout)
    sh = verdict["dimensions"]["self_harm"]
    assert sh["n"] == 3 and "all_low" in {r["code"] for r in sh["reasons"]}
    filled.write_text(filled.read_text().replace("owner", "someone else", 1))
    tampered = subprocess.run(gate, capture_output=True, text=True)
    assert tampered.returncode == 2 and "TAMPERED" in tampered.stderr


@pytest.mark.parametrize(
    ("registry", "said"),
    [
        ('{"schema": null, "seals": []}', "registry schema null, this evalkit reads"),
        ('{"schema": "evalkit-heldout-seals/2", "seals": [null]}', "expected an object, got null"),
        ('{"schema": "evalkit-heldout-seals/2", "seals": [{}]}', "seal #0: index: missing field"),
    ],
)
def test_a_broken_registry_is_named_in_json_terms(tmp_path: Path, registry: str, said: str) -> None:
    """#30: the registry is JSON: its null is quoted as null, never Python's None."""
    cat = with_heldout(tmp_path)
    (cat.root / "heldout").mkdir(exist_ok=True)
    (cat.root / "heldout" / "seals.json").write_text(registry, encoding="utf-8")
    run = cli("heldout", "--catalogue", cat.root, "verify")
    assert run.code == 2 and said in run.err and "None" not in run.err


def test_template_of_a_catalogue_without_heldout_cases_is_refused(tmp_path: Path) -> None:
    """#30 hunt: it wrote an empty sheet (0 cases) into the catalogue and exited 0."""
    root = build_mini_catalogue(tmp_path)
    run = cli("heldout", "--catalogue", root, "template")
    assert run.code == 2 and "no held-out case: nothing to label" in run.err
    assert not (root / "heldout" / "template.csv").exists()
