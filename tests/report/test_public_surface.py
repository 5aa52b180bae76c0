"""``evalkit.report``'s public surface is what the notebooks use, each name documented in
the package docstring; the names it exported before #28 still resolve, with a warning."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import evalkit.report as rp

REPO = Path(__file__).resolve().parents[2]


def test_every_name_a_notebook_uses_is_public_and_documented() -> None:
    used = set()
    for path in (REPO / "notebooks").glob("*.py"):
        used |= set(re.findall(r"\brp\.([A-Za-z_]\w*)", path.read_text()))
    assert used <= set(rp.__all__), sorted(used - set(rp.__all__))
    doc = rp.__doc__ or ""
    undocumented = [n for n in rp.__all__ if not re.search(rf"`{n}`", doc)]
    assert undocumented == []
    assert len(rp.__all__) < 90  # was 136: the machinery of evalkit study is private
    for name in rp.__all__:
        assert getattr(rp, name) is not None


def test_a_formerly_public_name_still_resolves_with_a_warning() -> None:
    from evalkit.report._run import run_studies

    assert "run_studies" not in rp.__all__ and "run_studies" not in dir(rp)
    with pytest.warns(DeprecationWarning, match=r"import it from evalkit\.report\._run"):
        assert getattr(rp, "run_studies") is run_studies  # noqa: B009
    with pytest.raises(AttributeError):
        getattr(rp, "no_such_name")  # noqa: B009
