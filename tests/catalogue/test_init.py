"""``evalkit catalogue init``: a minimal catalogue that every command runs on at once."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalkit.catalogue import load
from evalkit.catalogue._scaffold import init_catalogue, scaffold_files
from evalkit.cli import main
from evalkit.errors import CatalogueError

SHIPPED = Path(__file__).parents[2] / "catalogues"


def test_init_writes_a_catalogue_the_strict_loader_accepts(tmp_path: Path) -> None:
    root = tmp_path / "deep" / "mine"
    written = init_catalogue(root)
    assert sorted(p.relative_to(root).as_posix() for p in written) == sorted(scaffold_files())
    cat = load(root)
    assert len(cat.cases) == 2 and {c.split for c in cat.cases} == {"calibration"}
    dims = cat.constants.gated_dimensions
    assert {(lab.case_id, lab.dimension) for lab in cat.labels} == {
        (c.id, d) for c in cat.cases for d in dims
    }
    for dim in dims:  # one rubric per gated dimension, the one in force
        assert cat.rubric(dim).version == cat.constants.rubrics_in_force[dim]
    assert {lab.bin for lab in cat.labels} <= set(cat.constants.bins)
    assert set(cat.resources) == {c.locale for c in cat.cases}
    # deliberately not ratified: nobody has decided these constants yet
    assert not cat.ratification.ratified
    assert cat.framing_hash == load(SHIPPED).framing_hash  # the shipped framing, verbatim


def test_init_into_an_empty_folder_is_fine(tmp_path: Path) -> None:
    init_catalogue(tmp_path)
    load(tmp_path)


def test_init_refuses_a_non_empty_folder_or_a_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(CatalogueError, match="not empty"):
        init_catalogue(tmp_path)
    assert [p.name for p in tmp_path.iterdir()] == ["notes.txt"]  # nothing written
    with pytest.raises(CatalogueError, match="is a file"):
        init_catalogue(tmp_path / "notes.txt")
    assert main(["catalogue", "init", str(tmp_path)]) == 2
    assert "not empty" in capsys.readouterr().err


def test_check_judge_gate_run_on_it_at_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root, ledger = tmp_path / "mine", tmp_path / "mine-baseline.sqlite"
    assert main(["catalogue", "init", str(root)]) == 0
    printed = capsys.readouterr().out
    assert f"evalkit judge --catalogue {root} --judge baseline --ledger {ledger}" in printed
    assert "not ratified" in printed and "exploratory" in printed
    assert main(["catalogue", "check", str(root)]) == 0
    assert "2 cases, 6 labels, 3 rubrics" in capsys.readouterr().out
    args = ["judge", "--catalogue", str(root), "--judge", "baseline", "--ledger", str(ledger)]
    assert main([*args, "--quiet"]) == 0
    capsys.readouterr()
    # the gate decides (FAIL, exit 1), it does not error: too few pairs, constants unratified
    assert main(["gate", "--catalogue", str(root), "--ledger", str(ledger), "--json"]) == 1
    verdict = json.loads(capsys.readouterr().out)
    for dim in verdict["dimensions"].values():
        codes = {r["code"] for r in dim["reasons"]}
        assert {"too_few_pairs", "constants_not_ratified"} <= codes
    assert main(["constants", "status", "--catalogue", str(root)]) == 1


@pytest.mark.slow
def test_study_renders_on_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root, ledger, out = tmp_path / "mine", tmp_path / "mine.sqlite", tmp_path / "reports"
    assert main(["catalogue", "init", str(root)]) == 0
    # the two studies asserted on: every study's run on a small catalogue is the e2e tests'
    only = ["--only", "calibration_study", "--only", "rubric_constructs"]
    run = ["study", "--catalogue", str(root), "--ledger", str(ledger), "--out", str(out), *only]
    code = main(run)
    err = capsys.readouterr().err
    assert code == 0, err
    pages = sorted(p.name for p in out.glob("*.html"))
    assert "index.html" in pages and "calibration_study.html" in pages
    calibration = (out / "calibration_study.html").read_text()
    assert "Exploratory" in calibration  # unratified constants: never gate evidence
    # One rubric per dimension: the constructs study has nothing to compare, and says so.
    constructs = (out / "rubric_constructs.html").read_text()
    assert "does not apply to this catalogue" in constructs and "self_harm v3" in constructs
    assert "not applicable" in (out / "index.html").read_text()
