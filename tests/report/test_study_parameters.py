"""Study parameters are checked against the type and range their notebook declares,
before any notebook runs (issue #30: ``study -p n_resamples=-1`` ran the notebook and
failed it with exit 1, the code of an asked-for failure)."""

from __future__ import annotations

import ast
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from evalkit.catalogue import load
from evalkit.cli import main
from evalkit.judge import judge_cases, load_ledger
from evalkit.report._execute import notebook_parameters
from evalkit.report._parameters import (
    TYPES,
    DeclarationError,
    StudyParameterError,
    check_pool_ledger,
    declaration,
    notebook_declarations,
    problem,
)
from evalkit.report._run import STUDIES

REPO = Path(__file__).resolve().parents[2]
#: The shipped templates only: a researcher's own notebook in notebooks/ is not one.
NOTEBOOKS = [REPO / "notebooks" / f"{s.name}.ipynb" for s in STUDIES]
RESAMPLES = declaration("n_resamples", "int", "bootstrap resamples, in [1, 100000]")


@pytest.mark.parametrize(
    ("value", "said"),
    [
        (-1, "got -1"),
        (0, "got 0"),
        ("abc", "got 'abc' (a string)"),
        ("1e400", "got '1e400' (a string)"),  # YAML reads 1e400 as text, not a number
        (True, "got true"),
        (None, "got null"),
        (2.5, "got 2.5"),
        (100001, "got 100001"),
    ],
)
def test_a_value_outside_the_declared_type_or_range_is_named(value: object, said: str) -> None:
    why = problem(RESAMPLES, value)
    assert why is not None and "must be an integer in [1, 100000]" in why and said in why


def test_declarations_read_type_range_and_meaning() -> None:
    level = declaration("level", "float", "level of every interval, in (0, 1)")
    assert level.help == "level of every interval" and str(level.range) == "in (0, 1)"
    assert problem(level, 0.95) is None and problem(level, 1) is not None
    assert problem(level, float("inf")) is not None and problem(level, float("nan")) is not None
    assert problem(RESAMPLES, 2000) is None and problem(RESAMPLES, 1) is None
    pair = declaration("versions", "list[str]", "two versions, items in [2, 2]")
    assert problem(pair, ["v1", "v3"]) is None
    assert "got 1 item(s)" in (problem(pair, ["v1"]) or "")
    assert "a list of strings" in (problem(pair, ["v1", 3]) or "")
    text = declaration("target", "str", "conversation target")
    assert "quote a string" in (problem(text, False) or "")  # -p target=no
    assert problem(declaration("n", "None", "untyped"), "anything") is None


@pytest.mark.parametrize(
    ("type_name", "help"),
    [("tuple", "a pair"), ("str", "a name, in [1, 3]"), ("int", "a count, items in [1, 2]")],
)
def test_a_declaration_that_cannot_be_checked_is_refused(type_name: str, help: str) -> None:
    with pytest.raises(DeclarationError, match="'x'"):
        declaration("x", type_name, help)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_every_shipped_parameter_declares_a_checked_type_and_numbers_a_range(path: Path) -> None:
    declared = notebook_declarations(path)
    raw = notebook_parameters(path)
    for name, decl in declared.items():
        assert decl.type_name in TYPES, f"{path.name}: {name} declares no checked type"
        if decl.type_name in ("int", "float"):
            assert decl.range is not None, f"{path.name}: {name} declares no range"
        default = ast.literal_eval(raw[name]["default"])
        assert problem(decl, default) is None, f"{path.name}: the default of {name}"


@pytest.mark.parametrize("study", STUDIES, ids=lambda s: s.name)
def test_every_study_default_fits_its_notebook(study: object) -> None:
    declared = notebook_declarations(REPO / "notebooks" / f"{study.name}.ipynb")  # type: ignore[attr-defined]
    for name, value in study.extra.items():  # type: ignore[attr-defined]
        assert problem(declared[name], value) is None, f"{study}: {name}={value!r}"


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["-p", "n_resamples=-1"], "parameter n_resamples"),
        (["-p", "n_resamples=0"], "must be an integer in [1, 100000], got 0"),
        (["-p", "n_resamples=abc"], "got 'abc' (a string)"),
        (["-p", "n_resamples=1e400"], "got '1e400' (a string)"),
        (["-p", "level=1.0e+400"], "must be a number in (0, 1), got inf"),
        (["-p", "versions=[v1]"], "got 1 item(s)"),
        (["--seed", "-1"], "parameter seed (seed of bootstraps and simulations), set by --seed"),
        (["-p", "target=gpt-4o"], "'gpt-4o' is no target; use replay"),
    ],
)
def test_study_refuses_a_bad_parameter_with_exit_2_before_anything_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], said: str
) -> None:
    out = tmp_path / "out"
    code = main(["study", "--catalogue", str(tmp_path / "catalogues"), "--out", str(out),
                 "--ledger-dir", str(tmp_path / "led"), "--notebooks", str(REPO / "notebooks"),
                 *args])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2, err
    assert said in err and "nothing was run" in err and "Traceback" not in err
    assert not out.exists() and not (tmp_path / "led").exists()


@pytest.fixture
def judged(mini_catalogue: Path, tmp_path: Path) -> Path:
    """The mini catalogue judged by the offline baseline judge (a SQLite ledger)."""
    cat = load(mini_catalogue)
    path = tmp_path / "pool.sqlite"
    judge_cases(cat, cat.cases, list(cat.constants.gated_dimensions), judge="baseline",
                ledger=path, progress=False)  # fmt: skip
    return path


def _other_judge(ledger: Path, dest: Path) -> Path:
    shutil.copy(ledger, dest)
    with sqlite3.connect(dest) as db:
        db.execute("UPDATE requests SET judge = 'anthropic:claude-x', model = 'claude-x'")
    return dest


def _frame_rows(ledger: Path, dest: Path) -> Path:
    load_ledger(ledger).to_json(dest, orient="records", lines=True)
    return dest


@pytest.mark.parametrize(
    ("make", "said"),
    [
        (lambda led, tmp: Path("../../etc/passwd"), "no such ledger"),
        (lambda led, tmp: tmp / "catalogues" / "constants.yaml", "pool_ledger="),
        (lambda led, tmp: _frame_rows(led, tmp / "rows.jsonl"), "a JSONL of frame rows"),
        (lambda led, tmp: _other_judge(led, tmp / "other.sqlite"),
         "judged by anthropic:claude-x (claude-x)"),
    ],
    ids=["outside", "not-a-ledger", "frame-rows", "other-judge"],
)  # fmt: skip
def test_a_pool_ledger_that_is_not_evidence_exits_2_before_anything_runs(
    judged: Path, mini_catalogue: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str], make: Any, said: str,
) -> None:  # fmt: skip
    monkeypatch.chdir(tmp_path)
    pool = make(judged, tmp_path)
    code = main(["study", "--catalogue", str(mini_catalogue), "--out", "out", "--ledger-dir",
                 "led", "--only", "prevalence", "--notebooks", str(REPO / "notebooks"),
                 "-p", f"pool_ledger={pool}"])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2, err
    assert "parameter pool_ledger" in err and said in err and "Traceback" not in err
    assert not (tmp_path / "out").exists()


def test_a_pool_ledger_of_the_study_judge_is_accepted(
    judged: Path, mini_catalogue: Path, tmp_path: Path
) -> None:
    cat = load(mini_catalogue)
    assert check_pool_ledger(cat, {"pool_ledger": str(judged), "judge": "baseline"}) is None
    assert check_pool_ledger(cat, {"pool_ledger": "", "judge": "x"}) is None
    for spec in ("replay", "replay:baseline"):  # replaying the baseline's answers
        params = {"pool_ledger": str(judged), "judge": spec, "ledger": str(judged)}
        assert check_pool_ledger(cat, params) is None
    other = {"pool_ledger": str(_other_judge(judged, tmp_path / "o.sqlite")), "judge": "replay",
             "ledger": str(judged)}  # fmt: skip
    with pytest.raises(StudyParameterError, match=r"labelled set by baseline \(--judge replay\)"):
        check_pool_ledger(cat, other)


@pytest.mark.parametrize(
    ("given", "only"),
    [("dimensions=[self_harm, selfharm]", "calibration_study"),
     ("dimension=nonsense", "rubric_constructs")],
)  # fmt: skip
def test_a_dimension_the_catalogue_lacks_exits_2_before_anything_runs(
    mini_catalogue: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str], given: str, only: str,
) -> None:  # fmt: skip
    monkeypatch.chdir(tmp_path)
    code = main(["study", "--catalogue", str(mini_catalogue), "--out", "out", "--ledger-dir",
                 "led", "--only", only, "--notebooks", str(REPO / "notebooks"),
                 "-p", given])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2, err
    assert "no rubric for" in err and "nothing was run" in err
    assert not (tmp_path / "out").exists()
