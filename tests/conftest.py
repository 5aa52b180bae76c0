"""Shared fixtures. Builders live in :mod:`tests.factory`."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import settings

from tests.factory import build_mini_catalogue

# Property tests draw the same examples on every run, so a red CI build is reproducible.
settings.register_profile("evalkit", derandomize=True, deadline=None)
settings.load_profile("evalkit")


@pytest.fixture
def mini_catalogue(tmp_path: Path) -> Path:
    """A valid four-case catalogue (benign, emergency, masked, explicit) in en-US."""
    return build_mini_catalogue(tmp_path)
