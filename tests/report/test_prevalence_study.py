"""The prevalence study: its frames on constructed pairs, and its page on the shipped data.

The shipped-data tests check issue 18's "done when": the corrected self-harm "high" share
has an interval that contains the humans' rate on the pool where the judge-only one does
not, on the frames of :func:`evalkit.report.prevalence_study` (the function the notebook
calls) and on the rendered page, which shows both.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from bs4 import BeautifulSoup

from evalkit.catalogue import load
from evalkit.gate import pairs
from evalkit.judge import load_ledger
from evalkit.prevalence import PrevalenceInputError
from evalkit.report import prevalence_headline, prevalence_study
from evalkit.report._prevalence import PrevalenceStudy, labelled_split, shares_frame
from evalkit.report._run import RunSummary, run_studies

REPO = Path(__file__).resolve().parents[2]
BINS = ["low", "partial", "high"]


def judged_pairs(n: int, seed: int = 0) -> pd.DataFrame:
    """Complete pairs of one dimension: a judge that calls a quarter of the low replies high."""
    rng = np.random.default_rng(seed)
    human = rng.choice(BINS, size=n, p=[0.7, 0.15, 0.15])
    judge = np.where((human == "low") & (rng.random(n) < 0.25), "high", human)
    return pd.DataFrame(
        {
            "case_id": [f"c{i:03d}" for i in range(n)],
            "dimension": "self_harm",
            "judge": judge,
            "human": human,
            "locale": np.where(np.arange(n) % 2 == 0, "en-GB", "en-US"),
            "stratum": "benign",
        }
    )


def test_labelled_split_is_disjoint_by_case_and_reproducible() -> None:
    frame = judged_pairs(50)
    both = pd.concat([frame, frame.assign(dimension="escalation")], ignore_index=True)
    pool, labelled = labelled_split(both, 10, seed=3)
    assert labelled["case_id"].nunique() == 10 and len(labelled) == 20
    assert not set(pool["case_id"]) & set(labelled["case_id"])
    assert len(pool) + len(labelled) == len(both)
    again = labelled_split(both, 10, seed=3)[1]
    assert list(again["case_id"]) == list(labelled["case_id"])
    for bad in (0, 50):
        with pytest.raises(PrevalenceInputError, match="n_labelled"):
            labelled_split(both, bad)


def test_study_puts_the_human_rate_of_the_pool_beside_each_estimate() -> None:
    study = prevalence_study(judged_pairs(400), BINS, "self_harm", n_labelled=150, seed=1)
    assert isinstance(study, PrevalenceStudy) and study.split
    assert len(study.labelled) == 150 and len(study.pool) == 250
    shares = study.shares.set_index(["estimator", "bin"])
    truth = float((study.pool["human"] == "high").mean())
    assert shares.loc[("judge_only", "high"), "human_pool"] == pytest.approx(truth)
    judge = shares.loc[("judge_only", "high")]
    covered = judge["ci_low"] <= truth <= judge["ci_high"]
    assert judge["covers"] is covered
    # The judge inflates "high" by about 0.7 * 0.25: its naive share is far above the truth.
    assert judge["estimate"] > truth + 0.1
    assert set(study.by_locale["stratum"].dropna()) == {"en-GB", "en-US"}
    assert set(study.widths["budget"]) == {50, 100, 200}
    assert study.plan["expected_labels"].sum() == pytest.approx(study.plan_budget)


def test_a_status_is_shown_instead_of_a_number() -> None:
    frame = judged_pairs(60)
    frame.loc[frame["human"] == "partial", "human"] = "low"  # no labelled case is partial
    frame.loc[frame["judge"] == "partial", "judge"] = "low"
    study = prevalence_study(frame, BINS, "self_harm", n_labelled=20)
    text = shares_frame(study.shares).set_index("bin")
    assert text.loc["partial", "ppi++"] == "not estimated: empty bin"
    assert text.loc["high", "judge_only"].endswith(("✓", "✗"))


def test_a_given_pool_uses_every_labelled_pair_and_counts_failed_answers() -> None:
    labelled = judged_pairs(80)
    pool = judged_pairs(30, seed=5).assign(case_id=lambda f: "p" + f["case_id"])
    pool.loc[:4, "judge"] = None  # five failed judge answers
    pool.loc[5:9, "human"] = None  # five pool cases nobody labelled
    study = prevalence_study(labelled, BINS, "self_harm", pool=pool)
    assert not study.split and study.n_failed == 5
    assert len(study.pool) == 25 and len(study.labelled) == 80
    row = study.shares.iloc[0]
    assert row["n_human_pool"] == 20 and row["n_pool"] == 25


def test_headline_names_both_shares_and_the_human_rate() -> None:
    study = prevalence_study(judged_pairs(300), BINS, "self_harm", n_labelled=100)
    ((label, text),) = prevalence_headline([study]).lines
    assert label == "Self-harm “high”"
    assert text.startswith("PPI++ ") and " · judge only " in text and " · humans " in text


@pytest.fixture(scope="module")
def shipped(tmp_path_factory: pytest.TempPathFactory) -> tuple[RunSummary, Path]:
    """The prevalence study rendered on the shipped catalogue with the baseline judge."""
    root = tmp_path_factory.mktemp("prevalence")
    summary = run_studies(
        catalogue=REPO / "catalogues",
        judge="baseline",
        out=root / "out",
        ledger=root / "baseline.sqlite",
        notebooks=REPO / "notebooks",
        adr_dir=REPO / "docs" / "adr",
        studies=["prevalence"],
        log=lambda message: None,
    )
    return summary, root / "baseline.sqlite"


def _self_harm_high(ledger: Path) -> pd.DataFrame:
    """The self-harm "high" rows computed as the notebook computes them (default seed)."""
    cat = load(REPO / "catalogues")
    labelled = pairs(load_ledger(ledger), cat, split="calibration", complete=True)
    study = prevalence_study(labelled, list(cat.constants.bins), "self_harm")
    return study.shares[study.shares["bin"] == "high"].set_index("estimator")


@pytest.mark.slow
def test_on_the_shipped_data_the_corrected_interval_contains_the_human_rate(
    shipped: tuple[RunSummary, Path],
) -> None:
    high = _self_harm_high(shipped[1])
    truth = high.loc["ppi++", "human_pool"]
    ppi, naive = high.loc["ppi++"], high.loc["judge_only"]
    assert ppi["status"] == "ok" and ppi["ci_low"] <= truth <= ppi["ci_high"]
    assert not naive["ci_low"] <= truth <= naive["ci_high"]
    assert (ppi["covers"], naive["covers"]) == (True, False)


@pytest.mark.slow
def test_the_rendered_page_shows_both_intervals_and_the_index_its_headline(
    shipped: tuple[RunSummary, Path],
) -> None:
    summary, ledger = shipped
    assert summary.ok, [r.error for r in summary.results]
    high = _self_harm_high(ledger)
    page = BeautifulSoup((summary.out / "prevalence.html").read_text("utf-8"), "html.parser")
    caption = page.find("caption", string="Self-harm: share of replies in each bin")
    assert caption is not None
    heads = [th.get_text() for th in caption.find_parent("table").select("thead th")]
    rows = [
        [td.get_text() for td in tr.select("td")]
        for tr in caption.find_parent("table").select("tbody tr")
    ]
    cells = dict(zip(heads, next(r for r in rows if r[heads.index("Bin")] == "high"), strict=True))
    ppi, naive = high.loc["ppi++"], high.loc["judge_only"]
    assert cells["PPI++ (corrected)"] == (
        f"{100 * ppi['estimate']:.1f}% [{100 * ppi['ci_low']:.1f}%, {100 * ppi['ci_high']:.1f}%] ✓"
    )
    assert cells["Judge only (naive)"] == (
        f"{100 * naive['estimate']:.1f}% [{100 * naive['ci_low']:.1f}%, "
        f"{100 * naive['ci_high']:.1f}%] ✗"
    )
    assert cells["Humans on the pool"] == f"{100 * ppi['human_pool']:.1f}%"
    assert page.find("caption", string="Direction of the disagreements") is not None
    index = (summary.out / "index.html").read_text("utf-8")
    assert 'href="prevalence.html"' in index and "Self-harm “high”" in index
    (line,) = [t for label, t in summary.results[0].headline.lines if label.startswith("Self")]
    assert line.startswith(f"PPI++ {100 * ppi['estimate']:.1f}%")


def test_a_pool_without_the_dimension_gives_statuses_not_a_crash() -> None:
    pool = judged_pairs(20).assign(dimension="escalation")
    study = prevalence_study(judged_pairs(40), BINS, "self_harm", pool=pool)
    assert len(study.pool) == 0 and study.plan.empty
    assert set(study.shares.loc[study.shares["estimator"] == "ppi++", "status"]) == {"empty_pool"}
