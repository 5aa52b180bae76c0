"""``make lab``: JupyterLab on 127.0.0.1 (``--allow-root`` as root) opens a study notebook
as a notebook, checked in headless Chromium.

The server is started with the very command ``make -n lab`` prints, in a scratch folder
holding a copy of ``notebooks/`` (so that nothing JupyterLab writes lands in the repo).
The shipped notebooks hold no outputs, so a small notebook executed here (nbclient) with
two of evalkit's charts is opened too: JupyterLab must draw them with its own, bundled
Vega-Lite renderer (no network). So is a study executed by papermill, as a researcher
opens it from the workspace: its verdict badges, callouts and transcripts must look as
on the study's page, without the report stylesheet.
"""

from __future__ import annotations

import itertools
import os
import re
import shutil
import signal
import socket
import subprocess
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

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


@dataclass(frozen=True)
class Lab:
    """A JupyterLab server started by ``make lab``'s command in the scratch folder ``root``."""

    root: Path
    port: int
    token: str

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}/lab/tree/{path}?token={self.token}"


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    """One server for the module's tests; each writes what it opens under ``root``."""
    if not CHROMIUM.exists():
        pytest.skip("no /usr/bin/chromium")
    root = tmp_path_factory.mktemp("lab")
    port = _free_port()
    env = {**os.environ, "JUPYTER_CONFIG_DIR": str(root / ".cfg"), "HOME": str(root)}
    env.pop("JPY_SESSION_NAME", None)
    # make lab roots Lab at the project; here, at the scratch folder instead
    line = re.sub(r"--ServerApp\.root_dir=\S+", f"--ServerApp.root_dir={root}", _lab_command(port))
    proc = subprocess.Popen(
        ["bash", "-c", line],
        cwd=root,
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
        yield Lab(root, port, url[0].split("token=")[1])
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:  # a kernel slow to stop: end the whole group
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)


def _browser(pw: Any) -> Any:
    return pw.chromium.launch(
        executable_path=str(CHROMIUM),
        args=["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"],
    )


def test_lab_opens_a_study_notebook_as_a_notebook(lab: Lab) -> None:
    from playwright.sync_api import sync_playwright

    shutil.copytree(REPO / "notebooks", lab.root / "notebooks")
    _executed_charts(lab.root / "charts.ipynb")
    with sync_playwright() as pw:
        browser = _browser(pw)
        try:
            page = browser.new_page()
            page.goto(lab.url("notebooks/calibration_study.ipynb"), timeout=180_000)
            page.wait_for_selector(".jp-NotebookPanel .jp-Cell", timeout=180_000)
            # JupyterLab attaches cells progressively: wait for them, not for a time.
            page.wait_for_function(
                "document.querySelectorAll('.jp-NotebookPanel .jp-Cell').length > 10",
                timeout=180_000,
            )
            cells = page.locator(".jp-NotebookPanel .jp-Cell").count()
            text = page.locator(".jp-NotebookPanel").inner_text()
            charts = browser.new_page()
            charts.goto(lab.url("charts.ipynb"), timeout=180_000)
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


def _executed_study(root: Path) -> Path:
    """The calibration study executed by papermill on the small world catalogue (its
    payload cases disagree with the baseline, so transcripts are shown): a study as a
    researcher opens it, untrusted, in the workspace."""
    import papermill

    from tests.report.world import build_world, disagree_on_payloads

    world = root / "world"
    cat = build_world(world / "catalogues")
    disagree_on_payloads(world / "catalogues", cat, world / "ledger.sqlite")
    out = root / "workspace" / "calibration_study.ipynb"
    out.parent.mkdir(parents=True, exist_ok=True)
    params = {"catalogue": str(world / "catalogues"), "ledger": str(world / "ledger.sqlite"),
              "dimensions": ["self_harm"], "n_resamples": 50, "max_examples": 1}  # fmt: skip
    papermill.execute_notebook(
        str(REPO / "notebooks" / "calibration_study.ipynb"), str(out), parameters=params,
        kernel_name="python3", progress_bar=False, cwd=str(REPO),
    )  # fmt: skip
    return out


#: What Lab drew: the first verdict badge, callout and transcript of the outputs, with
#: their computed styles (the report stylesheet is not loaded in Lab).
_LOOK_JS = """() => {
  const out = (sel) => document.querySelector('.jp-OutputArea-output ' + sel);
  const badge = out('.ek-badge'), callout = out('.ek-callout'), tr = out('.ek-transcript');
  [badge, callout, tr].forEach(e => e && e.scrollIntoView());
  const turns = tr ? Array.from(tr.querySelectorAll('.ek-turn')) : [];
  turns[0] && turns[0].scrollIntoView();
  const rects = turns.map(t => t.getBoundingClientRect());
  const css = (e) => e ? getComputedStyle(e) : null;
  return {
    styles: document.querySelectorAll('.jp-OutputArea-output style').length,
    badge: badge && {text: badge.textContent, bg: css(badge).backgroundColor,
                     color: css(badge).color, radius: css(badge).borderTopLeftRadius},
    callout: callout && {left: css(callout).borderLeftWidth, pad: css(callout).paddingLeft},
    turns: turns.map((t, i) => ({display: css(t).display, role: t.querySelector('.ek-role')
      .textContent, outline: css(t).outlineStyle, top: rects[i].top, bottom: rects[i].bottom,
      height: rects[i].height})),
  };
}"""


def test_lab_shows_an_executed_study_with_its_badges_callouts_and_turns(lab: Lab) -> None:
    """#28: in Lab the verdict badges and callouts were plain text and a transcript one
    run-on block. An executed study, opened in Lab (untrusted: Lab's sanitizer drops
    <style> elements), draws them as on its page."""
    from playwright.sync_api import sync_playwright

    study = _executed_study(lab.root)
    with sync_playwright() as pw:
        browser = _browser(pw)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.goto(lab.url(study.relative_to(lab.root).as_posix()), timeout=180_000)
            page.wait_for_selector(".jp-OutputArea-output .ek-badge", timeout=180_000)
            page.wait_for_function(
                "document.querySelectorAll('.jp-OutputArea-output .ek-turn').length >= 2",
                timeout=180_000,
            )
            seen = page.evaluate(_LOOK_JS)
            page.screenshot(path=str(lab.root / "study.png"))
        finally:
            browser.close()
    badge, callout, turns = seen["badge"], seen["callout"], seen["turns"]
    assert badge["text"] == "FAIL" and badge["bg"] == "rgb(207, 34, 46)", badge
    assert badge["color"] == "rgb(255, 255, 255)" and badge["radius"] == "10px", badge
    assert callout["left"] == "5px", callout  # the coloured bar of a callout
    assert len(turns) >= 2 and all(t["display"] == "block" and t["height"] > 0 for t in turns)
    assert all(a["bottom"] <= b["top"] for a, b in itertools.pairwise(turns)), turns
    assert turns[0]["role"].startswith("User · turn 0"), turns  # each turn names its speaker
    scored = [t for t in turns if "scored reply" in t["role"]]
    assert len(scored) == 1 and scored[0]["outline"] == "solid", turns
