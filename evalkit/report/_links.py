"""Where a fragment's links point: the report pages, or the project's files when live.

A study rendered for the pages (``evalkit study``, papermill) links the ADR pages written
beside the reports (``adr/0002-….html``, the notebooks' ``adr_base``). The same study
shown live in JupyterLab would follow those links relative to the notebook (the
workspace) and find nothing. Live, the links go to the files themselves, relative to the
notebook: an ADR to its markdown in ``docs/adr/`` (which Lab opens), the pages' index
to ``reports/``.

A kernel is *live* when a Jupyter server started it for a notebook: jupyter_server sets
``$JPY_SESSION_NAME`` to the notebook's path in the kernels it starts; papermill and
``evalkit study`` do not. Links stay relative either way (reports stay offline), and an
``adr_base`` other than the page default is always obeyed.
"""

from __future__ import annotations

import os
from pathlib import Path

from evalkit.report._workdir import PROJECT_ENV

#: The page default of ``adr_base``: the ADR pages written beside the reports.
PAGE_ADR_BASE = "adr/"
#: Set by jupyter_server in the kernels it starts: the notebook's path.
SESSION_ENV = "JPY_SESSION_NAME"


def live_notebook() -> Path | None:
    """The notebook a Jupyter server runs this kernel for, or None (not live)."""
    given = os.environ.get(SESSION_ENV, "")
    return Path(given) if given.endswith(".ipynb") else None


def project_root() -> Path:
    """``$EVALKIT_PROJECT`` when set, else the working directory (a study notebook has
    moved there with :func:`~evalkit.report.work_from_project_root`)."""
    return Path(os.environ.get(PROJECT_ENV) or Path.cwd())


def live_path(target: Path) -> str | None:
    """``target`` relative to the live notebook's folder (POSIX separators), or None when
    not live or when ``target`` does not exist."""
    notebook = live_notebook()
    if notebook is None or not target.exists():
        return None
    folder = notebook.resolve().parent
    return Path(os.path.relpath(target.resolve(), folder)).as_posix()


def adr_link(file_name: str | None, base: str = PAGE_ADR_BASE) -> str:
    """The link to the ADR whose markdown is ``docs/adr/<file_name>`` (None: the index of
    the ADRs). On a page: ``<base><stem>.html`` (``<base>index.html``). Live with the page
    default ``base``: that markdown relative to the notebook, and for the index the
    rendered ``reports/adr/index.html`` (a folder is not a document Lab opens); the page
    link when the file is missing."""
    if base == PAGE_ADR_BASE and live_notebook() is not None:
        root = project_root()
        target = root / "docs" / "adr" / file_name if file_name else None
        found = live_path(target if target else root / "reports" / "adr" / "index.html")
        if found is not None:
            return found
    if file_name is None:
        return f"{base}index.html"
    return f"{base}{file_name.removesuffix('.md')}.html"


def studies_index_link() -> str:
    """The link to the index of the study pages: ``index.html`` beside a page; live,
    ``reports/index.html`` relative to the notebook (when it exists)."""
    return live_path(project_root() / "reports" / "index.html") or "index.html"
