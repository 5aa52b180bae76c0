"""Inspect logs written once per session by Inspect itself (its start-up is slow)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.interop.inspect_logs import MAPPING, write_logs


@pytest.fixture(scope="session")
def inspect_logs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """``{"clean": log, "rough": log}``: see :mod:`tests.interop.inspect_logs`."""
    pytest.importorskip("inspect_ai")
    return write_logs(tmp_path_factory.mktemp("inspect-logs"))


@pytest.fixture
def mapping_file(tmp_path: Path) -> Path:
    path = tmp_path / "mapping.yaml"
    path.write_text(MAPPING, encoding="utf-8")
    return path
