"""Every import is all or nothing (issue #30).

``evalkit import inspect`` wrote the catalogue, then the ledger, then the labeling kit: a
full disk part-way left some written. Now everything is staged beside its place and a
SQLite ledger is written last, in one transaction that also makes the re-import check;
a failure at any stage leaves every file, and the ledger's rows, as they were. An
existing kit that differs is refused unless ``--replace-kit``. In process, with the small
``mini_catalogue`` as template (the shipped one takes seconds to load).
"""

from __future__ import annotations

import errno
import json
import os
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from evalkit.catalogue import load
from evalkit.cli import main
from evalkit.errors import EvalkitError
from evalkit.interop import from_inspect, load_unlabelled, write_import
from evalkit.interop._from_inspect import InspectImport
from evalkit.interop._labelstudio import write_labelstudio
from evalkit.ledger._store import Ledger

FULL = OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


def _state(folder: Path) -> dict[str, Any]:
    """Every file under ``folder`` (bytes), a SQLite ledger as the rows it holds."""
    out: dict[str, Any] = {}
    for path in sorted(folder.rglob("*")):
        rel = str(path.relative_to(folder))
        if path.suffix == ".sqlite":
            with Ledger(path, create=False) as led:
                out[rel] = json.dumps(led.records(), sort_keys=True)
        elif path.is_file() and ".sqlite-" not in path.name:
            out[rel] = path.read_bytes()
        elif path.is_dir():
            out[rel] = "folder"
    return out


@pytest.fixture
def imports(
    inspect_logs: dict[str, Path], mapping_file: Path, mini_catalogue: Path, tmp_path: Path
) -> tuple[InspectImport, InspectImport]:
    """A first import (scorer ``quality`` only) already written to ``work/ledgers/l.sqlite``
    and ``work/kit``, and a second one (both scorers: new rows, another kit) to write."""
    work = tmp_path / "work"
    log = [inspect_logs["rough"]]
    first = from_inspect(
        log, mapping_file, like=mini_catalogue, out=work / "a", scorers=["quality"]
    )
    write_import(first, ledger=work / "ledgers" / "l.sqlite", labeling=work / "kit")
    second = from_inspect(log, mapping_file, like=mini_catalogue, out=work / "b")
    return first, second


@pytest.mark.parametrize("ledger", ["ledgers/l.sqlite", "new/n.sqlite", "ledgers/l.jsonl"])
def test_a_full_disk_at_any_write_changes_nothing(
    imports: tuple[InspectImport, InspectImport],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    ledger: str,
) -> None:
    # Attack (issue #30): a full disk part-way through `import inspect` left the catalogue
    # written and the ledger or the kit not.
    work, second = tmp_path / "work", imports[1]
    args: dict[str, Any] = {"ledger": work / ledger, "labeling": work / "kit", "replace_kit": True}
    before = _state(work)
    real = Path.write_text
    for k in range(1, 40):
        calls: list[Path] = []

        def full_at_k(self: Path, *a: Any, _k: int = k, _c: list[Path] = calls, **kw: Any) -> int:
            _c.append(self)
            if len(_c) == _k:
                raise FULL
            return real(self, *a, **kw)

        monkeypatch.setattr(Path, "write_text", full_at_k)
        try:
            written = write_import(second, **args)
        except EvalkitError as exc:
            assert "the disk is full (No space left on device)" in str(exc), k
            assert _state(work) == before, k  # no temporary file left either
            continue
        finally:
            monkeypatch.undo()
        break
    assert k > 10  # the validation copy, every catalogue file, the kit, an export
    assert written["ledger_counts"]["added"] == 12
    assert len(load_unlabelled(work / "b").cases) == len(second.catalogue.cases)
    assert not [p for p in work.rglob(".*") if p.suffix in (".tmp", ".bak")]  # none left


@contextmanager
def _failing_commit(self: Ledger) -> Iterator[sqlite3.Connection]:
    self._db.execute("BEGIN IMMEDIATE")
    yield self._db
    self._db.execute("ROLLBACK")
    raise sqlite3.OperationalError("database or disk is full")


def _raise_full(*_: Any) -> None:
    raise FULL


@pytest.mark.parametrize("ledger", ["ledgers/l.sqlite", "new/n.sqlite"])
@pytest.mark.parametrize("stage", ["insert", "commit"])
def test_a_full_disk_in_the_ledger_write_puts_every_file_back(
    imports: tuple[InspectImport, InspectImport],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    ledger: str,
    stage: str,
) -> None:
    # The ledger is written last: its commit failing (SQLite's "database or disk is
    # full") comes after the catalogue and the kit are in place, and takes them back out.
    work, second = tmp_path / "work", imports[1]
    before = _state(work)
    if stage == "insert":
        monkeypatch.setattr(Ledger, "_insert", staticmethod(_raise_full))
    else:
        monkeypatch.setattr(Ledger, "_tx", _failing_commit)
    with pytest.raises(EvalkitError, match="the disk is full") as exc:
        write_import(second, ledger=work / ledger, labeling=work / "kit", replace_kit=True)
    monkeypatch.undo()
    assert "nothing was written or changed" in str(exc.value)
    assert _state(work) == before
    assert not (work / "new").exists()  # nor the folder made for a new ledger


def test_full_disk_exits_2_naming_the_disk(
    inspect_logs: dict[str, Path],
    mapping_file: Path,
    mini_catalogue: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    real, calls = Path.write_text, []

    def full_at_5(self: Path, *a: Any, **kw: Any) -> int:
        calls.append(self)
        if len(calls) == 5:
            raise FULL
        return real(self, *a, **kw)

    out, ledger = tmp_path / "cat", tmp_path / "l.sqlite"
    args = ["import", "inspect", str(inspect_logs["rough"]), "--out", str(out)]
    args += ["--map", str(mapping_file), "--like", str(mini_catalogue), "--ledger", str(ledger)]
    monkeypatch.setattr(Path, "write_text", full_at_5)
    assert main(args) == 2
    monkeypatch.undo()
    err = capsys.readouterr().err
    assert "could not write the import: the disk is full" in err
    assert "nothing was written or changed" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["catalogues", "mapping.yaml"]


def test_an_existing_kit_is_replaced_only_if_asked(
    imports: tuple[InspectImport, InspectImport],
    inspect_logs: dict[str, Path],
    mapping_file: Path,
    mini_catalogue: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # Attack (issue #30): an existing labeling kit's files were overwritten without a word.
    work, second = tmp_path / "work", imports[1]
    kit, ledger = work / "kit", work / "ledgers" / "l.sqlite"
    before = _state(work)
    with pytest.raises(EvalkitError, match=r"differs .* pass --replace-kit") as exc:
        write_import(second, ledger=ledger, labeling=kit)
    assert "(labelstudio-config.xml, labels-template.csv)" in str(exc.value)
    assert _state(work) == before
    # the same kit again (another --out, the same log and scorer): left alone, exit 0
    again = from_inspect(
        [inspect_logs["rough"]],
        mapping_file,
        like=mini_catalogue,
        out=work / "c",
        scorers=["quality"],
    )
    assert write_import(again, ledger=ledger, labeling=kit)["labeling_written"] == []
    assert {k: v for k, v in _state(work).items() if k.startswith("kit")} == {
        k: v for k, v in before.items() if k.startswith("kit")
    }
    # through the CLI: exit 2, then --replace-kit
    args = ["import", "inspect", str(inspect_logs["rough"]), "--out", str(work / "d")]
    args += ["--map", str(mapping_file), "--like", str(mini_catalogue)]
    args += ["--ledger", str(work / "d.sqlite"), "--labeling", str(kit)]
    assert main(args) == 2
    assert "--replace-kit" in capsys.readouterr().err
    assert not (work / "d").exists() and not (work / "d.sqlite").exists()
    assert main([*args, "--replace-kit"]) == 0
    config = (kit / "labelstudio-config.xml").read_text(encoding="utf-8")
    assert '<Choices name="correct"' in config


def test_the_reimport_check_and_the_write_are_one_transaction(
    imports: tuple[InspectImport, InspectImport],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Attack (issue #30): another process recording other answers between the re-import
    # check and the write ended in "kept" (exit 0). It now writes just as the import opens
    # the ledger, after every check made before: the import still sees it, and refuses.
    work, second = tmp_path / "work", imports[1]
    ledger = work / "ledgers" / "l.sqlite"
    mgqa = [r for r in second.records if r["judge"].endswith("model_graded_qa")]
    other = next(r for r in mgqa if r["status"] == "ok")
    other = {**other, "status": "unparseable", "problem": "another answer", "results": []}
    real_init = Ledger.__init__
    injected: list[str | Path] = []

    def meanwhile(self: Ledger, path: str | Path, *, create: bool = True) -> None:
        real_init(self, path, create=create)
        if create and Path(path) == ledger and not injected:
            injected.append(path)
            with Ledger(ledger, create=False) as writer:  # as another process would
                assert writer.record(other)

    monkeypatch.setattr(Ledger, "__init__", meanwhile)
    with pytest.raises(EvalkitError, match="already records other answers to 1 of the 12"):
        write_import(second, ledger=ledger, labeling=work / "kit", replace_kit=True)
    monkeypatch.undo()
    assert not (work / "b").exists()
    with Ledger(ledger, create=False) as led:
        assert led.statuses([other["request_key"]]) == {other["request_key"]: "unparseable"}


def test_export_labelstudio_writes_both_files_or_neither(
    mini_catalogue: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    catalogue = load(mini_catalogue)
    out = tmp_path / "kit"
    real, calls = Path.write_text, []

    def full_at_2(self: Path, *a: Any, **kw: Any) -> int:
        calls.append(self)
        if len(calls) == 2:
            raise FULL
        return real(self, *a, **kw)

    monkeypatch.setattr(Path, "write_text", full_at_2)
    with pytest.raises(EvalkitError, match=r"the disk is full .* no Label Studio file was"):
        write_labelstudio(catalogue, out)
    monkeypatch.undo()
    assert not out.exists()
    assert [p.name for p in write_labelstudio(catalogue, out)] == [
        "labelstudio-tasks.json",
        "labelstudio-config.xml",
    ]


def test_export_csv_onto_a_folder_exits_2_and_moves_nothing(
    mini_catalogue: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "out"
    folder.mkdir()
    (folder / "keep.txt").write_text("mine", encoding="utf-8")
    args = ["labels", "export-csv", "--catalogue", str(mini_catalogue), "--out", str(folder)]
    assert main(args) == 2
    assert "is a folder, not a file" in capsys.readouterr().err
    assert _state(tmp_path / "out") == {"keep.txt": b"mine"}
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]
