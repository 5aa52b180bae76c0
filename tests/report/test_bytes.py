"""The tracked reports are the same bytes on any machine (ADR-0020, issue #29).

Fast checks of the pieces (chart specs, their SVG, chart ids), then one study rendered
twice in separate processes that differ in hash seed, BLAS threads, time zone and
working directory, compared with each other and with the committed page.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import altair as alt
import pandas as pd
import pytest

from evalkit._chart import Chart, canonical_spec, stable_number, stable_svg
from evalkit.report._render import stable_chart_ids

REPO = Path(__file__).resolve().parents[2]


def _incidence(order: list[int], noise: float) -> Chart:
    rows = [
        {"group": "b", "t": 0, "share": 0.7198581560283688, "low": 0.6666193613679141},
        {"group": "a", "t": 1, "share": 0.30000000000000004, "low": 0.0},
        {"group": "a", "t": 0, "share": 0.1, "low": -0.0},
    ]
    frame = pd.DataFrame([rows[i] for i in order])
    frame["share"] = frame["share"] * (1.0 + noise)
    base = alt.Chart(frame).encode(x="t:O", color="group:N")
    spec = base.mark_line().encode(y="share:Q") + base.mark_area().encode(y="low:Q", y2="share:Q")
    return Chart(spec, "incidence")


def test_float_noise_and_row_order_do_not_reach_the_spec() -> None:
    one = _incidence([0, 1, 2], 0.0)
    other = _incidence([2, 0, 1], 3e-16)  # last-digit noise, rows in another order
    assert one.spec == other.spec
    (name,) = one.spec["datasets"]
    rows = one.spec["datasets"][name]
    assert [r["share"] for r in rows] == [0.1, 0.3, 0.719858]
    assert [r["low"] for r in rows] == [0.0, 0.0, 0.666619]
    assert one.spec["data"] == {"name": name}  # the reference follows the new name
    assert canonical_spec(one.spec) == one.spec  # idempotent


def test_stable_number_keeps_counts_and_drops_negative_zero() -> None:
    assert stable_number(1234567.0) == 1234567.0
    assert str(stable_number(-0.0)) == "0.0"
    assert stable_number(0.1 + 0.2) == 0.3
    assert stable_number(-2.5e-17) == -2.5e-17  # a value is kept, only its noise goes
    assert str(stable_number(float("inf"))) == "inf"


def test_svg_ids_do_not_depend_on_what_the_process_drew_before() -> None:
    frame = pd.DataFrame({"x": ["a", "b"], "y": ["c", "c"], "n": [0.25, 0.75]})
    spec = alt.Chart(frame).mark_rect().encode(x="x:N", y="y:N", color="n:Q").to_dict()
    first, second = Chart(spec, "heat").svg, Chart(spec, "heat").svg
    assert "gradient_0" in first
    assert first == second
    assert stable_svg('<g id="clip7"/><use href="#clip7"/><g id="clip9"/>') == (
        '<g id="clip0"/><use href="#clip0"/><g id="clip1"/>'
    )


def test_chart_ids_come_from_the_place_on_the_page_only() -> None:
    page = (
        '<div id="ek-chart-abcdef1234-7"></div><script data-target="ek-chart-abcdef1234-7">'
        '</script><div id="ek-chart-0123456789-3"></div><i data-target="ek-chart-0123456789-3">'
        '<div class="ek-chart-area ek-chart-static"></div>'
    )
    assert stable_chart_ids(page) == (
        '<div id="ek-chart-1"></div><script data-target="ek-chart-1">'
        '</script><div id="ek-chart-2"></div><i data-target="ek-chart-2">'
        '<div class="ek-chart-area ek-chart-static"></div>'
    )
    assert stable_chart_ids(stable_chart_ids(page)) == stable_chart_ids(page)


# --- one study rendered in two separate processes ---------------------------------------

STUDY = "onset_turns"  # the cheapest study with bootstrap bands in its charts


def _clone(where: Path) -> Path:
    """What `make study` reads, at another place on disk (the page names relative paths)."""
    where.mkdir(parents=True)
    for part in ("catalogues", "notebooks"):
        shutil.copytree(REPO / part, where / part)
    (where / "docs").mkdir()
    shutil.copytree(REPO / "docs" / "adr", where / "docs" / "adr")
    return where


def _render(root: Path, env: dict[str, str]) -> subprocess.Popen[bytes]:
    """`evalkit study` as the Makefile's last line runs it, for one study."""
    base = {k: v for k, v in os.environ.items() if not k.endswith("_NUM_THREADS")}
    base.pop("PYTHONHASHSEED", None)
    base["PYTHONPATH"] = os.pathsep.join([str(REPO), base.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    command = [sys.executable, "-m", "evalkit", "study", "--judge", "baseline"]
    command += ["--out", "reports", "--ledger-dir", "ledgers", "--only", STUDY]
    return subprocess.Popen(
        command, cwd=root, env={**base, **env}, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    )


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> tuple[bytes, bytes]:
    top = tmp_path_factory.mktemp("bytes")
    one = _clone(top / "here")
    other = _clone(top / "somewhere" / "else")
    runs = [
        (one, _render(one, {"PYTHONHASHSEED": "0", "OMP_NUM_THREADS": "1",
                            "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "TZ": "UTC"})),
        (other, _render(other, {"PYTHONHASHSEED": "4242", "OMP_NUM_THREADS": "2",
                                "OPENBLAS_NUM_THREADS": "2", "TZ": "Pacific/Auckland"})),
    ]  # fmt: skip
    found = []
    for root, run in runs:
        out, _ = run.communicate(timeout=900)
        assert run.returncode == 0, out.decode(errors="replace")[-3000:]
        found.append((root / "reports" / f"{STUDY}.html").read_bytes())
    return found[0], found[1]


def _first_difference(a: bytes, b: bytes) -> str:
    pairs = enumerate(zip(a, b, strict=False))
    at = next((i for i, (x, y) in pairs if x != y), min(len(a), len(b)))
    return f"first difference at byte {at}: {a[at - 80 : at + 80]!r} vs {b[at - 80 : at + 80]!r}"


@pytest.mark.slow
def test_a_study_renders_to_the_same_bytes_in_two_processes(pages: tuple[bytes, bytes]) -> None:
    one, other = pages
    assert re.search(rb"ek-chart-1\b", one), "the study drew no chart"
    assert one == other, _first_difference(one, other)


@pytest.mark.slow
def test_a_study_renders_to_the_committed_page(pages: tuple[bytes, bytes]) -> None:
    committed = (REPO / "reports" / f"{STUDY}.html").read_bytes()
    assert pages[0] == committed, _first_difference(pages[0], committed)
