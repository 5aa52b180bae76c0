"""``evalkit prevalence`` and ``evalkit prevalence plan`` on the shipped catalogue judged by
the baseline judge into a ledger of the test's own (pool: every judged calibration case;
labelled: half of them). ``ledgers/`` is what ``make study`` writes, not part of a clone."""

from __future__ import annotations

import csv
import hashlib
import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from evalkit.catalogue import load
from evalkit.cli import main
from evalkit.heldout._template import conversation_text, template_columns
from evalkit.judge import export_jsonl, judge_cases, load_ledger
from tests.factory import REPO

CATALOGUE = REPO / "catalogues"


@pytest.fixture(scope="module")
def pool_ledger(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The calibration split judged by the offline baseline judge."""
    catalogue = load(CATALOGUE)
    path = tmp_path_factory.mktemp("pool") / "baseline.sqlite"
    dims = list(catalogue.constants.gated_dimensions)
    judge_cases(catalogue, catalogue.split("calibration"), dims, judge="baseline", ledger=path,
                progress=False)  # fmt: skip
    return path


@pytest.fixture(scope="module")
def half_ledger(pool_ledger: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The baseline ledger's export, requests of half the calibration cases (first half by
    sha256): a ledger export, which is validated against the catalogue as evidence."""
    catalogue = load(CATALOGUE)
    ids = sorted(
        (c.id for c in catalogue.split("calibration")),
        key=lambda i: hashlib.sha256(i.encode()).digest(),
    )
    half = set(ids[: len(ids) // 2])
    folder = tmp_path_factory.mktemp("prevalence")
    export_jsonl(pool_ledger, folder / "all.jsonl")
    lines = (folder / "all.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    path = folder / "labelled.jsonl"
    path.write_text("".join(x for x in lines if json.loads(x)["case_id"] in half), "utf-8")
    return path


def test_shipped_self_harm_high_corrected_covers_the_human_rate(
    pool_ledger: Path, half_ledger: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["prevalence", "--ledger", str(pool_ledger), "--labelled", str(half_ledger)]
    code = main([*argv, "--catalogue", str(CATALOGUE), "--dimension", "self_harm", "--json"])
    assert code == 0
    records = json.loads(capsys.readouterr().out)
    rows = {(r["estimator"], r["bin"]): r for r in records if r["stratum"] is None}
    catalogue = load(CATALOGUE)
    from evalkit.gate import pairs as gate_pairs

    pairs = gate_pairs(load_ledger(pool_ledger), catalogue, dimension="self_harm", complete=True)
    human_rate = float((pairs["human"] == "high").mean())
    ppi = rows[("ppi++", "high")]
    judge = rows[("judge_only", "high")]
    assert ppi["status"] == judge["status"] == "ok"
    assert ppi["n_pool"] == len(pairs)
    assert ppi["ci_low"] <= human_rate <= ppi["ci_high"]
    assert not judge["ci_low"] <= human_rate <= judge["ci_high"]
    # Inversion gives an estimate only when the judge's confusion can be inverted; when the
    # baseline cannot tell two bins apart it refuses, with a reason, and gives no number.
    inversion = rows[("inversion", "high")]
    assert inversion["status"] in ("ok", "singular_confusion")
    assert (inversion["estimate"] is None) == (inversion["status"] != "ok")
    assert ("ppi++", "missed") in rows


def test_table_by_locale_and_unusable_input(
    pool_ledger: Path, half_ledger: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = [
        "prevalence",
        "--ledger",
        str(pool_ledger),
        "--labelled",
        str(half_ledger),
        "--catalogue",
        str(CATALOGUE),
    ]
    assert main([*argv, "--dimension", "escalation", "--by", "locale"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0].split()[:4] == ["dimension", "estimator", "stratum", "bin"]
    assert "en-GB" in out and "overall" in out and "escalation" in out
    assert main([*argv, "--by", "colour"]) == 2
    assert "--by" in capsys.readouterr().err
    missing = [
        "prevalence",
        "--ledger",
        str(tmp_path / "nope.sqlite"),
        "--labelled",
        str(half_ledger),
        "--catalogue",
        str(CATALOGUE),
    ]
    assert main(missing) == 2
    assert main(["prevalence", "--ledger", str(pool_ledger), "--catalogue", str(CATALOGUE)]) == 2


def test_plan_writes_a_blind_template_and_the_inclusion_probabilities(
    pool_ledger: Path, half_ledger: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "plan" / "template.csv"
    argv = [
        "prevalence",
        "plan",
        "--ledger",
        str(pool_ledger),
        "--labelled",
        str(half_ledger),
        "--catalogue",
        str(CATALOGUE),
        "--dimension",
        "self_harm",
        "--budget",
        "60",
        "--out",
        str(out),
        "--seed",
        "3",
    ]
    assert main(argv) == 0
    printed, said = capsys.readouterr()
    assert "planned" in printed and "random" in printed and " 200 labels" in printed
    catalogue = load(CATALOGUE)
    with out.open(encoding="utf-8-sig", newline="") as handle:
        reader = csv.DictReader(handle)
        assert reader.fieldnames == template_columns(catalogue)
        rows = list(reader)
    sidecar = json.loads(out.with_name("template.plan.json").read_text(encoding="utf-8"))
    assert {r["case_id"] for r in rows} == set(sidecar["cases"])
    assert 30 < len(rows) < 90
    for row in rows:
        case = catalogue.case(row["case_id"])
        assert row["conversation"] == conversation_text(case)
        assert row["labeler"] == "" and row["self_harm"] == ""
        assert 0 < sidecar["cases"][row["case_id"]]["inclusion_probability"] <= 1
    assert {w["budget"] for w in sidecar["expected_widths"]} == {50, 100, 200}
    labelled = {json.loads(x)["case_id"] for x in half_ledger.read_text("utf-8").splitlines()}
    assert not labelled & set(sidecar["cases"])  # a labelled case is not planned again
    assert "are in the labelled set already and are not planned again" in said
    assert main([*argv[:-4], "--budget", "0", "--out", str(out)]) == 2


def test_a_pool_judged_by_another_judge_exits_2_naming_both(
    pool_ledger: Path, half_ledger: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    other = tmp_path / "other.sqlite"
    shutil.copy(pool_ledger, other)
    with sqlite3.connect(other) as db:
        db.execute("UPDATE requests SET judge = 'anthropic:claude-x', model = 'claude-x'")
    code = main(["prevalence", "--ledger", str(other), "--labelled", str(half_ledger),
                 "--catalogue", str(CATALOGUE), "--dimension", "self_harm"])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2
    assert f"the pool {other} was judged by anthropic:claude-x (claude-x)" in err
    assert f"the labelled set {half_ledger} by baseline (baseline-v2)" in err


def test_a_frame_rows_jsonl_is_not_evidence(
    pool_ledger: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = tmp_path / "rows.jsonl"
    load_ledger(pool_ledger).to_json(rows, orient="records", lines=True)
    code = main(["prevalence", "--ledger", str(pool_ledger), "--labelled", str(rows),
                 "--catalogue", str(CATALOGUE), "--dimension", "self_harm"])  # fmt: skip
    assert code == 2
    assert "a JSONL of frame rows, not a ledger export" in capsys.readouterr().err
