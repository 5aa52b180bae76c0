"""Execute a study notebook (a shipped ``.ipynb`` without outputs) with papermill, called
in this process (the kernel itself is papermill's subprocess).

papermill and jupyter_client are imported when used: the notebooks import
:mod:`evalkit.report` for its displays and need neither.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import nbformat

from evalkit.report._links import SESSION_ENV
from evalkit.report._secrets import check_parameters, scrubbed_kinds, scrubbed_output_path
from evalkit.secrets import scrub

KERNEL_NAME = "python3"

#: The variables that size the thread pools of numpy's BLAS, OpenMP and numexpr.
THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
                    "NUMEXPR_NUM_THREADS")  # fmt: skip


def thread_limits(threads: int) -> dict[str, str]:
    """:data:`THREAD_VARIABLES` set to ``threads``, except those this process's
    environment sets already (a user's choice stands)."""
    return {name: str(threads) for name in THREAD_VARIABLES if name not in os.environ}


def _kernel_manager(log: Any, env: Mapping[str, str] | None = None) -> type:
    """A kernel manager whose kernel writes its own stderr (transport warnings, shutdown
    noise) to ``log`` rather than to the terminal; cell outputs are unaffected. ``env``
    is added to the environment the kernel inherits. Jupyter's session variable is left
    out: a study rendered from inside Lab (``!evalkit study``) is rendered for a page, and
    must link the pages' ADRs, not Lab's markdown (:mod:`evalkit.report._links`)."""
    from jupyter_client.manager import AsyncKernelManager

    class QuietKernelManager(AsyncKernelManager):
        async def _async_launch_kernel(self, kernel_cmd: list[str], **kw: Any) -> None:
            kw["stderr"] = log
            inherited = dict(kw.get("env") or os.environ)
            inherited.pop(SESSION_ENV, None)
            kw["env"] = {**inherited, **(env or {})}
            await super()._async_launch_kernel(kernel_cmd, **kw)

    return QuietKernelManager


@dataclass(frozen=True)
class Execution:
    """Outcome of one notebook run: the executed notebook, time taken, any error, and the
    kinds of secret scrubbed from the executed notebook before it was written."""

    notebook: nbformat.NotebookNode
    path: Path
    seconds: float
    error: str | None
    scrubbed: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return self.error is None


def _parameters_cell(nb: nbformat.NotebookNode) -> nbformat.NotebookNode | None:
    tagged = [c for c in nb.cells if "parameters" in c.get("metadata", {}).get("tags", [])]
    return tagged[0] if tagged else None


def read_source(path: str | Path) -> nbformat.NotebookNode:
    """Read a study notebook (``.ipynb``) into a notebook node.

    Raises ``ValueError`` if it is not an ``.ipynb`` file or has no cell tagged
    ``parameters``.
    """
    path = Path(path)
    if path.suffix != ".ipynb":
        raise ValueError(f"{path}: a study notebook is an .ipynb file (the .py is its review pair)")
    nb = nbformat.read(path, as_version=4)
    if _parameters_cell(nb) is None:
        raise ValueError(f"{path}: no cell tagged 'parameters'")
    return nb


def notebook_parameters(path: str | Path) -> dict[str, Any]:
    """The parameters a study notebook declares, as ``papermill --help-notebook`` reads
    them from its cell tagged ``parameters``: {name: {"inferred_type_name", "default",
    "help"}}, the help being the comment after each assignment."""
    from papermill.translators import PythonTranslator

    cell = _parameters_cell(read_source(path))
    return {p.name: p._asdict() for p in PythonTranslator.inspect(cell)}


def execute_study(
    source: str | Path,
    workdir: str | Path,
    parameters: Mapping[str, Any],
    *,
    cwd: str | Path | None = None,
    timeout: int = 900,
    env: Mapping[str, str] | None = None,
) -> Execution:
    """Run the notebook ``source`` with ``parameters`` through papermill; never raises on
    cell errors.

    The executed notebook is written to ``workdir`` (a temporary folder: executed
    notebooks are not kept); ``source`` is read, never written. Parameters are checked
    for secrets first (:func:`evalkit.report._secrets.check_parameters`); that check does
    raise. Every save of the executed notebook goes through the scrubber (``scrubbed``
    says what it removed).
    """
    import papermill

    check_parameters(parameters)
    source = Path(source)
    workdir = Path(workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    nb = read_source(source)
    stem = source.stem
    output_path = workdir / f"{stem}.ipynb"
    kernel_log = workdir / f"{stem}.kernel.log"
    scrubbed_path = scrubbed_output_path(output_path)
    start = time.perf_counter()
    error: str | None = None
    logging.getLogger("papermill").setLevel(logging.ERROR)
    with kernel_log.open("wb") as log:
        try:
            papermill.execute_notebook(
                str(source),
                scrubbed_path,
                parameters=dict(parameters),
                kernel_name=KERNEL_NAME,
                language="python",
                cwd=str(cwd) if cwd is not None else None,
                progress_bar=False,
                log_output=False,
                execution_timeout=timeout,
                kernel_manager_class=_kernel_manager(log, env),
            )
        except papermill.PapermillExecutionError as exc:
            error = f"{exc.ename}: {exc.evalue}"
        except Exception as exc:  # kernel died, timeout…: the study failed, the run goes on
            tail = kernel_log.read_text(encoding="utf-8", errors="replace")[-1500:].strip()
            error = f"{type(exc).__name__}: {exc}" + (f"\nkernel log:\n{tail}" if tail else "")
    seconds = time.perf_counter() - start
    executed = nbformat.read(output_path, as_version=4) if output_path.exists() else nb
    error = scrub(error) if error is not None else None
    return Execution(executed, output_path, seconds, error, tuple(scrubbed_kinds(scrubbed_path)))
