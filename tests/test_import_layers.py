"""The judge, the ledger and the run stand in layers, with no import circle (issue 29).

``evalkit.judge`` is one call (prompt, answer, backends); ``evalkit.ledger`` is the store
and reads of judge only the prompt and the answer parser; ``evalkit.judging`` is the run
above both (ADR-0033). Imports are read from the source, as
``python ../shared/tools/import_circles.py`` reads them: at module level, inside
functions and under ``TYPE_CHECKING``; an arrow into a package ``__init__`` (a lazy
facade) is not followed.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LAYERS = ("judge", "ledger", "judging")
BACKENDS = ("anthropic", "openai", "baseline", "recorded", "replay", "_anthropic_")


def _name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules(package: str) -> dict[str, Path]:
    return {_name(p): p for p in sorted((ROOT / "evalkit" / package).glob("*.py"))}


def _imports(path: Path, *, top_level_only: bool = False) -> set[str]:
    """Every module ``path`` names in an import (``from a.b import c`` names ``a.b`` and
    ``a.b.c``); with ``top_level_only``, only the imports run when it is imported."""
    tree = ast.parse(path.read_text())
    nodes: list[ast.AST] = []
    if top_level_only:
        for stmt in tree.body:
            nodes += [stmt, *(s for s in getattr(stmt, "body", []) if isinstance(stmt, ast.If))]
    else:
        nodes = list(ast.walk(tree))
    out: set[str] = set()
    for node in nodes:
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            out |= {node.module} | {f"{node.module}.{a.name}" for a in node.names}
    return out


def _is_backend(module: str) -> bool:
    last = module.rsplit(".", 1)[-1]
    return module.startswith("evalkit.judge.") and last.startswith(BACKENDS)


def test_the_ledger_imports_no_backend_and_nothing_of_the_run() -> None:
    modules = _modules("ledger")
    assert {"evalkit.ledger._store", "evalkit.ledger._lease", "evalkit.ledger._intent"} <= set(
        modules
    )
    allowed = {"evalkit.judge._prompt", "evalkit.judge._answer"}
    for name, path in modules.items():
        judge = {m for m in _imports(path) if m.startswith(("evalkit.judge.", "evalkit.judging"))}
        outside = {m for m in judge if not m.startswith(tuple(allowed))}
        assert not outside, f"{name} imports {sorted(outside)}"


def test_one_call_modules_import_neither_the_ledger_nor_the_run() -> None:
    for name, path in _modules("judge").items():
        if name == "evalkit.judge":
            continue  # the facade re-exports both by name, for compatibility
        above = {m for m in _imports(path) if m.startswith(("evalkit.ledger", "evalkit.judging"))}
        assert not above, f"{name} imports {sorted(above)}"


def test_no_import_circle_among_judge_ledger_and_run() -> None:
    modules: dict[str, Path] = {}
    for package in LAYERS:
        modules |= _modules(package)
    packages = {f"evalkit.{p}" for p in LAYERS}
    edges = {
        m: {t for t in _imports(p) if t in modules and t != m and t not in packages}
        for m, p in modules.items()
    }
    state: dict[str, int] = {}  # 1: on the current path, 2: done

    def visit(module: str, path: list[str]) -> None:
        state[module] = 1
        for target in sorted(edges[module]):
            if state.get(target) == 1:
                circle = [*path[path.index(target) :], module, target]
                pytest.fail("import circle: " + " -> ".join(circle))
            if target not in state:
                visit(target, [*path, module])
        state[module] = 2

    for module in sorted(modules):
        if module not in state:
            visit(module, [])


@pytest.mark.parametrize(
    "module", ["judging/_plan.py", "judge/_requests.py", "judge/_backends.py", "judging/_run.py"]
)
def test_planning_imports_no_backend_when_imported(module: str) -> None:
    loaded = {m for m in _imports(ROOT / "evalkit" / module, top_level_only=True) if _is_backend(m)}
    if module == "judging/_run.py":  # replay's lookup is part of every run
        loaded -= {"evalkit.judge.replay"} | {
            m for m in loaded if m.startswith("evalkit.judge.replay.")
        }
    assert not loaded, f"{module} imports {sorted(loaded)} at import time"


def test_public_names_keep_their_import_paths() -> None:
    import evalkit.judge as judge
    import evalkit.judging as judging
    import evalkit.ledger as ledger

    for name in ("Ledger", "load_ledger", "export_jsonl", "import_jsonl", "LEDGER_COLUMNS"):
        assert getattr(judge, name) is getattr(ledger, name)
    for name in ("judge_cases", "ajudge_cases", "Plan"):
        assert getattr(judge, name) is getattr(judging, name)
    assert {"Ledger", "judge_cases", "make_backend", "build_requests"} <= set(dir(judge))
    for backend in ("anthropic", "openai", "baseline", "recorded", "replay"):
        assert getattr(judge, backend).__name__ == f"evalkit.judge.{backend}"
