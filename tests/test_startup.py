"""The command line starts fast: building the parser imports no heavy library (issue 29).

``evalkit --help`` and each command's ``--help`` import only the command's ``_cli``
module; the packages' ``__init__`` files import their names on first use
(:mod:`evalkit._lazy`), and pandas, scipy and the rest wait for the run itself.
"""

from __future__ import annotations

import ast
import importlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

import evalkit.gate
from evalkit.cli import _COMMANDS

ROOT = Path(__file__).resolve().parents[1]
HEAVY = (
    "pandas",
    "numpy",
    "scipy",
    "statsmodels",
    "sklearn",
    "altair",
    "matplotlib",
    "papermill",
    "nbconvert",
)
#: Runs ``main([command, "--help"])`` for every command in one fresh interpreter and
#: prints the heavy top-level packages then imported.
PROBE = f"""
import contextlib, io, sys
from evalkit.cli import _COMMANDS, main
for argv in [["--help"], *([name, "--help"] for name in _COMMANDS)]:
    with contextlib.redirect_stdout(io.StringIO()):
        try:
            main(argv)
        except SystemExit:
            pass
print(sorted({{m.split(".")[0] for m in sys.modules}} & set({HEAVY!r})))
"""
#: Runs every statistic the gate reads, on small inputs, in one fresh interpreter and prints
#: the heavy modules then imported (numpy, pandas and scipy.special are the gate's own).
GATE_PROBE = """
import sys
from evalkit.agreement import alt_test, diagnose, fleiss_kappa, gate_power, human_ceiling
from evalkit.agreement import judge_vs_humans
import evalkit.gate._evaluate
from evalkit.gate._recall import miss_rate_upper_bound
from evalkit.agreement._distributions import fisher_exact_greater
judge = {u: "ab"[u % 2] for u in range(40)}
humans = {r: {u: "ab"[(u + (u % 7 == r)) % 2] for u in range(40)} for r in range(3)}
diagnose(list(judge.values()), list(humans[0].values()), ["a", "b"])
alt_test(judge, humans)
gate_power(0.6, 50, 0.6, [0.5, 0.5], n_sim=20)
human_ceiling(humans, judge, ["a", "b"], n_boot=20)
judge_vs_humans(humans, judge, ["a", "b"], n_boot=20)
miss_rate_upper_bound(1, 40), fisher_exact_greater(3, 1, 1, 9)
fleiss_kappa([[humans[r][u] for r in humans] for u in range(40)], ["a", "b"])
print(sorted(m for m in sys.modules if m.startswith(("scipy.stats", "statsmodels", "sklearn",
      "altair", "matplotlib", "papermill", "nbconvert"))))
"""
LAZY_PACKAGES = sorted(
    p.parent for p in (ROOT / "evalkit").glob("*/__init__.py") if "lazy_exports" in p.read_text()
)


def _probe(code: str) -> str:
    """What ``code`` prints, run in a fresh interpreter that imports this checkout."""
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=ROOT
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip()


def test_help_of_every_command_imports_no_heavy_library() -> None:
    imported = _probe(PROBE)
    assert imported == "[]", f"imported by --help: {imported}"


def test_the_statistics_of_the_gate_import_no_scipy_stats() -> None:
    """``import scipy.stats`` (and statsmodels) took longer than the whole gate computes:
    the gate's statistics use scipy.special alone (issue 29)."""
    imported = _probe(GATE_PROBE)
    assert imported == "[]", f"imported by the gate's statistics: {imported}"


def _facade(package: Path) -> tuple[set[tuple[str, str]], set[tuple[str, str]], set[str]]:
    """(module, name) pairs under ``if TYPE_CHECKING:`` and in the ``lazy_exports`` table,
    and the names of ``__all__``, read from the package's ``__init__.py``."""
    tree = ast.parse((package / "__init__.py").read_text())
    typed: set[tuple[str, str]] = set()
    lazy: set[tuple[str, str]] = set()
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.If):
            for stmt in node.body:
                assert isinstance(stmt, ast.ImportFrom) and stmt.module
                own = stmt.module.startswith(f"evalkit.{package.name}.")
                module = stmt.module.rsplit(".", 1)[1] if own else stmt.module
                typed |= {(module, a.name) for a in stmt.names}
            table = next(
                n for n in ast.walk(ast.Module(node.orelse, [])) if isinstance(n, ast.Dict)
            )
            for key, value in zip(table.keys, table.values, strict=True):
                module = ast.literal_eval(key)  # type: ignore[arg-type]
                lazy |= {(module, name) for name in ast.literal_eval(value)}
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "__all__":
            names = set(ast.literal_eval(node.value))
    return typed, lazy, names


@pytest.mark.parametrize("package", LAZY_PACKAGES, ids=lambda p: p.name)
def test_lazy_facade_lists_the_same_names_for_types_and_at_run_time(package: Path) -> None:
    typed, lazy, names = _facade(package)
    assert typed == lazy
    assert {name for _, name in lazy} >= names
    for module, name in lazy:  # each name is defined (or imported) by its module
        if "." in module:  # re-exported from another package (evalkit.judge: ADR-0033)
            assert hasattr(importlib.import_module(module), name), f"{module} has no {name}"
            continue
        source = (package / f"{module}.py").read_text()
        assert name in source, f"{package.name}.{module} has no {name}"


def test_lazy_facade_resolves_names_and_submodules_and_refuses_others() -> None:
    from evalkit.gate import _pairs

    assert evalkit.gate.pairs is _pairs.pairs
    assert "pairs" in dir(evalkit.gate)
    submodule = evalkit.gate._cli  # type: ignore[attr-defined]
    assert submodule.__name__ == "evalkit.gate._cli"  # a submodule, as an eager init left it
    assert not hasattr(evalkit.gate, "no_such_name")
    with pytest.raises(ImportError, match="no_such_name"):
        from evalkit.gate import no_such_name  # type: ignore[attr-defined]  # noqa: F401
    assert len(LAZY_PACKAGES) >= 9 and set(_COMMANDS) >= {"gate", "judge"}
