"""The shipped study notebooks: ``.ipynb`` without outputs, in sync with their ``.py``
pairs, parameters papermill can list and set, runnable by papermill as they are.

After editing a ``.py`` pair, bring its notebook along with
``jupytext --sync notebooks/*.py`` (every notebook is paired ``ipynb,py:percent``).

Only the templates (one notebook per study in ``STUDIES``, and the worked example
``tutorial``, which is no study) are checked, and only their content: cells' source and
tags, the parameters cell, no outputs. What JupyterLab rewrites on save (kernelspec, cell
metadata) is not checked, and a researcher's own notebook in ``notebooks/`` is ignored;
work belongs in the git-ignored ``workspace/`` (``evalkit notebook new STUDY``).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import jupytext
import nbformat
import pytest

from evalkit.report._cli import study_parameter
from evalkit.report._execute import notebook_parameters
from evalkit.report._render import stable_chart_ids
from evalkit.report._run import STUDIES
from evalkit.report._summary import HEADLINE_MIME, Headline, read_headline
from evalkit.report._workspace import WORKBOOKS
from tests.report.world import build_world, seal_heldout

REPO = Path(__file__).resolve().parents[2]


def templates(folder: Path) -> list[Path]:
    """The shipped templates in ``folder``: one per study and the worked example, whatever
    else a researcher keeps beside them (their own notebooks, unpaired, are none of the
    suite's business)."""
    return [folder / f"{name}.ipynb" for name in [*(s.name for s in STUDIES), *WORKBOOKS]]


NOTEBOOKS = templates(REPO / "notebooks")
#: The study templates: ``evalkit study`` runs these, never the tutorial
#: (tests/report/test_tutorial.py runs that).
STUDY_NOTEBOOKS = [p for p in NOTEBOOKS if p.stem not in WORKBOOKS]
PAPERMILL = Path(sys.executable).with_name("papermill")


def _restore(path: Path) -> str:
    """How to bring a template back, and where work belongs."""
    return (
        f"restore it with `git checkout notebooks/{path.name}` (and its .py); run and save "
        f"studies on a copy in the git-ignored workspace: `evalkit notebook new {path.stem}`"
    )


def test_every_study_has_its_notebook_and_py_pair() -> None:
    missing = [p.name for p in NOTEBOOKS if not p.is_file()]
    missing += [p.with_suffix(".py").name for p in NOTEBOOKS if not p.with_suffix(".py").is_file()]
    assert not missing, f"missing from notebooks/: {missing}"


def test_a_researchers_own_notebook_beside_the_templates_is_ignored(tmp_path: Path) -> None:
    nbformat.write(nbformat.v4.new_notebook(), tmp_path / "my_analysis.ipynb")  # no jupytext
    assert tmp_path / "my_analysis.ipynb" not in templates(tmp_path)


def test_the_tutorial_is_a_template_and_no_study() -> None:
    assert REPO / "notebooks" / "tutorial.ipynb" in NOTEBOOKS
    assert "tutorial" not in {s.name for s in STUDIES}  # evalkit study never renders it


def template_problems(path: Path) -> list[str]:
    """What is wrong with the content of template ``path``: outputs, a parameters cell
    missing or doubled, a pairing dropped, cells that differ from the ``.py`` pair. Lab's
    noise on save (kernelspec, metadata) is not a problem."""
    nb = nbformat.read(path, as_version=4)
    problems = []
    run = [c for c in nb.cells if c.cell_type == "code" and (c.outputs or c.execution_count)]
    if run:
        problems.append(f"{path.name} holds outputs (saved after running it?): {_restore(path)}")
    tagged = [c for c in nb.cells if "parameters" in c.metadata.get("tags", [])]
    if len(tagged) != 1:
        problems.append(f"{path.name} has {len(tagged)} cells tagged 'parameters', not 1")
    if nb.metadata.get("jupytext", {}).get("formats") != "ipynb,py:percent":
        problems.append(f"{path.name} is no longer paired ipynb,py:percent: {_restore(path)}")
    pair = jupytext.read(path.with_suffix(".py"), fmt="py:percent")
    left = [(c.cell_type, c.source, c.metadata.get("tags", [])) for c in nb.cells]
    right = [(c.cell_type, c.source, c.metadata.get("tags", [])) for c in pair.cells]
    if left != right:
        problems.append(f"{path.name} and its .py differ: run jupytext --sync {path.stem}.py")
    return problems


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_matches_its_py_pair_and_holds_no_output(path: Path) -> None:
    assert template_problems(path) == []


def test_lab_noise_passes_and_outputs_fail_naming_the_fix(tmp_path: Path) -> None:
    """A template saved from Lab: a new kernelspec and cell metadata pass; outputs fail
    with the way back (a tracked file holding outputs is a mistake the suite catches)."""
    src = NOTEBOOKS[0]
    nb = nbformat.read(src, as_version=4)
    nb.metadata["kernelspec"] = {"name": "evalkit-venv", "display_name": "evalkit (venv)"}
    nb.metadata["language_info"] = {"name": "python", "version": "3.12.3"}
    for cell in nb.cells:
        cell.metadata["execution"] = {"iopub.status.busy": "2026-12-02T04:00:00Z"}
    copy = tmp_path / src.name
    nbformat.write(nb, copy)
    copy.with_suffix(".py").write_text(src.with_suffix(".py").read_text())
    assert template_problems(copy) == []
    code = next(c for c in nb.cells if c.cell_type == "code")
    code.outputs = [nbformat.v4.new_output("stream", text="hello")]
    code.execution_count = 1
    nbformat.write(nb, copy)
    (problem,) = template_problems(copy)
    assert f"git checkout notebooks/{src.name}" in problem
    assert f"evalkit notebook new {src.stem}" in problem


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


# Every notebook as shipped; with -p only those whose parameters are more than a seed (the
# parameter checks themselves are tests/report/test_study_parameters.py's, without kernels).
RUNS = [pytest.param(p, False, id=f"{p.stem}-defaults") for p in STUDY_NOTEBOOKS] + [
    pytest.param(p, True, id=f"{p.stem}-with-p") for p in STUDY_NOTEBOOKS if p.stem in SET
]


@pytest.mark.slow
@pytest.mark.parametrize(("path", "with_p"), RUNS)
def test_papermill_runs_each_notebook_as_shipped(checkout: Path, path: Path, with_p: bool) -> None:
    out = checkout / f"{path.stem}-{with_p}.ipynb"
    args = SET[path.stem] if with_p else []
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
        '<div id="ek-chart-1"></div><script data-target="ek-chart-1">'
        '</script><div id="ek-chart-2"></div><i data-target="ek-chart-2">'
    )
