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
split: str = "calibration"  # split studied: mutation testing reads the calibration split only
dimensions: list[str] = ["self_harm", "escalation"]  # dimensions whose rules are mutated
rubric_versions: dict[str, str] = {}  # {dimension: rubric version} to mutate (empty: the rubrics in force)
judge: str = "baseline"  # judge spec: baseline (offline), recorded:NAME, replay[:JUDGE], anthropic:MODEL, openai:URL:MODEL
ledger: str = "ledgers/baseline.sqlite"  # judge ledger (SQLite), created if missing; replay reads it
all_cases: bool = False  # judge every gated case instead of the rule's cases and a control sample
explore: bool = False  # label the page exploratory, not gate evidence (ADR-0017)
seed: int = 0  # seed of the control sample, in [0, inf)
adr_base: str = "adr/"  # link prefix of the ADR pages cited by the page
# %%
from IPython.display import display

import evalkit.report as rp
from evalkit.catalogue import load
from evalkit.construct import mutate

rp.work_from_project_root()  # JupyterLab starts the kernel in notebooks/

cat = load(catalogue)
result = mutate(rp.gate_view(cat, rubric_versions), judge=judge, ledger=ledger,
                dimensions=dimensions, all_cases=all_cases, seed=seed)

# %%
rp.header(
    "Would this catalogue catch a missing rule?",
    "Rubric mutation testing: for each rule of the rubric in force, the same judge reads the "
    "rubric without that rule. If the catalogue cannot tell the two apart, it cannot defend "
    "the rule.",
    catalogue=cat, judge=judge, adr_base=adr_base,
    parameters={"catalogue": catalogue, "split": split, "dimensions": dimensions,
                "rubric_versions": rubric_versions, "all_cases": all_cases, "ledger": ledger,
                "seed": seed, "explore": explore},
)

# %% [markdown]
# ## The question
#
# The founding decision record is about a rubric that lacked one rule (the presence gate
# and its signal-absent anchor). Its confirmation pins the rule texts so that an edit that
# strips them fails a test; that protects the text, not the measurement. Mutation testing
# asks the measurement: remove one rule's text from the rubric in force (a *mutant*), have
# the same judge score the cases that exercise the rule (plus a seeded control sample),
# and see whether the gate, or agreement on the rule's own cases, notices.
#
# A mutant is **killed** when its kappa falls under the gate threshold while the rubric in
# force reaches it on the same cases, or when its agreement on the rule's cases falls with
# intervals that no longer overlap (ADR-0029). A **survivor** is a rule the catalogue
# cannot defend with this judge: add cases that exercise it. A rule no case exercises is
# **not exercised**.

# %%
display(rp.construct_caveat(judge))
display(rp.adr_list(["adr-0029", "adr-0024", "adr-0006"], adr_base))
display(result)

# %% [markdown]
# ## Each rule, in force and removed
#
# Agreement with the human consensus on the rule's own cases, under the rubric in force
# and under its mutant, with 95% Wilson intervals.

# %%
rp.mutation_chart(result.table, "Agreement on each rule's cases")

# %% [markdown]
# ## What each survivor means
#
# A surviving mutant is a finding about the catalogue, not about the rubric. Which of
# three it is shows in the answers themselves (ADR-0029):
#
# - **the judge knows the rule** (`judge_knows_rule`): not one answer on the rule's cases
#   changed when its text was removed. This judge applies the rule unaided; the rule is
#   safe with this judge, and only with it. The catalogue could defend the rule only with
#   cases that a reading without the rule gets wrong (its hard form).
# - **too few cases** (`too_few_cases`): answers changed and agreement fell, but within
#   chance on this many cases; the row says about how many would separate the intervals.
# - **no drop** (`no_drop`): answers changed, but agreement did not fall.

# %%
survivors = result.table[result.table["outcome"] != "killed"][
    ["dimension", "rule", "outcome", "rule_n", "rule_changed", "rule_agreement",
     "in_force_rule_agreement", "reason", "why"]]
rp.table(survivors, {"dimension": "Dimension", "rule": "Rule", "outcome": "Outcome",
                     "rule_n": "Rule's cases judged", "rule_changed": "Answers changed",
                     "rule_agreement": "Agreement (mutant)",
                     "in_force_rule_agreement": "Agreement (in force)", "reason": "Reason",
                     "why": "Why"},
         caption="Mutants not killed, and why", formats={"rule_agreement": rp.pct,
                                                         "in_force_rule_agreement": rp.pct},
         empty="Every exercised mutant was killed.")

# %%
# The headline the index page shows beside the link to this page (not displayed here).
rp.publish_headline(rp.mutation_headline(result))
