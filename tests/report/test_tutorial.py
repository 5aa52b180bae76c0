"""The worked example ``notebooks/tutorial.ipynb`` runs under papermill: once with the
offline baseline (on the small world catalogue, as the other notebooks' runs), once with
the recorded reading judge on the shipped catalogue when its recording is present.

One papermill execution per judge; each checks that no cell failed and that the steps
the tutorial teaches showed their results: the gate's verdict, the variant judged on its
dimension only, its exploratory verdict and the comparison of the two versions.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from tests.report.world import build_world

REPO = Path(__file__).resolve().parents[2]
TUTORIAL = REPO / "notebooks" / "tutorial.ipynb"
PAPERMILL = Path(sys.executable).with_name("papermill")
READER = "recorded:llm-reader-2026-12"
RECORDING = REPO / "recordings" / "llm-reader-2026-12"


def _run(cwd: Path, *args: str) -> dict[str, str]:
    """Execute the tutorial in ``cwd`` with papermill ``args``; the plain text each code
    cell printed or displayed, keyed by its first line. Fails on any error output."""
    out = cwd / "tutorial-out.ipynb"
    run = subprocess.run(
        [str(PAPERMILL), str(TUTORIAL), str(out), "--no-progress-bar", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    executed = nbformat.read(out, as_version=4)
    shown: dict[str, str] = {}
    for cell in executed.cells:
        if cell.cell_type != "code":
            continue
        assert not [o for o in cell.outputs if o.output_type == "error"], cell.source
        text = [o.get("text") or o.get("data", {}).get("text/plain", "") for o in cell.outputs]
        shown[cell.source.splitlines()[0]] = "\n".join(t for t in text if t)
    return shown


def _displayed(shown: dict[str, str], start: str) -> str:
    return next(text for source, text in shown.items() if source.startswith(start))


@pytest.mark.slow
def test_the_tutorial_runs_with_the_baseline(tmp_path: Path) -> None:
    build_world(tmp_path / "catalogues")
    shown = _run(tmp_path, "-p", "n_resamples", "50")
    assert _displayed(shown, "verdict = evaluate").startswith("GateVerdict: FAIL")
    assert "self_harm  v1" in _displayed(shown, "variant_rows = judge_cases")
    explored = _displayed(shown, "explored = evaluate")
    assert explored.startswith("GateVerdict: exploratory, not gate evidence")
    assert "self_harm rubric v1 is studied; v3 is in force" in explored
    assert "escalation" not in explored  # judged and read on the varied dimension only
    assert "v1 ↓" in _displayed(shown, "comparison = compare_versions")


@pytest.mark.slow
@pytest.mark.skipif(not RECORDING.is_dir(), reason="no recording of the reading judge")
def test_the_tutorial_runs_with_the_recorded_reading_judge(tmp_path: Path) -> None:
    """As ``make study`` does, the recording is imported into a ledger first; it answered
    the variant with every dimension in one call, so the tutorial asks for the same."""
    from evalkit.catalogue import load
    from evalkit.judging._batch_files import import_batch

    cat = load(REPO / "catalogues")
    ledger = tmp_path / "reader.sqlite"
    cases = cat.split("calibration")
    import_batch(cat, cases, None, judge=READER, ledger=ledger,
                 path=RECORDING / "calibration.jsonl")  # fmt: skip
    every = list(cat.constants.gated_dimensions)  # as make study imports it: all three
    variant = {"self_harm": "v1"}
    import_batch(cat, cases, every, judge=READER, ledger=ledger, rubric_versions=variant,
                 path=RECORDING / "self_harm-v1.jsonl")  # fmt: skip
    shown = _run(
        tmp_path,
        "-p", "catalogue", str(REPO / "catalogues"), "-p", "judge", READER,
        "-p", "ledger", str(ledger), "-p", "n_resamples", "50",
        "-y", "variant_dimensions: [self_harm, escalation, faithfulness]",
    )  # fmt: skip
    judged = _displayed(shown, "rows = judge_cases")
    assert "0 to send" in judged  # every answer came from the recording
    verdict = _displayed(shown, "verdict = evaluate")
    assert verdict.startswith("GateVerdict: FAIL") and "reference_judge" in verdict
    explored = _displayed(shown, "explored = evaluate")
    assert "exploratory, not gate evidence" in explored and "733 pairs" in explored


def test_the_readme_and_the_old_page_link_the_tutorial() -> None:
    assert "(notebooks/tutorial.ipynb)" in (REPO / "README.md").read_text()
    assert "(../notebooks/tutorial.ipynb)" in (REPO / "docs" / "worked-example.md").read_text()
