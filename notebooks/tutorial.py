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

# %% [markdown]
# # A worked example: from the catalogue to a verdict, then a rubric variant
#
# One pass through evalkit's Python API, each step a library call and its display: load a
# catalogue, judge it, the gate's verdict, the judge-versus-human pairs and their agreement
# table, one chart, then a rubric variant judged on its dimension only, its exploratory
# verdict, and the two versions side by side.
#
# As shipped it runs the offline `baseline` judge on the shipped catalogue: no key, no
# network, no cost. The baseline scores by n-grams; it is the reference floor, not a judge
# that may gate a launch, so every verdict below is FAIL and says why. Set `judge` to
# `anthropic:MODEL` (or `openai:URL:MODEL`) for a real judge, and give it its own `ledger`:
# the calls are the same. This is a template: work on a copy
# (`evalkit notebook new tutorial`, then `make lab`), not on `notebooks/tutorial.ipynb`.

# %% tags=["parameters"]
# Parameters (papermill replaces this cell). Keys never go here: the judge reads them
# from the environment.
catalogue: str = "catalogues"  # catalogue folder (relative paths: from the working directory)
judge: str = "baseline"  # judge spec: baseline (offline), recorded:NAME, replay[:JUDGE], anthropic:MODEL, openai:URL:MODEL
ledger: str = "ledgers/baseline.sqlite"  # judge ledger (SQLite), created if missing; answers it holds are not asked again
dimension: str = "self_harm"  # dimension whose rubric variant is tried
variant: str = "v1"  # the rubric version tried on that dimension (a file in the catalogue's rubrics/)
variant_dimensions: list[str] = []  # dimensions judged with the variant (empty: the varied one only)
n_resamples: int = 2000  # bootstrap resamples of each kappa interval, in [1, 100000]
seed: int = 0  # seed of the bootstraps, in [0, inf)

# %%
from IPython.display import display

import evalkit.report as rp
from evalkit.agreement import agreement_table
from evalkit.catalogue import load
from evalkit.construct import compare_versions
from evalkit.gate import evaluate, pairs
from evalkit.judge import judge_cases

root = rp.work_from_project_root()  # a kernel started in workspace/ or notebooks/ reads from here

# %% [markdown]
# ## Load the catalogue
#
# `load` validates everything (cases, labels, rubrics, frozen constants and their
# ratification) and raises `CatalogueError` listing every problem, file, record and
# field, rather than loading part of a catalogue. Displayed, a catalogue shows its counts
# by stratum, locale and split, its labels by dimension and bin, and the rubrics in force.

# %%
cat = load(catalogue)
# cat

# %% [markdown]
# ## Judge the calibration cases
#
# `judge_cases` judges the calibration split on the gated dimensions under the rubrics in
# force, records every call in the SQLite ledger (created if missing) and returns the rows
# as a long frame, one row per request and dimension. Run again, it answers from the
# ledger instead of asking the judge twice.

# %%
rows = judge_cases(cat, judge=judge, ledger=ledger)
rows[["case_id", "dimension", "bin", "rubric_version", "rationale"]].head()

# %% [markdown]
# ## The verdict
#
# `evaluate(ledger, labels, catalogue)`: the third argument is the loaded catalogue (it
# supplies the strata, template families and rubrics in force). The verdict is pure: it
# reads nothing from disk. Each dimension's kappa, pairs and reasons cite the ADR behind
# each rule.

# %%
verdict = evaluate(rows, cat.labels, cat, n_resamples=n_resamples, seed=seed)
verdict

# %%
verdict.dimensions[dimension]

# %% [markdown]
# ## The pairs and the agreement table
#
# `pairs` is the frame of judge-versus-human pairs the gate reads (final turn, latest
# answer, gated strata); `complete=True` keeps only rows with both a judge bin and a human
# label, exactly the pairs of the gate's kappa. `agreement_table` gives, per dimension,
# kappa with its Wald interval and a bootstrap interval resampling whole template
# families, the maximum kappa these marginals allow, AC1, Brennan–Prediger and
# Krippendorff's alpha; its kappa is the gate's.

# %%
p = pairs(rows, cat, complete=True)
p[["case_id", "dimension", "stratum", "judge", "human"]].head()

# %%
agreement_table(p, cat.constants.bins, cluster_col="template_family", n_resamples=n_resamples,
                seed=seed, threshold=cat.constants.gate.threshold)

# %% [markdown]
# ## One chart: where judge and humans meet
#
# The confusion of the judge's bins (rows) against the human labels (columns) on the
# gate's pairs of one dimension; the diagonal is agreement. The diagnosis beside it says
# whether a low kappa comes from disagreement or from skewed marginals.

# %%
diagnosis = rp.dimension_diagnosis(p, dimension, cat.constants.bins, cat.constants.gate.threshold)
display(rp.confusion_heatmap(diagnosis.confusion,
                             f"{rp.dimension_name(dimension)}: judge against humans"))
diagnosis

# %% [markdown]
# ## Trying a rubric variant, the cheap way
#
# A variant changes one dimension, so `judge_cases` with `rubric_versions` judges that
# dimension only: with a paid judge, re-judging every dimension would pay for answers
# that cannot change. (Answers recorded with every dimension in one call, like the
# recorded reading judge's, are found again only by asking for the same dimensions:
# `variant_dimensions`.)

# %%
variant_rows = judge_cases(cat, dimensions=variant_dimensions or None, judge=judge, ledger=ledger,
                           rubric_versions={dimension: variant})
variant_rows.groupby(["dimension", "rubric_version"]).size()

# %% [markdown]
# ## The variant's exploratory verdict
#
# The plain gate reads only rows judged under the rubric in force and would set the
# variant's rows aside. `evaluate(..., rubric_versions=...)` reads them instead, under the
# same rules, on the varied dimension only. The result is exploratory (ADR-0017): it
# describes the variant, says why it is not gate evidence, and never passes.

# %%
explored = evaluate(variant_rows, cat.labels, cat, rubric_versions={dimension: variant},
                    n_resamples=n_resamples, seed=seed)
explored

# %% [markdown]
# ## The two versions side by side
#
# `compare_versions` takes the rows of each version (or one ledger holding both, twice)
# and selects them by the rubric they were judged under. The confusion counts cases: rows
# are the bin under the first name (read down), columns the bin under the second (read
# across). `agreement` gives each version's kappa against the humans on the gate's pairs;
# `by_stratum` and `marginals` say where the answers moved. The study notebook
# `rubric_constructs` draws the same comparison as charts.

# %%
comparison = compare_versions(variant_rows, rows, cat, dimension,
                              names=(variant, cat.constants.rubrics_in_force[dimension]))
comparison["confusion"]

# %%
comparison["agreement"]
