# ---
# jupyter:
#   jupytext:
#     formats: ipynb,py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#       jupytext_version: 1.19.6
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% tags=["parameters"]
# Parameters (papermill replaces this cell). Keys never go here: the judge reads them
# from the environment.
catalogue: str = "catalogues"  # catalogue folder (relative paths: from the working directory)
split: str = "calibration"  # split whose labelled, judged pairs the study reads
dimensions: list[str] = ["self_harm", "escalation", "faithfulness"]  # dimensions to judge and show (default: the gated ones)
judge: str = "baseline"  # judge spec: baseline (offline), replay[:JUDGE], anthropic:MODEL, openai:URL:MODEL
rubric_versions: dict[str, str] = {}  # {dimension: rubric version} to study (empty: the rubrics in force)
explore: bool = False  # label the page exploratory, not gate evidence (ADR-0017)
ledger: str = "ledgers/baseline.sqlite"  # judge ledger (SQLite), created if missing; replay reads it
seed: int = 0  # seed of the labelled draw and of the labelling plan, in [0, inf)
adr_base: str = "adr/"  # link prefix of the ADR pages cited by the page
pool_ledger: str = ""  # a judged ledger to measure (empty: a random split of the calibration pairs)
n_labelled: int = 120  # cases drawn as the labelled set when the pool is the calibration split, in [1, inf)
plan_budget: int = 100  # labels of the labelling plan shown case by case, in [1, 100000]
level: float = 0.95  # level of every interval on the page, in (0, 1)
# %%
from IPython.display import display

import evalkit.report as rp
from evalkit.catalogue import load
from evalkit.gate import pairs
from evalkit.judge import judge_cases, load_ledger
from evalkit.prevalence import judges, same_judge

rp.work_from_project_root()  # JupyterLab starts the kernel in notebooks/

cat = load(catalogue)
bins = list(cat.constants.bins)
rows = judge_cases(cat, cat.split(split), dimensions, judge=judge, ledger=ledger,
                   rubric_versions=rubric_versions or None, progress=False)
labelled = pairs(rows, cat, split=split, complete=True, rubric_versions=rubric_versions or None)
# The pool is evidence: validated against the catalogue, and judged by the judge the
# labelled set calibrates (two judges: the correction would correct nothing).
pool_rows = load_ledger(pool_ledger, catalogue=cat) if pool_ledger else None
judged_by = (same_judge(pool_rows, rows, pool_name=pool_ledger, labelled_name=ledger)
             if pool_rows is not None else ", ".join(judges(rows)))
pool = (pairs(pool_rows, cat, split=None, rubric_versions=rubric_versions or None)
        if pool_rows is not None else None)
studies = [rp.prevalence_study(labelled, bins, dim, pool=pool, n_labelled=n_labelled, seed=seed,
                               level=level, plan_budget=plan_budget) for dim in dimensions]
all_pairs = pairs(rows, cat, split=split, rubric_versions=rubric_versions or None)

# %%
rp.header(
    "Prevalence: how often does the agent do what?",
    "Once the judge is calibrated, it scores replies nobody labelled. How often does a "
    "reply fall in each bin, once the judge's own errors are corrected with a small "
    "labelled set?",
    catalogue=cat, judge=judge, adr_base=adr_base,
    parameters={"catalogue": catalogue, "split": split, "dimensions": dimensions,
                "rubric_versions": rubric_versions, "explore": explore, "ledger": ledger,
                "pool_ledger": pool_ledger or "(calibration split)",
                "pool and labelled set judged by": judged_by, "n_labelled": n_labelled,
                "seed": seed, "level": level},
)

# %% [markdown]
# ## How to read this study
#
# A judge's raw share of a bin is biased by its errors: a judge that calls too many
# replies *high* reports too many *high* replies, and the interval around its share is
# honest only about the pool's sampling noise, never about its bias. Two corrected
# estimators combine the judge's bins on a large **pool** of unlabelled replies with a
# small **labelled set** scored by both the judge and the humans (ADR-0021):
#
# - **PPI++** (prediction-powered inference, power-tuned; Angelopoulos et al. 2023): the
#   judge's share on the pool, corrected by the judge's mean error on the labelled set;
# - **confusion inversion** (multiclass Rogan–Gladen): the pool's judge shares mapped back
#   through the judge's confusion on the labelled set.
#
# Beside them, the naive **judge-only** share and the **labels-only** share of the
# labelled set. By default the pool is the calibration split itself with its labels hidden
# from the estimators: a random draw of cases forms the labelled set and the remaining
# cases the pool, so the humans' own rate on the pool is known and each interval can be
# checked against it (✓ contains it, ✗ misses it). With `pool_ledger`, the pool is that
# ledger's replies, the labelled set the whole calibration split, and the humans' rate is
# read from the pool cases that carry a label. Every estimator returns a named status rather
# than a number when its input cannot support one (a bin no labelled case holds, a
# singular confusion, too few labels).

# %%
display(rp.adr_list(["adr-0021"], adr_base))

# %% [markdown]
# ## The pool and the labelled set

# %%
display(rp.table(rp.prevalence_sets(studies),
                 caption="Pool and labelled set per dimension (gated strata only)"))

# %% [markdown]
# ## Corrected share of each bin
#
# For each dimension: the humans' rate on the pool, then every estimator's share with its
# interval. The chart draws the same intervals; the black bar is the humans' rate.

# %%
for study in studies:
    display(rp.heading(rp.dimension_name(study.dimension), 3))
    display(rp.shares_table(study.shares, f"{rp.dimension_name(study.dimension)}: share of "
                            "replies in each bin", level))
    display(rp.shares_chart(study))

# %% [markdown]
# ## Per locale
#
# The same per locale of the conversation. The overall rows ("all") are here the
# *stratified* corrections: each locale corrected with its own labelled cases, weighted
# by its share of the pool, so a judge that errs more in one locale is corrected there.
# A locale with few labelled cases has wide intervals, or a status.

# %%
for study in studies:
    display(rp.shares_table(study.by_locale, f"{rp.dimension_name(study.dimension)}: share "
                            "of replies in each bin, per locale", level))

# %% [markdown]
# ## Which cases to label next
#
# A labelling budget buys the most where the judge is least reliable. The plan draws each
# pool case with a known probability that grows with the judge's error rate on its bin
# (per the labelled set's confusion), and the estimate weights each labelled case by the
# inverse of that probability, so it stays unbiased. The table gives the expected
# interval width of each bin for budgets of 50, 100 and 200 labels, planned against
# random labelling; the second how one draw of the plan spreads its labels.

# %%
for study in studies:
    display(rp.heading(rp.dimension_name(study.dimension), 3))
    display(rp.row(rp.widths_table(study.widths, level),
                   rp.plan_table(study.plan, study.plan_budget)))

# %% [markdown]
# ## The judge's error structure
#
# Where the judge departs from the humans on the labelled calibration pairs: which way
# it errs (over- or under-scoring on the ordered bins), whether it errs more, or more
# one way, on long replies than on short ones, and in which locale and stratum.

# %%
for dim in dimensions:
    display(rp.heading(rp.dimension_name(dim), 3))
    display(rp.error_structure_panel(rp.error_structure(all_pairs, cat, dim, level=level)))

# %%
# The headline the index page shows beside the link to this page (not displayed here).
rp.publish_headline(rp.prevalence_headline(studies))
