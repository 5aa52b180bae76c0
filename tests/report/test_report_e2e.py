"""End to end: the studies executed by papermill on a small catalogue with the baseline
judge, rendered, then opened in headless Chromium with the network blocked."""

from __future__ import annotations

import contextlib
import fcntl
import html
import json
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from evalkit.report._render import remote_references
from evalkit.report._run import STUDIES, run_studies
from tests.report.browser import Page, chromium, open_page
from tests.report.world import FAKE_KEY, PAYLOADS, build_world, disagree_on_payloads

pytestmark = pytest.mark.slow

STUDY_NAMES = [s.name for s in STUDIES]


@dataclass(frozen=True)
class Run:
    """The outputs of one report run, shared by the tests of this module."""

    root: Path
    out: Path
    ledgers: Path
    results: dict[str, dict[str, object]]


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


@contextlib.contextmanager
def _chdir(path: Path) -> Iterator[None]:
    old = Path.cwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(old)


def _run_once(root: Path) -> Run:
    """Build the catalogue and run every study, once per test session (across workers)."""
    done = root / "run.json"
    if not done.exists():
        cat = build_world(root / "catalogues")
        disagree_on_payloads(root / "catalogues", cat, root / "ledgers" / "baseline.sqlite")
        old = os.environ.get("ANTHROPIC_API_KEY")
        os.environ["ANTHROPIC_API_KEY"] = FAKE_KEY
        try:
            with _chdir(root):
                summary = run_studies(
                    catalogue="catalogues",
                    judge="baseline",
                    out="reports",
                    ledger_dir="ledgers",
                    seed=0,
                    adr_dir=Path(__file__).resolve().parents[2] / "docs" / "adr",
                    notebooks=Path(__file__).resolve().parents[2] / "notebooks",
                    overrides={
                        "*": {"n_resamples": 200, "n_boot": 200},
                        "calibration_study": {"max_examples": 50},
                        "heldout_revalidation": {"max_examples": 10},
                    },
                    log=lambda msg: None,
                )
        finally:
            if old is None:
                os.environ.pop("ANTHROPIC_API_KEY", None)
            else:
                os.environ["ANTHROPIC_API_KEY"] = old
        results = {
            r.study.name: {
                "ok": r.ok,
                "error": r.error,
                "charts": r.charts,
                "seconds": r.seconds,
                "parameters": dict(r.parameters),
            }
            for r in summary.results
        }
        done.write_text(json.dumps(results, default=str), encoding="utf-8")
    results = json.loads(done.read_text(encoding="utf-8"))
    return Run(root, root / "reports", root / "ledgers", results)


@pytest.fixture(scope="session")
def run(tmp_path_factory: pytest.TempPathFactory) -> Run:
    base = tmp_path_factory.getbasetemp()
    # Under xdist each worker has its own basetemp in one per-session folder: share that.
    session = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    shared = session / "evalkit-report-run"
    with _locked(shared.with_suffix(".lock")):
        return _run_once(shared)


@pytest.fixture(scope="session")
def pages(run: Run, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Page]:
    binary = chromium()
    if binary is None:
        pytest.skip("no chromium binary (install Debian's chromium: `make browser`)")
    work = tmp_path_factory.mktemp("chromium")
    return {name: open_page(run.out / f"{name}.html", work, binary) for name in STUDY_NAMES}


def _outputs(run: Run) -> list[Path]:
    return [p for p in [*run.out.rglob("*"), *run.ledgers.rglob("*")] if p.is_file()]


def test_every_study_renders_with_index_and_adrs(run: Run) -> None:
    for name in STUDY_NAMES:
        assert run.results[name]["ok"], run.results[name]["error"]
        assert (run.out / f"{name}.html").is_file()
    index = (run.out / "index.html").read_text(encoding="utf-8")
    for name in STUDY_NAMES:
        assert f'href="{name}.html"' in index
    assert "baseline" in index and "Constants hash" in index and "Rendered</th>" not in index
    assert re.search(r"[0-9a-f]{64}", index), "the full constants hash is listed"
    assert len(list((run.out / "adr").glob("0*.html"))) >= 8
    assert (run.out / "adr" / "index.html").is_file()


def test_pages_reference_no_network_and_load_vega_once(run: Run) -> None:
    for page in sorted(run.out.rglob("*.html")):
        text = page.read_text(encoding="utf-8")
        assert remote_references(text) == [], page
        for cdn in ("cdnjs", "jsdelivr", "unpkg", "require.min.js", "mathjax", "mermaid.esm"):
            assert cdn not in text.lower(), (page, cdn)
        charts = text.count('class="evalkit-chart-spec"')
        assert text.count("window.vegaEmbed=") == (1 if charts else 0), page


def test_no_code_cells_in_reports(run: Run) -> None:
    for name in STUDY_NAMES:
        text = (run.out / f"{name}.html").read_text(encoding="utf-8")
        assert "import evalkit.report as rp" not in text
        assert 'class="jp-CodeMirrorEditor' not in text
        assert "Traceback" not in text


def test_planted_key_lands_in_no_output(run: Run) -> None:
    files = _outputs(run)
    assert len(files) > 10
    for path in files:
        assert FAKE_KEY.encode() not in path.read_bytes(), path
    for params in (r["parameters"] for r in run.results.values()):
        assert FAKE_KEY not in json.dumps(params)


def test_every_cited_adr_is_shipped_beside_the_report(run: Run) -> None:
    cited = 0
    for name in STUDY_NAMES:
        text = (run.out / f"{name}.html").read_text(encoding="utf-8")
        for href in re.findall(r'href="(adr/[^"#]+)', text):
            cited += 1
            assert (run.out / href).is_file(), href
    assert cited >= 5


def test_reports_say_the_baseline_is_a_floor(run: Run) -> None:
    for name in STUDY_NAMES:
        text = (run.out / f"{name}.html").read_text(encoding="utf-8")
        assert "offline floor, not a production judge" in text, name


def test_heldout_study_refuses_unsealed_labels(run: Run) -> None:
    text = (run.out / "heldout_revalidation.html").read_text(encoding="utf-8")
    assert "Held-out agreement refused" in text
    assert "not sealed" in text
    assert "Gate verdict per dimension" not in text
    assert "Held-out cases per stratum and locale" in text


def test_charts_are_drawn_offline_without_console_errors(run: Run, pages: dict[str, Page]) -> None:
    for name, page in pages.items():
        specs = (
            (run.out / f"{name}.html")
            .read_text(encoding="utf-8")
            .count('class="evalkit-chart-spec"')
        )
        assert page.console == [], (name, page.console)
        assert page.probe["errors"] == [], (name, page.probe["errors"])
        assert page.probe["charts"] == specs, (name, page.probe)
        assert page.probe["drawn"] == specs, (name, page.probe)
        if name != "heldout_revalidation":
            assert page.probe["charts"] > 0 and page.probe["marks"] >= page.probe["charts"], name


def test_markup_in_transcripts_renders_as_text(pages: dict[str, Page]) -> None:
    calibration = pages["calibration_study"]
    for payload in PAYLOADS:
        assert html.escape(payload, quote=False) in calibration.dom, payload
        assert payload not in calibration.dom, payload
    heldout = pages["heldout_revalidation"].dom
    assert html.escape(PAYLOADS[3], quote=False) in heldout
    for name, page in pages.items():
        assert page.probe["pwned"] is None, name
        assert page.probe["iframes"] == 0, name
        assert page.probe["injected"] == 0, name
        assert "<script>window.__pwned" not in page.dom, name
