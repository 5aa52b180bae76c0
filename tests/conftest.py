"""Shared fixtures. Builders live in :mod:`tests.factory`."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.factory import build_mini_catalogue


@pytest.fixture
def mini_catalogue(tmp_path: Path) -> Path:
    """A valid four-case catalogue (benign, emergency, masked, explicit) in en-US."""
    return build_mini_catalogue(tmp_path)
