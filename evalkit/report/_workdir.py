"""Where a study notebook reads its relative paths from, when run by hand in JupyterLab.

The studies' parameters (``catalogue = "catalogues"``, ``ledger = "ledgers/..."``) are
relative to the project root, which is the working directory of ``evalkit study`` and of
``papermill`` run from the root. JupyterLab starts a notebook's kernel in the notebook's
own folder (``notebooks/``, or the workspace ``workspace/``), where those paths do not
exist.
"""

from __future__ import annotations

import os
from pathlib import Path

#: Set by ``make lab`` to the project root.
PROJECT_ENV = "EVALKIT_PROJECT"


def work_from_project_root() -> Path:
    """Change to the project root when the kernel was started elsewhere; return the
    working directory.

    The root is ``$EVALKIT_PROJECT`` when set (``make lab`` sets it), else the parent of
    a working directory named ``notebooks`` or ``workspace`` that sits beside a
    ``pyproject.toml`` (a kernel JupyterLab started next to the study notebooks or their
    workspace copies). Anywhere else, nothing
    changes: papermill and ``evalkit study`` keep the directory they were run from.
    A ``$EVALKIT_PROJECT`` that is not a directory raises ``NotADirectoryError``.
    """
    here = Path.cwd()
    given = os.environ.get(PROJECT_ENV, "")
    if given:
        root = Path(given)
        if not root.is_dir():
            raise NotADirectoryError(f"${PROJECT_ENV} is not a directory: {given}")
    elif here.name in ("notebooks", "workspace") and (here.parent / "pyproject.toml").is_file():
        root = here.parent
    else:
        return here
    if root.resolve() != here.resolve():
        os.chdir(root)
        print(f"working from the project root {root} (relative paths are read from there)")
    return Path.cwd()
