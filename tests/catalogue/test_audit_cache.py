"""The audit's fitted shortcuts are remembered across runs when a cache folder is set
(``evalkit study`` sets one), and a remembered result is the same as a computed one."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

import evalkit.catalogue._audit as audit_module
import evalkit.catalogue._shortcuts as shortcuts
from evalkit._memo import CACHE_VARIABLE
from evalkit.catalogue import audit, load
from tests.catalogue.test_audit import _catalogue


def _same(a: audit_module.AuditResult, b: audit_module.AuditResult) -> None:
    pd.testing.assert_frame_equal(a.table, b.table)
    pd.testing.assert_frame_equal(a.predictions, b.predictions)


def test_a_remembered_audit_equals_a_computed_one_and_fits_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cat = load(_catalogue(tmp_path / "catalogues", reply_gives_label=False))
    computed = audit(cat)  # no cache folder: nothing read or written
    monkeypatch.setenv(CACHE_VARIABLE, str(tmp_path / "cache"))
    first = audit(cat)
    files = sorted((tmp_path / "cache").glob("audit-*.json"))
    assert len(files) == 2  # one per gated dimension with labels in two bins or more

    def no_fit(*args: object, **kw: object) -> None:
        raise AssertionError("a remembered audit fitted a model")

    monkeypatch.setattr(shortcuts, "text_out_of_fold", no_fit)
    monkeypatch.setattr(shortcuts, "out_of_fold", no_fit)
    again = audit(cat)
    _same(computed, first)
    _same(computed, again)


def test_a_damaged_cache_file_is_computed_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cat = load(_catalogue(tmp_path / "catalogues", reply_gives_label=False))
    monkeypatch.setenv(CACHE_VARIABLE, str(tmp_path / "cache"))
    computed = audit(cat)
    for path in (tmp_path / "cache").glob("audit-*.json"):
        path.write_text('{"reply_text": ["not a bin"]}', encoding="utf-8")
    _same(computed, audit(cat))
    assert all("not a bin" not in p.read_text() for p in (tmp_path / "cache").glob("*.json"))


def test_other_conversations_and_labels_are_other_keys(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(CACHE_VARIABLE, str(tmp_path / "cache"))
    audit(load(_catalogue(tmp_path / "one", reply_gives_label=False)))
    audit(load(_catalogue(tmp_path / "two", reply_gives_label=True)))
    # the replies and the self-harm labels differ: no dimension reads the other's result
    assert len(list((tmp_path / "cache").glob("audit-*.json"))) == 4
