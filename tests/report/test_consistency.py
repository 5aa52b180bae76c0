"""One quantity, one number: every page and ``evalkit gate --json`` read the same pairs.

The calibration, constructs and held-out pages are rendered from one ledger; the kappa and
the number of pairs of each dimension must be the same wherever they appear (issue 14).
"""

from __future__ import annotations

import io
import json
import re
from contextlib import redirect_stdout
from pathlib import Path

import pytest
from bs4 import BeautifulSoup

from evalkit.catalogue import load
from evalkit.cli import main
from evalkit.report import dimension_name
from evalkit.report._run import run_studies
from tests.report.world import build_world, seal_heldout

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
STUDIES = ["calibration_study", "rubric_constructs", "heldout_revalidation"]


@pytest.fixture(scope="module")
def rendered(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("consistency")
    build_world(root / "catalogues")
    seal_heldout(root / "catalogues")
    summary = run_studies(
        catalogue=str(root / "catalogues"),
        judge="baseline",
        out=str(root / "out"),
        ledger_dir=str(root / "ledgers"),
        studies=STUDIES,
        notebooks=REPO / "notebooks",
        adr_dir=REPO / "docs" / "adr",
        overrides={"*": {"n_resamples": 50}},
        log=lambda msg: None,
    )
    assert summary.ok, [r.error for r in summary.results if not r.ok]
    return root


def _table(page: Path, caption: str) -> list[dict[str, str]]:
    """The rows of the table whose caption starts with ``caption``, keyed by header."""
    soup = BeautifulSoup(page.read_text(encoding="utf-8"), "html.parser")
    for table in soup.find_all("table"):
        cap = table.find("caption")
        if cap is not None and cap.get_text(" ", strip=True).startswith(caption):
            rows = [
                [c.get_text(" ", strip=True) for c in tr.find_all(["th", "td"])]
                for tr in table.find_all("tr")
            ]
            return [dict(zip(rows[0], r, strict=True)) for r in rows[1:]]
    raise AssertionError(f"{page.name}: no table captioned {caption!r}")


def _by_dimension(rows: list[dict[str, str]]) -> dict[str, tuple[str, int]]:
    return {r["Dimension"]: (r["Cohen's kappa"], int(r["Pairs"])) for r in rows}


def _gate_json(root: Path, split: str) -> str:
    out = io.StringIO()
    argv = ["gate", "--catalogue", str(root / "catalogues"), "--split", split, "--json"]
    with redirect_stdout(out):
        code = main([*argv, "--ledger", str(root / "ledgers" / "baseline.sqlite")])
    assert code in (0, 1), out.getvalue()
    return out.getvalue()


def _gate(root: Path, split: str) -> dict[str, tuple[str, int]]:
    verdict = json.loads(_gate_json(root, split))
    return {
        d: ("n/a" if v["kappa"] is None else f"{v['kappa']:.3f}", v["n"])
        for d, v in verdict["dimensions"].items()
    }


def _kappa_pairs(root: Path, page: str) -> tuple[dict[str, tuple[str, int]], ...]:
    path = root / "out" / f"{page}.html"
    verdict = _by_dimension(_table(path, "Gate verdict per dimension"))
    agreement = _by_dimension(_table(path, "Agreement statistics"))
    return verdict, agreement


def test_calibration_numbers_agree_across_pages_and_the_gate(rendered: Path) -> None:
    verdict, agreement = _kappa_pairs(rendered, "calibration_study")
    gate = _gate(rendered, "calibration")
    assert verdict == agreement == gate, (verdict, agreement, gate)
    rows = _table(rendered / "out" / "rubric_constructs.html", "Self-harm: agreement")
    in_force = load(rendered / "catalogues").constants.rubrics_in_force["self_harm"]
    construct = next(r for r in rows if r["Rubric version"] == in_force)
    assert (construct["Cohen's kappa"], int(construct["Pairs"])) == gate["self_harm"]


def test_heldout_numbers_agree_with_the_heldout_gate(rendered: Path) -> None:
    verdict, agreement = _kappa_pairs(rendered, "heldout_revalidation")
    gate = _gate(rendered, "heldout")
    # This small held-out set has no sources: faithfulness has no pair anywhere.
    assert gate["faithfulness"] == ("n/a", 0) and verdict["faithfulness"][1] == 0
    paired = {d: v for d, v in gate.items() if v[1] > 0}
    assert paired and {d: verdict[d] for d in paired} == agreement == paired


def _index_headlines(root: Path) -> dict[str, tuple[str, dict[str, tuple[str, int]]]]:
    """{study page: (badge, {headline label: (kappa, pairs)})} from the index page."""
    soup = BeautifulSoup((root / "out" / "index.html").read_text(encoding="utf-8"), "html.parser")
    found = {}
    for tr in soup.find_all("tr"):
        cells = tr.find_all("td")
        anchor = tr.find("a")
        if not cells or anchor is None or not tr.find(class_="ek-badge"):
            continue
        lines = {}
        for li in tr.find_all("li"):
            label, _, text = li.get_text(" ", strip=True).partition(":")
            m = re.match(r"κ (\S+) .*· (\d+) pairs", text.strip())
            if m:
                lines[label.strip()] = (m.group(1), int(m.group(2)))
        found[Path(anchor["href"]).stem] = (tr.find(class_="ek-badge").get_text(strip=True), lines)
    return found


def test_the_index_headlines_are_the_gate_numbers(rendered: Path) -> None:
    index = _index_headlines(rendered)
    for page, split in (("calibration_study", "calibration"), ("heldout_revalidation", "heldout")):
        gate = _gate(rendered, split)
        badge, lines = index[page]
        overall = json.loads(_gate_json(rendered, split))["overall"]
        assert badge == overall, (page, badge, overall)
        assert lines == {dimension_name(d): v for d, v in gate.items()}, (page, lines, gate)
    badge, lines = index["rubric_constructs"]
    in_force = load(rendered / "catalogues").constants.rubrics_in_force["self_harm"]
    assert badge == "descriptive"
    assert (
        lines[f"{dimension_name('self_harm')} {in_force}"]
        == _gate(rendered, "calibration")["self_harm"]
    )
