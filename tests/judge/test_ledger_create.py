"""A new ledger appears whole: a reader never finds an empty or half-made database at its
path (two studies running side by side, one creating the ledger, one reading it)."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalkit.errors import LedgerError
from evalkit.ledger import Ledger
from evalkit.ledger._file import LedgerFile


def test_while_a_ledger_is_made_its_path_shows_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "ledgers" / "baseline.sqlite"
    seen: list[str] = []
    real_open = LedgerFile._open

    def spying_open(self: LedgerFile, create: bool) -> None:
        if self.path != path:  # the private copy being built
            seen.append(self.path.name)
            assert not path.exists()  # what a reader at that moment finds: no ledger yet
            with pytest.raises(LedgerError, match="no such ledger"):
                Ledger(path, create=False)
        real_open(self, create)

    monkeypatch.setattr(LedgerFile, "_open", spying_open)
    with Ledger(path) as ledger:
        assert ledger.salt
    assert seen and seen[0].startswith(".baseline.sqlite.")
    assert sorted(p.name for p in path.parent.iterdir()) == ["baseline.sqlite"]
    with Ledger(path, create=False) as again:  # whole: it opens as a ledger
        assert again.salt


def test_two_creators_share_the_first_ledger(tmp_path: Path) -> None:
    path = tmp_path / "l.sqlite"
    with Ledger(path) as first:
        salt = first.salt
    with Ledger(path) as second:  # the path exists: opened, never replaced
        assert second.salt == salt


def test_a_ledger_that_cannot_be_created_is_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A folder that refuses the new file (read-only, full) is a LedgerError naming the
    ledger, not a traceback, and leaves no private copy behind."""
    import os

    def refuse(*_: object) -> None:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(os, "link", refuse)
    monkeypatch.setattr(os, "replace", refuse)
    path = tmp_path / "l.sqlite"
    with pytest.raises(LedgerError, match=r"l\.sqlite: cannot create the ledger \(Permission"):
        Ledger(path)
    assert list(tmp_path.iterdir()) == []
