"""``evalkit notebook new STUDY [DIR]``: copy a study notebook into the workspace."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any


def register(subparsers: Any) -> None:
    notebook = subparsers.add_parser(
        "notebook",
        help="copy a study notebook into the workspace to run and edit it",
        description="The notebooks in notebooks/ are templates (tracked, without outputs, "
        "checked by the tests). Work on a copy in the git-ignored workspace/ folder.",
    )
    actions = notebook.add_subparsers(dest="action", metavar="ACTION", required=True)
    new = actions.add_parser(
        "new",
        help="copy notebooks/STUDY.ipynb into DIR (default: workspace)",
        description="Copy the study notebook template notebooks/STUDY.ipynb into DIR as a "
        "plain notebook (no outputs, no jupytext pairing), to run, save and change freely. "
        "An existing file is never overwritten (exit 2). Open it with `make lab`.",
    )
    new.add_argument(
        "study", metavar="STUDY", help="study name, e.g. calibration_study, or tutorial"
    )
    new.add_argument(
        "dir", metavar="DIR", nargs="?", default="workspace", help="folder (default: workspace)"
    )
    new.add_argument(
        "--notebooks", default="notebooks", help="folder of the templates (default: notebooks)"
    )
    new.set_defaults(func=run_new)


def run_new(args: argparse.Namespace) -> int:
    from evalkit.report._run import STUDIES
    from evalkit.report._workspace import WORKBOOKS, new_notebook

    names = [s.name for s in STUDIES]
    if args.study not in names and args.study not in WORKBOOKS:
        print(
            f"evalkit notebook: unknown study {args.study!r}; the studies are: "
            + ", ".join(names)
            + "; the worked example: "
            + ", ".join(WORKBOOKS),
            file=sys.stderr,
        )
        return 2
    target = new_notebook(Path(args.notebooks) / f"{args.study}.ipynb", Path(args.dir))
    print(f"wrote {target}")
    if target.resolve().parent == (Path.cwd() / "workspace").resolve():
        print("open it in JupyterLab with `make lab`, which opens in workspace/")
    else:
        print(
            f"open it with `EVALKIT_PROJECT=$PWD jupyter lab {target.parent}` from the project "
            "root, so that its relative paths (catalogues/, ledgers/) are read from there"
        )
    return 0
