"""``evalkit notebook new``: plain copies of the study templates in the git-ignored
workspace, never an overwrite; ``workspace/`` stays out of ``git status``."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import nbformat
import pytest

from evalkit.cli import main
from evalkit.report import work_from_project_root
from evalkit.report._run import STUDIES

REPO = Path(__file__).resolve().parents[2]
TEMPLATES = REPO / "notebooks"


def _content(nb: nbformat.NotebookNode) -> list[tuple[str, str, list[str]]]:
    return [(c.cell_type, c.source, c.metadata.get("tags", [])) for c in nb.cells]


def test_new_writes_a_plain_copy_of_the_template(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "mine"
    code = main(["notebook", "new", "calibration_study", str(out), "--notebooks", str(TEMPLATES)])
    assert code == 0
    said = capsys.readouterr().out
    copy = out / "calibration_study.ipynb"
    assert f"wrote {copy}" in said and "jupyter lab" in said
    nb = nbformat.read(copy, as_version=4)
    nbformat.validate(nb)
    template = nbformat.read(TEMPLATES / "calibration_study.ipynb", as_version=4)
    assert _content(nb) == _content(template)  # the cells papermill runs in the suite
    assert "jupytext" not in nb.metadata  # saving it in Lab writes no .py twin
    assert nb.metadata["kernelspec"]["name"] == "python3"
    assert all(c.outputs == [] for c in nb.cells if c.cell_type == "code")
    assert list(out.iterdir()) == [copy]


def test_new_defaults_to_workspace_and_points_to_make_lab(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "notebooks").mkdir()
    shutil.copy(TEMPLATES / "onset_turns.ipynb", tmp_path / "notebooks")
    monkeypatch.chdir(tmp_path)
    assert main(["notebook", "new", "onset_turns"]) == 0
    assert (tmp_path / "workspace" / "onset_turns.ipynb").is_file()
    assert "make lab" in capsys.readouterr().out


def test_new_refuses_an_existing_file_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    mine = tmp_path / "calibration_study.ipynb"
    mine.write_text("my work")
    argv = ["notebook", "new", "calibration_study", str(tmp_path), "--notebooks", str(TEMPLATES)]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert f"evalkit notebook: {mine}: already exists" in err
    assert mine.read_text() == "my work"


def test_new_refuses_an_unknown_study_listing_the_studies(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["notebook", "new", "calibration", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "unknown study 'calibration'" in err
    assert all(s.name in err for s in STUDIES)
    assert list(tmp_path.iterdir()) == []


def test_new_refuses_a_file_as_dir_and_a_missing_template(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "f").write_text("")
    assert main(["notebook", "new", "prevalence", str(tmp_path / "f"), "--notebooks",
                 str(TEMPLATES)]) == 2  # fmt: skip
    assert "is a file" in capsys.readouterr().err
    assert main(["notebook", "new", "prevalence", str(tmp_path / "w"), "--notebooks",
                 str(tmp_path)]) == 2  # fmt: skip
    assert "no such study notebook" in capsys.readouterr().err


def test_a_kernel_started_in_the_workspace_works_from_the_project_root(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "workspace").mkdir()
    monkeypatch.delenv("EVALKIT_PROJECT", raising=False)
    monkeypatch.chdir(tmp_path / "workspace")
    assert work_from_project_root() == tmp_path


@pytest.mark.skipif(not (REPO / ".git").exists(), reason="not a git checkout")
def test_work_in_the_workspace_is_ignored_by_git() -> None:
    paths = [
        "workspace/calibration_study.ipynb",
        "workspace/my_analysis.ipynb",
        "workspace/my_analysis.py",
        "workspace/sub/out.html",
        "workspace/.ipynb_checkpoints/my_analysis-checkpoint.ipynb",
    ]
    ignored = subprocess.run(
        ["git", "check-ignore", "--no-index", *paths],
        cwd=REPO, capture_output=True, text=True, timeout=30,
    ).stdout.split()  # fmt: skip
    assert ignored == paths


def test_new_copies_the_tutorial_which_is_no_study(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert "tutorial" not in {s.name for s in STUDIES}
    code = main(["notebook", "new", "tutorial", str(tmp_path), "--notebooks", str(TEMPLATES)])
    assert code == 0
    nb = nbformat.read(tmp_path / "tutorial.ipynb", as_version=4)
    assert _content(nb) == _content(nbformat.read(TEMPLATES / "tutorial.ipynb", as_version=4))
    assert main(["notebook", "new", "tutorials", str(tmp_path)]) == 2
    assert "the worked example: tutorial" in capsys.readouterr().err
