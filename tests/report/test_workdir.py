"""The notebooks read their relative paths from the project root, even in JupyterLab."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalkit.report import work_from_project_root
from evalkit.report._workdir import PROJECT_ENV


def test_a_kernel_started_in_notebooks_moves_to_the_project_root(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    (tmp_path / "notebooks").mkdir()
    monkeypatch.delenv(PROJECT_ENV, raising=False)
    monkeypatch.chdir(tmp_path / "notebooks")
    assert work_from_project_root().resolve() == tmp_path.resolve()


def test_the_environment_names_the_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    monkeypatch.setenv(PROJECT_ENV, str(tmp_path))
    assert work_from_project_root().resolve() == tmp_path.resolve()
    monkeypatch.setenv(PROJECT_ENV, str(tmp_path / "missing"))
    with pytest.raises(NotADirectoryError, match="missing"):
        work_from_project_root()


def test_papermill_and_evalkit_study_keep_their_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "notebooks").mkdir()  # a notebooks folder with no project beside it
    monkeypatch.delenv(PROJECT_ENV, raising=False)
    for where in (tmp_path, tmp_path / "notebooks"):
        monkeypatch.chdir(where)
        assert work_from_project_root() == where
