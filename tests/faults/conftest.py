"""Fixtures of the fault suite: a fake key in the environment, nothing else leaking in."""

from __future__ import annotations

import pytest

from tests.faults._support import FAKE_KEY


@pytest.fixture
def fake_key(monkeypatch: pytest.MonkeyPatch) -> str:
    """Plant a fake API key; no base URL or nonce salt from the outer environment."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", FAKE_KEY)
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)
    monkeypatch.delenv("EVALKIT_NONCE_SALT", raising=False)
    return FAKE_KEY
