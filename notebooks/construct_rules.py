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
split: str = "calibration"  # split of the catalogue studied: calibration or heldout
dimensions: list[str] = ["self_harm", "escalation", "faithfulness"]  # dimensions judged in one call
rubric_versions: dict[str, str] = {}  # {dimension: rubric version} of the other dimensions (empty: in force)
judge: str = "baseline"  # judge spec: baseline (offline), recorded:NAME, replay[:JUDGE], anthropic:MODEL, openai:URL:MODEL
ledger: str = "ledgers/baseline.sqlite"  # judge ledger (SQLite), created if missing; replay reads it
dimension: str = "faithfulness"  # dimension whose two rubric versions are compared
versions: list[str] = ["v1", "v2"]  # the two rubric versions compared, predecessor first, items in [2, 2]
explore: bool = False  # label the page exploratory, not gate evidence (ADR-0017)
seed: int = 0  # seed of bootstraps and simulations, in [0, inf)
adr_base: str = "adr/"  # link prefix of the ADR pages cited by the page
# %%
from IPython.display import display

import evalkit.report as rp
from evalkit.catalogue import load
from evalkit.catalogue._parity import rule_parity
from evalkit.construct import compare_versions, diff_rules, rule_inventory
from evalkit.construct._rules import inventory_frame
from evalkit.gate import evaluate, study_pairs
from evalkit.judge import judge_cases

rp.work_from_project_root()  # JupyterLab starts the kernel in notebooks/

cat = load(catalogue)
bins = list(cat.constants.bins)
inventory = inventory_frame(rule_inventory(cat))
parity = rule_parity(cat)
runs = {v: judge_cases(cat, cat.split(split), dimensions, judge=judge, ledger=ledger,
                       rubric_versions={**rubric_versions, dimension: v}, progress=False)
        for v in versions}
first, second = versions
comparison = compare_versions(runs[first], runs[second], cat, dimension=dimension,
                              names=(first, second))
name = rp.dimension_name(dimension)
rule_tables = {}
for v in versions:
    view = rp.gate_view(cat, {**rubric_versions, dimension: v})
    verdict = evaluate(runs[v], cat.labels, view, split=split, n_resamples=200, seed=seed)
    rule_tables[v] = verdict.dimensions[dimension].rules_frame()

# %%
rp.header(
    "Constructs as rules",
    "Where each rule of each construct is stated (the labeling guide, each rubric version), "
    f"which cases exercise it, and what a rule changes: {name.lower()} {first} against "
    f"{second}.",
    catalogue=cat, judge=judge, adr_base=adr_base,
    parameters={"catalogue": catalogue, "split": split, "dimension": dimension,
                "versions": versions, "dimensions": dimensions,
                "rubric_versions": rubric_versions, "ledger": ledger, "seed": seed,
                "explore": explore},
)

# %% [markdown]
# ## The rules
#
# A construct is a short list of rules with stable ids (ADR-0024). The labeling guide marks
# each rule it states; each rubric version states its own text for each rule under the same
# id. Per rule: whether the guide states it, which rubric versions do, and how many cases
# of each split and locale exercise it (the design files, which no judge or labeler sees).
# A rule with fewer calibration cases than the minimum cell size is descriptive only.

# %%
display(rp.adr_list(["adr-0024", "adr-0025", "adr-0028"], adr_base))
display(rp.rule_cases_chart(inventory, "Cases exercising each rule"))
rp.table(inventory, caption="Each rule: where it is stated, how many cases exercise it")

# %% [markdown]
# ## Do the guide and the rubrics in force state the same rules?
#
# `evalkit catalogue check` fails when a rubric in force lacks a rule its guide states, or
# states one the guide does not. This is how the faithfulness mismatch was named: the
# guide counts the locale's crisis and emergency numbers as supported, faithfulness v1
# counted every phone number the sources lack against the reply.

# %%
display(rp.callout("Rule parity",
                   rp.bullets([str(p) for p in parity.problems] or
                              ["every rubric in force states the rules its guide states, "
                               "and no other"] + list(parity.notes)),
                   kind="warning" if parity.problems else "pass"))

# %% [markdown]
# ## What changed between versions
#
# The rules added, removed and reworded from each predecessor to the rubric in force.

# %%
for dim, (old, new) in {"self_harm": ("v1", "v3"), "escalation": ("v1", "v2"),
                        dimension: tuple(versions)}.items():
    if (dim, old) in cat.rubrics and (dim, new) in cat.rubrics:
        diff = diff_rules(cat, dim, old, new)
        display(rp.table(diff.table, {"rule": "Rule", "change": "Change", "a": old, "b": new},
                         caption=f"{rp.dimension_name(dim)}: {old} to {new}"))

# %% [markdown]
# ## The same judge under each version
#
# The judge scores the same cases under both versions; the human labels do not move. Per
# rule, agreement on the cases that exercise it: the rule a version adds shows where the
# agreement moves.

# %%
rp.table(comparison["agreement"].assign(
             ci=[rp.interval(lo, hi) for lo, hi in zip(comparison["agreement"]["ci_low"],
                                                        comparison["agreement"]["ci_high"])]),
         {"version": "Rubric version", "kappa": "Cohen's kappa", "ci": "95% CI (Wald)",
          "n": "Pairs", "status": "Status"},
         caption=f"{name}: agreement with the human labels under each version")

# %%
for v in versions:
    display(rp.table(rule_tables[v], {"rule": "Rule", "n": "Pairs", "agreement": "Agreement",
                                      "kappa": "Cohen's κ", "status": "Status",
                                      "in_rubric": "In the rubric"},
                     caption=f"{name} {v}: agreement per rule",
                     formats={"agreement": rp.pct}))

# %%
rp.publish_headline(rp.construct_headline(comparison["agreement"], dimension))
