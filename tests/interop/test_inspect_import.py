"""Inspect logs written by Inspect itself become a catalogue and an imported judge's ledger."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from evalkit.catalogue import load
from evalkit.cli import main
from evalkit.interop import from_inspect, load_unlabelled
from evalkit.judge import load_ledger
from tests.interop import labelstudio_export
from tests.interop.inspect_logs import GRADE, clean_plan

SHIPPED = Path(__file__).resolve().parents[2] / "catalogues"
PLAN = {p["id"]: p for p in clean_plan()}


def _import(log: Path, mapping: Path, out: Path, ledger: Path, *extra: str) -> int:
    args = ["import", "inspect", str(log), "--out", str(out), "--map", str(mapping)]
    return main([*args, "--like", str(SHIPPED), "--ledger", str(ledger), *extra])


def _second(case_id: str, dim: str) -> str:
    """A second annotator who disagrees with the first on every seventh helpful label."""
    truth = str(PLAN[case_id][dim])
    if dim == "helpful" and int(case_id[1:]) % 7 == 0:
        return "high" if truth == "low" else "low"
    return truth


@pytest.mark.slow
def test_clean_log_to_gate_and_study(
    inspect_logs: dict[str, Path], mapping_file: Path, tmp_path: Path
) -> None:
    """The done-when chain with no hand edit: import, label in Label Studio, ratify,
    catalogue check, gate, study."""
    out, ledger = tmp_path / "cat", tmp_path / "ledgers" / "quality.sqlite"
    assert _import(inspect_logs["clean"], mapping_file, out, ledger, "--scorer", "quality") == 0
    kit = tmp_path / "cat-labeling"
    tasks = json.loads((kit / "labelstudio-tasks.json").read_text(encoding="utf-8"))
    assert len(tasks) == 48
    truth = {7: lambda c, d: str(PLAN[c][d]), 12: _second}
    export = labelstudio_export.export(tasks, ["helpful", "tone"], truth)
    (tmp_path / "export.json").write_text(json.dumps(export), encoding="utf-8")
    assert main(["catalogue", "check", str(out)]) == 1  # no labels yet: named, not a crash
    args = ["import", "labelstudio", str(tmp_path / "export.json"), "--catalogue", str(out)]
    assert main([*args, "--name", "7=alice"]) == 0
    adr = tmp_path / "adr" / "0001-imported-constants.md"
    adr.parent.mkdir()
    adr.write_text("# 1. The constants of the imported catalogue\n", encoding="utf-8")
    gate = ["gate", "--catalogue", str(out), "--ledger", str(ledger)]
    assert main(gate) == 1  # unratified constants are a hard fail (ADR-0013)
    assert main(["constants", "ratify", "--catalogue", str(out), "--adr", str(adr)]) == 0
    assert main(["catalogue", "check", str(out)]) == 0
    assert main(gate) == 0
    cat = load(out)
    assert set(cat.label_sets) == {"alice", "labelstudio-12"}
    reports = tmp_path / "reports"
    study = ["study", "--catalogue", str(out), "--ledger", str(ledger), "--out", str(reports)]
    judge = "replay:imported:inspect/quality"
    assert main([*study, "--judge", judge, "--only", "calibration_study"]) == 0
    page = (reports / "calibration_study.html").read_text(encoding="utf-8")
    assert "imported:inspect/quality" in page


def test_cases_keep_ids_metadata_and_provenance(
    inspect_logs: dict[str, Path], mapping_file: Path, tmp_path: Path
) -> None:
    result = from_inspect([inspect_logs["clean"]], mapping_file, like=SHIPPED, out=tmp_path / "c")
    cases = {c.id: c for c in result.catalogue.cases}
    assert set(cases) == set(PLAN)
    multi, single = cases["q000"], cases["q001"]
    # the system message is left out; the input's turns and the reply are kept
    assert [t.role for t in multi.turns] == ["user", "assistant", "user", "assistant"]
    assert multi.turns[0].text == "Hello, I am asking about plant 0."
    assert multi.turns[-1].text.startswith("Here is my answer to: Question 0")
    assert len(single.turns) == 2
    assert multi.locale == "en-GB" and single.locale == "en-US"  # metadata, else default
    assert multi.stratum == "benign" and multi.split == "calibration"
    method = multi.provenance.method
    log = inspect_logs["clean"]
    assert str(log) in method and "task clean" in method and "mockllm/model" in method
    assert json.dumps({"helpful": 0.1, "tone": "cold"}) in method
    counts = result.counts()
    assert counts == {
        "imported:inspect/quality": {"ok": 48},
        "imported:inspect/model_graded_qa": {"ok": 48},
    }
    graded = [r for r in result.records if r["judge"] == "imported:inspect/model_graded_qa"]
    by_case = {r["case_id"]: r["results"][0]["bin"] for r in graded}
    assert by_case == {c: p["grade"] for c, p in PLAN.items()}
    assert {GRADE[b] for b in by_case.values()} == {"C", "P", "I"}


def test_unscored_errored_and_unmapped_samples_are_unparseable(
    inspect_logs: dict[str, Path],
    mapping_file: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    out, ledger = tmp_path / "rough", tmp_path / "rough.jsonl"
    assert _import(inspect_logs["rough"], mapping_file, out, ledger) == 0
    printed = capsys.readouterr().out
    assert "1 sample(s): r-before" in printed  # errored before the reply: nothing to label
    frame = load_ledger(ledger)
    status = {
        (str(c), str(j).rsplit("/", 1)[1], str(d)): str(s)
        for c, j, d, s in frame[["case_id", "judge", "dimension", "status"]].to_numpy()
    }
    expected_unparseable = {
        ("r-after", "quality", "helpful"),  # errored after the reply
        ("r-after", "quality", "tone"),
        ("r-after", "model_graded_qa", "correct"),
        ("r-unscored", "quality", "helpful"),  # the scorer returned no score
        ("r-unscored", "quality", "tone"),
        ("r-outside", "quality", "helpful"),  # 1.5 is above max; tone is absent
        ("r-outside", "quality", "tone"),
        ("r-ok3", "model_graded_qa", "correct"),  # the grader's grade was not found (NaN)
    }
    assert {k for k, s in status.items() if s == "unparseable"} == expected_unparseable
    assert len(status) == 6 * 3
    failed = frame[frame["status"] == "unparseable"]
    assert failed["bin"].isna().all()
    reasons = " ".join(failed["error"].astype(str))
    for phrase in ("errored", "did not score", "outside the mapping"):
        assert phrase in reasons
    records = [json.loads(line) for line in ledger.read_text(encoding="utf-8").splitlines()]
    outside = next(r for r in records if r["case_id"] == "r-outside" and r["status"] != "ok")
    assert json.loads(outside["raw_response"])["value"] == {"helpful": 1.5}
    assert all(r["results"] == [] for r in records if r["status"] == "unparseable")
    assert {c.id for c in load_unlabelled(out).cases} == {
        "r-after", "r-unscored", "r-outside", "r-ok1", "r-ok2", "r-ok3"
    }  # fmt: skip


def test_reimport_writes_the_same_records(
    inspect_logs: dict[str, Path],
    mapping_file: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    ledger = tmp_path / "l.sqlite"
    assert _import(inspect_logs["rough"], mapping_file, tmp_path / "a", ledger) == 0
    capsys.readouterr()
    assert _import(inspect_logs["rough"], mapping_file, tmp_path / "b", ledger) == 0
    assert "'identical': 12" in capsys.readouterr().out


def test_unusable_inputs_exit_2(
    inspect_logs: dict[str, Path],
    mapping_file: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    bad = tmp_path / "broken.eval"
    bad.write_bytes(b"not a zip")
    assert _import(bad, mapping_file, tmp_path / "x", tmp_path / "l.sqlite") == 2
    assert "broken.eval" in capsys.readouterr().err
    taken = tmp_path / "taken"
    taken.mkdir()
    (taken / "file").write_text("x")
    assert _import(inspect_logs["rough"], mapping_file, taken, tmp_path / "l.sqlite") == 2
    assert "not an empty folder" in capsys.readouterr().err
    args = ("--scorer", "nope")
    assert (
        _import(inspect_logs["rough"], mapping_file, tmp_path / "y", tmp_path / "l.sqlite", *args)
        == 2
    )
    assert "reads no such scorer" in capsys.readouterr().err
    assert not (tmp_path / "l.sqlite").exists()


def test_missing_inspect_ai_names_the_extra(
    mapping_file: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setitem(sys.modules, "inspect_ai", None)
    monkeypatch.setitem(sys.modules, "inspect_ai.log", None)
    log = tmp_path / "some.eval"
    log.write_bytes(b"")
    assert _import(log, mapping_file, tmp_path / "x", tmp_path / "l.sqlite") == 2
    assert "evalkit[inspect]" in capsys.readouterr().err


def test_gate_counts_unparseable_answers_against_the_failed_share(
    inspect_logs: dict[str, Path],
    mapping_file: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    out, ledger = tmp_path / "rough", tmp_path / "rough.sqlite"
    assert _import(inspect_logs["rough"], mapping_file, out, ledger, "--scorer", "quality") == 0
    # the kit's blank long CSV, filled in as a labeler would, is a label set
    template = (tmp_path / "rough-labeling" / "labels-template.csv").read_text(encoding="utf-8")
    rows = [line.split(",") for line in template.splitlines()[1:]]
    bins = ["low", "partial", "high"]
    filled = "case_id,dimension,bin,labeler\n" + "".join(
        f"{c},{d},{bins[i % 3]},rater-1\n" for i, (c, d, _, _) in enumerate(rows)
    )
    (tmp_path / "filled.csv").write_text(filled, encoding="utf-8")
    assert main(["import", "csv", str(tmp_path / "filled.csv"), "--catalogue", str(out)]) == 0
    kit = tmp_path / "again"
    assert main(["labels", "export-labelstudio", "--catalogue", str(out), "--out", str(kit)]) == 0
    assert len(json.loads((kit / "labelstudio-tasks.json").read_text(encoding="utf-8"))) == 6
    adr = tmp_path / "0001-rough.md"
    adr.write_text("# 1. Rough constants\n", encoding="utf-8")
    assert main(["constants", "ratify", "--catalogue", str(out), "--adr", str(adr)]) == 0
    capsys.readouterr()
    assert main(["gate", "--catalogue", str(out), "--ledger", str(ledger), "--json"]) == 1
    verdict = json.loads(capsys.readouterr().out)
    for dim in ("helpful", "tone"):
        reasons = {r["code"]: r["message"] for r in verdict["dimensions"][dim]["reasons"]}
        assert "unusable_answers" in reasons, reasons
        assert "3 of 6" in reasons["unusable_answers"], reasons
