"""The workspace: plain copies of the study notebooks where a researcher works.

The notebooks in ``notebooks/`` are templates: tracked, without outputs, paired with a
jupytext ``.py`` file, and checked by the test suite. Running and saving one in
JupyterLab would write its outputs into the tracked file. :func:`new_notebook` copies a
template into a workspace folder (``workspace/`` at the project root, git-ignored) as a
plain notebook, which Lab may run, save and sit beside the researcher's own notebooks.
"""

from __future__ import annotations

from pathlib import Path

import nbformat

from evalkit.errors import EvalkitError

#: The workspace folder, relative to the project root (listed in ``.gitignore``).
WORKSPACE = Path("workspace")

#: Templates that are not studies: copied into the workspace like one, never executed by
#: ``evalkit study`` nor rendered into ``reports/``.
WORKBOOKS = ("tutorial",)


class WorkspaceError(EvalkitError):
    """A notebook cannot be copied into the workspace (exit code 2 in the CLI)."""


def workspace_copy(template: Path) -> nbformat.NotebookNode:
    """The template as a plain notebook: its cells' source and tags kept, no outputs nor
    execution counts, and no jupytext pairing metadata (so saving the copy in Lab writes
    no ``.py`` twin). The kernelspec is kept. Raises :class:`WorkspaceError` when the
    template is missing or not a notebook."""
    try:
        nb = nbformat.read(template, as_version=4)
    except FileNotFoundError as exc:
        raise WorkspaceError(f"{template}: no such study notebook") from exc
    except Exception as exc:  # nbformat raises several kinds on a broken file
        raise WorkspaceError(f"{template}: not a readable notebook ({exc})") from exc
    nb.metadata.pop("jupytext", None)
    for cell in nb.cells:
        cell.metadata.pop("lines_to_next_cell", None)  # jupytext's, meaningless unpaired
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
    return nb


def new_notebook(template: Path, folder: Path = WORKSPACE) -> Path:
    """Write :func:`workspace_copy` of ``template`` to ``folder/<template name>`` and
    return that path. ``folder`` is created if missing. An existing file is never
    overwritten: :class:`WorkspaceError` names it (the check and the write are one
    exclusive create, so a file appearing meanwhile is not clobbered either); so does a
    ``folder`` that is a file."""
    nb = workspace_copy(template)
    target = folder / template.name
    if folder.exists() and not folder.is_dir():
        raise WorkspaceError(f"{folder}: is a file; DIR names a folder")
    folder.mkdir(parents=True, exist_ok=True)
    try:
        with target.open("x", encoding="utf-8") as f:
            nbformat.write(nb, f)
    except FileExistsError as exc:
        raise WorkspaceError(
            f"{target}: already exists; open it, or remove or rename it to start afresh"
        ) from exc
    return target
