"""``evalkit study`` end to end on small inputs: the command, a failing study, a leaking one."""

from __future__ import annotations

import os
from pathlib import Path

import jupytext
import pytest

from evalkit.cli import main
from evalkit.report._run import run_studies
from evalkit.report._secrets import SecretLeakError
from tests.report.world import FAKE_KEY, build_world, seal_heldout

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]

HEADER = """# %% tags=["parameters"]
catalogue = "catalogues"
split = "calibration"
dimensions = []
judge = "baseline"
rubric_versions = {}
ledger = "ledgers/baseline.sqlite"
seed = 0
adr_base = "adr/"
n_resamples = 10
max_examples = 1

"""


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    build_world(tmp_path / "catalogues")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("ANTHROPIC_API_KEY", FAKE_KEY)
    return tmp_path


def _notebooks(root: Path, body: str) -> Path:
    folder = root / "nbs"
    folder.mkdir()
    nb = jupytext.reads(HEADER + "# %%\n" + body, fmt="py:percent")
    jupytext.write(nb, folder / "calibration_study.ipynb")
    return folder


def test_study_command_renders_and_links(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["study", "--catalogue", "catalogues", "--out", "out", "--ledger-dir", "led",
                 "--only", "heldout_revalidation", "--adr-dir", str(REPO / "docs" / "adr"),
                 "--notebooks", str(REPO / "notebooks")])  # fmt: skip
    assert code == 0
    assert "wrote out/index.html" in capsys.readouterr().out
    page = (root / "out" / "heldout_revalidation.html").read_text(encoding="utf-8")
    assert "Held-out agreement refused" in page
    assert 'href="adr/0008-sealed-heldout-revalidation.html"' in page
    assert (root / "out" / "adr" / "0008-sealed-heldout-revalidation.html").is_file()
    index = (root / "out" / "index.html").read_text(encoding="utf-8")
    assert 'href="heldout_revalidation.html"' in index and "led/baseline.sqlite" in index
    for path in (root / "out").rglob("*"):
        assert not path.is_file() or FAKE_KEY.encode() not in path.read_bytes()


def test_adr_base_pages_link_the_adr_pages_of_another_run(
    root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["study", "--catalogue", "catalogues", "--out", "out/reader", "--ledger-dir",
                 "led", "--only", "heldout_revalidation", "--adr-base", "../adr/", "--adr-dir",
                 str(REPO / "docs" / "adr"), "--notebooks", str(REPO / "notebooks")])  # fmt: skip
    assert code == 0
    err = capsys.readouterr().err.splitlines()
    said = [line for line in err if not line.startswith("  … ")]  # progress lines, if slow
    assert said[0] == "evalkit study: 1 study, 1 at a time -> out/reader"
    assert said[1] == "heldout_revalidation: started"
    assert said[2].startswith("heldout_revalidation: rendered in ")
    page = (root / "out" / "reader" / "heldout_revalidation.html").read_text(encoding="utf-8")
    assert 'href="../adr/0008-sealed-heldout-revalidation.html"' in page
    assert 'href="adr/' not in page
    assert not (root / "out" / "reader" / "adr").exists()


def test_unknown_study_is_unusable_input(root: Path) -> None:
    assert main(["study", "--only", "no_such_study", "--out", "out"]) == 2


def test_a_failing_study_is_rendered_with_its_error(root: Path) -> None:
    nbs = _notebooks(root, 'raise RuntimeError("the study broke here")\n')
    summary = run_studies(out="out", notebooks=nbs, studies=["calibration_study"],
                          log=lambda msg: None)  # fmt: skip
    (result,) = summary.results
    assert not result.ok and "the study broke here" in (result.error or "")
    page = (root / "out" / "calibration_study.html").read_text(encoding="utf-8")
    assert "the study broke here" in page
    assert "failed" in (root / "out" / "index.html").read_text(encoding="utf-8")


def test_a_key_printed_by_a_notebook_is_caught_and_the_page_deleted(root: Path) -> None:
    nbs = _notebooks(root, 'import os\nprint("leak:", os.environ["ANTHROPIC_API_KEY"])\n')
    with pytest.raises(SecretLeakError) as caught:
        run_studies(out="out", notebooks=nbs, studies=["calibration_study"], log=lambda m: None)
    assert FAKE_KEY not in str(caught.value)
    assert "calibration_study.html" in str(caught.value)
    assert not (root / "out" / "calibration_study.html").exists()
    assert os.environ["ANTHROPIC_API_KEY"] == FAKE_KEY


def test_a_key_passed_as_a_parameter_is_refused_before_running(root: Path) -> None:
    with pytest.raises(SecretLeakError):
        run_studies(out="out", studies=["heldout_revalidation"], judge=f"anthropic:{FAKE_KEY}",
                    notebooks=REPO / "notebooks", log=lambda m: None)  # fmt: skip
    assert not (root / "out" / "heldout_revalidation.html").exists()


def test_a_study_that_displays_raw_markup_is_refused(root: Path) -> None:
    nbs = _notebooks(
        root, 'from IPython.display import HTML\nHTML("<script>window.x=1</script>")\n'
    )
    summary = run_studies(out="out", notebooks=nbs, studies=["calibration_study"],
                          log=lambda msg: None)  # fmt: skip
    (result,) = summary.results
    assert not result.ok and "would run" in (result.error or "")
    page = (root / "out" / "calibration_study.html").read_text(encoding="utf-8")
    assert "was not rendered" in page and "<script>window.x" not in page


def test_heldout_study_computes_agreement_once_labels_are_sealed(root: Path) -> None:
    seal_heldout(root / "catalogues", labeler="tester")
    summary = run_studies(out="out", studies=["heldout_revalidation"], log=lambda m: None,
                          notebooks=REPO / "notebooks", adr_dir=REPO / "docs" / "adr",
                          overrides={"heldout_revalidation": {"n_resamples": 50}})  # fmt: skip
    assert summary.ok, summary.results[0].error
    page = (root / "out" / "heldout_revalidation.html").read_text(encoding="utf-8")
    assert "Held-out agreement refused" not in page
    assert "Gate verdict per dimension" in page and "Recall on held-out ideation" in page


def test_study_parameters_from_the_command_line_reach_the_notebook(root: Path) -> None:
    nbs = _notebooks(root, 'print("resamples:", n_resamples, "examples:", max_examples)\n')
    code = main(["study", "--out", "out", "--notebooks", str(nbs), "--only", "calibration_study",
                 "-p", "n_resamples=7", "-p", "max_examples=[2, 3]"])  # fmt: skip
    assert code == 0
    page = (root / "out" / "calibration_study.html").read_text(encoding="utf-8")
    assert "resamples: 7 examples: [2, 3]" in page


@pytest.mark.parametrize(
    ("given", "said"),
    [
        ("n_resample=7", "unknown study parameter(s) ['n_resample']"),
        ("judge=replay", "use --judge"),
        ("split=heldout", "'split' is set by the run"),
        (f"max_examples={FAKE_KEY}", "holds a secret"),
    ],
)
def test_a_study_parameter_that_cannot_apply_is_refused_before_running(
    root: Path, capsys: pytest.CaptureFixture[str], given: str, said: str
) -> None:
    nbs = _notebooks(root, 'raise RuntimeError("must not run")\n')
    code = main(["study", "--out", "out", "--notebooks", str(nbs), "--only", "calibration_study",
                 "-p", given])  # fmt: skip
    assert code == 2
    assert said in capsys.readouterr().err
    assert not (root / "out" / "calibration_study.html").exists()


def test_a_malformed_study_parameter_exits_2(root: Path) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["study", "-p", "n_resamples"])
    assert exc.value.code == 2
