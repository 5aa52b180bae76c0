"""The shipped study notebooks: ``.ipynb`` without outputs, in sync with their ``.py``
pairs, parameters papermill can list and set, runnable by papermill as they are.

After editing a ``.py`` pair, bring its notebook along with
``jupytext --sync notebooks/*.py`` (every notebook is paired ``ipynb,py:percent``).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import jupytext
import nbformat
import pytest

from evalkit.report import HEADLINE_MIME, STUDIES, Headline, read_headline
from evalkit.report._cli import study_parameter
from evalkit.report._execute import notebook_parameters
from evalkit.report._render import stable_chart_ids
from tests.report.world import build_world, seal_heldout

REPO = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((REPO / "notebooks").glob("*.ipynb"))
PAIRS = sorted((REPO / "notebooks").glob("*.py"))
PAPERMILL = Path(sys.executable).with_name("papermill")


def test_every_study_and_every_py_pair_has_its_notebook() -> None:
    stems = {p.stem for p in NOTEBOOKS}
    assert {s.name for s in STUDIES} <= stems
    assert {p.stem for p in PAIRS} == stems


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_matches_its_py_pair_and_holds_no_output(path: Path) -> None:
    nb = nbformat.read(path, as_version=4)
    assert nb.metadata["jupytext"]["formats"] == "ipynb,py:percent"
    assert nb.metadata["kernelspec"]["name"] == "python3"
    for cell in nb.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None, cell.source[:60]
    pair = jupytext.read(path.with_suffix(".py"), fmt="py:percent")
    shipped = jupytext.read(path)
    left = [(c.cell_type, c.source, c.metadata.get("tags", [])) for c in shipped.cells]
    right = [(c.cell_type, c.source, c.metadata.get("tags", [])) for c in pair.cells]
    assert left == right, f"{path.name} and its .py differ: run jupytext --sync {path.stem}.py"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_every_parameter_has_a_type_and_a_meaning(path: Path) -> None:
    params = notebook_parameters(path)
    assert {"catalogue", "judge", "ledger", "seed"} <= set(params)
    for name, p in params.items():
        assert p["inferred_type_name"] not in ("None", ""), name
        assert len(p["help"]) > 10, f"{path.name}: {name} has no comment saying what it means"


def test_papermill_help_notebook_lists_the_parameters_with_their_meaning() -> None:
    out = subprocess.run(
        [str(PAPERMILL), "--help-notebook", str(REPO / "notebooks" / "calibration_study.ipynb")],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    ).stdout
    assert 'split: str (default "calibration")' in out
    assert "bootstrap resamples of each kappa interval" in out


@pytest.mark.parametrize(
    ("text", "value"),
    [("n=500", ("n", 500)), ("d=[self_harm, escalation]", ("d", ["self_harm", "escalation"])),
     ("x=yes", ("x", True)), ("s=v3", ("s", "v3")), ("e=", ("e", None))],
)  # fmt: skip
def test_study_parameters_are_read_as_yaml(text: str, value: tuple[str, object]) -> None:
    assert study_parameter(text) == value


def test_headline_round_trips_and_rejects_what_is_not_one() -> None:
    h = Headline("PASS", (("Self-harm", "κ 0.700 [0.600, 0.800] · 40 pairs · PASS"),))
    assert Headline.from_dict(h.to_dict()) == h
    with pytest.raises(ValueError, match="not a study headline"):
        Headline.from_dict({"lines": []})


@pytest.fixture(scope="module")
def checkout(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A working directory laid out like a fresh clone: a catalogue, no ledgers/, no reports/
    (the small world catalogue stands in for the shipped one, to keep the runs short)."""
    root = tmp_path_factory.mktemp("clone")
    build_world(root / "catalogues")
    seal_heldout(root / "catalogues")
    return root


SET = {
    "calibration_study": ["-p", "split", "calibration", "-p", "n_resamples", "50"],
    "heldout_revalidation": ["-p", "n_resamples", "40", "-y", "dimensions: [self_harm]"],
    "rubric_constructs": ["-p", "max_examples", "1"],
    "onset_turns": ["-p", "n_boot", "50", "-p", "horizon", "4"],
}


@pytest.mark.slow
@pytest.mark.parametrize("with_p", [False, True], ids=["defaults", "with-p"])
@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_papermill_runs_each_notebook_as_shipped(checkout: Path, path: Path, with_p: bool) -> None:
    out = checkout / f"{path.stem}-{with_p}.ipynb"
    args = SET.get(path.stem, ["-p", "seed", "1"]) if with_p else []  # every study has a seed
    run = subprocess.run(
        [str(PAPERMILL), str(path), str(out), "--no-progress-bar", *args],
        cwd=checkout,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    executed = nbformat.read(out, as_version=4)
    errors = [o for c in executed.cells for o in c.get("outputs", []) if o.output_type == "error"]
    assert not errors
    headline = read_headline(executed)
    assert headline is not None, f"{path.name} published no {HEADLINE_MIME} headline"
    injected = [c for c in executed.cells if "injected-parameters" in c.metadata.get("tags", [])]
    assert bool(injected) == with_p
    if path.stem == "heldout_revalidation" and with_p:
        assert 'dimensions = ["self_harm"]' in injected[0].source


def test_chart_ids_are_numbered_by_their_place_on_the_page() -> None:
    page = (
        '<div id="ek-chart-abcdef1234-7"></div><script data-target="ek-chart-abcdef1234-7">'
        '</script><div id="ek-chart-0123456789-3"></div><i data-target="ek-chart-0123456789-3">'
    )
    assert stable_chart_ids(page) == (
        '<div id="ek-chart-abcdef1234-1"></div><script data-target="ek-chart-abcdef1234-1">'
        '</script><div id="ek-chart-0123456789-2"></div><i data-target="ek-chart-0123456789-2">'
    )
