"""``evalkit judge`` pays its fixed costs once: imports without garbage collections, then
frozen (issue 29: the command end to end, ``bench_judge_throughput.py --cli``)."""

from __future__ import annotations

import gc
import importlib.util

import pytest

from evalkit.judge import _backends
from evalkit.judge._backends import BACKEND_MODULES, import_backend
from evalkit.judging._cli import _starting


def test_startup_runs_without_collections_and_freezes_what_it_loaded() -> None:
    before = gc.get_freeze_count()
    try:
        with _starting():
            assert not gc.isenabled()
            loaded = [[i] for i in range(1000)]  # stands for the modules imported
        assert gc.isenabled()
        assert gc.get_freeze_count() >= before + len(loaded)
    finally:
        gc.unfreeze()


def test_startup_leaves_a_disabled_collector_disabled() -> None:
    gc.disable()
    try:
        with _starting():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()
        gc.unfreeze()


def test_startup_restores_the_collector_when_loading_fails() -> None:
    try:
        with pytest.raises(ValueError), _starting():
            raise ValueError("a catalogue that cannot be read")
        assert gc.isenabled()
    finally:
        gc.unfreeze()


def test_import_backend_imports_the_module_its_spec_names(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    imported: list[str] = []
    monkeypatch.setattr(_backends.importlib, "import_module", imported.append)
    for spec in ("anthropic:claude-sonnet-4-6", "openai:http://h/v1:m", "replay", "nope:x"):
        import_backend(spec)
    import_backend("baseline")
    assert imported == ["evalkit.judge.anthropic", "evalkit.judge.openai", "evalkit.judge.baseline"]
    for module in BACKEND_MODULES.values():
        assert importlib.util.find_spec(module) is not None, module
