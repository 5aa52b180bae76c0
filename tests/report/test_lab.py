"""``make lab``: JupyterLab on 127.0.0.1 (``--allow-root`` as root) opens a study notebook
as a notebook, checked in headless Chromium.

The server is started with the very command ``make -n lab`` prints, in a scratch folder
holding a copy of ``notebooks/`` (so that nothing JupyterLab writes lands in the repo).
The shipped notebooks hold no outputs, so a small notebook executed here (nbclient) with
two of evalkit's charts is opened too: JupyterLab must draw them with its own, bundled
Vega-Lite renderer (no network).
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import threading
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
CHROMIUM = Path("/usr/bin/chromium")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _lab_command(port: int) -> str:
    """The JupyterLab line of ``make -n lab`` (the recipe, printed and not run)."""
    printed = subprocess.run(
        ["make", "-s", "-n", "lab", f"LAB_PORT={port}", f"BIN={REPO / '.venv' / 'bin'}"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout
    (line,) = [x for x in printed.splitlines() if "jupyter lab" in x]
    return line


def test_make_lab_binds_localhost_and_allows_root_only_as_root() -> None:
    line = _lab_command(8899)
    assert "--ServerApp.ip=127.0.0.1" in line and "--ServerApp.port=8899" in line
    assert "--allow-root" in line and 'test "$(id -u)" = 0' in line  # added only for uid 0
    flags = subprocess.run(
        ["bash", "-c", 'echo $(test "$(id -u)" = 0 && echo --allow-root)'],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert flags == ("--allow-root" if os.getuid() == 0 else "")


def test_make_lab_opens_in_the_workspace_and_creates_it() -> None:
    printed = subprocess.run(
        ["make", "-s", "-n", "lab", f"BIN={REPO / '.venv' / 'bin'}"],
        cwd=REPO, capture_output=True, text=True, check=True, timeout=60,
    ).stdout  # fmt: skip
    assert "mkdir -p workspace" in printed
    # Lab's root is the project, so that a study's ADR links (docs/adr/) resolve; it
    # opens on the workspace.
    assert f"--ServerApp.root_dir={REPO} " in _lab_command(8899)
    assert "--LabApp.default_url=/lab/tree/workspace" in _lab_command(8899)
    assert f"EVALKIT_PROJECT={REPO}" in _lab_command(8899)  # the studies find catalogues/


CHARTS = """
import pandas as pd
import evalkit.report as rp
bins = ["low", "partial", "high"]
confusion = pd.DataFrame([[5, 1, 0], [2, 3, 1], [0, 1, 6]], index=bins, columns=bins)
marg = pd.DataFrame({"bin": bins, "judge_share": [0.5, 0.125, 0.375],
                     "human_share": [0.25, 0.25, 0.5]})
display(rp.confusion_heatmap(confusion, "Confusion"))
display(rp.marginals_chart(marg, bins, "Marginals"))
"""


def _executed_charts(path: Path) -> None:
    """A notebook displaying two evalkit charts, executed and saved with its outputs."""
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(CHARTS)])
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    NotebookClient(nb, timeout=300, kernel_name="python3").execute()
    nbformat.write(nb, path)


@pytest.mark.skipif(not CHROMIUM.exists(), reason="no /usr/bin/chromium")
def test_lab_opens_a_study_notebook_as_a_notebook(tmp_path: Path) -> None:
    from playwright.sync_api import sync_playwright

    shutil.copytree(REPO / "notebooks", tmp_path / "notebooks")
    _executed_charts(tmp_path / "charts.ipynb")
    port = _free_port()
    env = {**os.environ, "JUPYTER_CONFIG_DIR": str(tmp_path / "cfg"), "HOME": str(tmp_path)}
    # make lab opens in the repo's workspace/; here, in the scratch folder instead
    line = re.sub(
        r"--ServerApp\.root_dir=\S+", f"--ServerApp.root_dir={tmp_path}", _lab_command(port)
    )
    proc = subprocess.Popen(
        ["bash", "-c", line],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    url: list[str] = []
    ready = threading.Event()

    def watch() -> None:
        assert proc.stdout is not None
        for text in proc.stdout:
            m = re.search(rf"http://127\.0\.0\.1:{port}/lab[\w/]*\?token=\w+", text)
            if m and not url:
                url.append(m.group(0))
                ready.set()
        ready.set()  # the server exited without printing its URL

    threading.Thread(target=watch, daemon=True).start()
    try:
        assert ready.wait(240) and url, "JupyterLab printed no http://127.0.0.1 URL"
        token = url[0].split("token=")[1]
        page_url = (
            f"http://127.0.0.1:{port}/lab/tree/notebooks/calibration_study.ipynb?token={token}"
        )
        with sync_playwright() as pw:
            browser = pw.chromium.launch(
                executable_path=str(CHROMIUM),
                args=["--headless", "--no-sandbox", "--disable-gpu",
                      "--disable-background-networking"],
            )  # fmt: skip
            try:
                page = browser.new_page()
                page.goto(page_url, timeout=180_000)
                page.wait_for_selector(".jp-NotebookPanel .jp-Cell", timeout=180_000)
                # JupyterLab attaches cells progressively: wait for them, not for a time.
                page.wait_for_function(
                    "document.querySelectorAll('.jp-NotebookPanel .jp-Cell').length > 10",
                    timeout=180_000,
                )
                cells = page.locator(".jp-NotebookPanel .jp-Cell").count()
                text = page.locator(".jp-NotebookPanel").inner_text()
                charts = browser.new_page()
                charts.goto(
                    f"http://127.0.0.1:{port}/lab/tree/charts.ipynb?token={token}",
                    timeout=180_000,
                )
                # Both charts drawn by JupyterLab's Vega-Lite renderer (vega-embed draws
                # on a canvas there): a sized canvas or SVG in each chart's output.
                drawn_js = (
                    "Array.from(document.querySelectorAll("
                    "'.jp-OutputArea .vega-embed canvas, .jp-OutputArea .vega-embed svg'))"
                    ".filter(e => e.getBoundingClientRect().width > 100).length"
                )
                charts.wait_for_function(f"{drawn_js} >= 2", timeout=180_000)
                drawn = int(charts.evaluate(drawn_js))
            finally:
                browser.close()
        assert cells > 10, cells  # a notebook of cells, not one text editor
        assert "Calibration study" in text
        assert drawn >= 2, drawn
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:  # a kernel slow to stop: end the whole group
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)
