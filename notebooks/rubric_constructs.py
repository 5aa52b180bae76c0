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
dimensions: list[str] = ["self_harm", "escalation"]  # dimensions judged: the one studied and its companion
judge: str = "baseline"  # judge spec: baseline (offline), replay[:JUDGE], anthropic:MODEL, openai:URL:MODEL
rubric_versions: dict[str, str] = {}  # {dimension: rubric version} to study (empty: the rubrics in force)
explore: bool = False  # label the page exploratory, not gate evidence (ADR-0017)
ledger: str = "ledgers/baseline.sqlite"  # judge ledger (SQLite), created if missing; replay reads it
seed: int = 0  # seed of bootstraps and simulations, in [0, inf)
adr_base: str = "adr/"  # link prefix of the ADR pages cited by the page
dimension: str = "self_harm"  # dimension whose rubric versions are compared
versions: list[str] = ["v1", "v3"]  # the two rubric versions compared, predecessor first, items in [2, 2]
companion: str = "escalation"  # dimension scored in the same call, the construct's comparison
max_examples: int = 3  # disagreement examples shown per dimension, in [0, 100]
# %%
from IPython.display import display

import evalkit.report as rp
from evalkit.catalogue import load
from evalkit.construct import compare_versions, same_call_view
from evalkit.judge import judge_cases

rp.work_from_project_root()  # JupyterLab starts the kernel in notebooks/

cat = load(catalogue)
bins = list(cat.constants.bins)
cases = cat.split(split)
scored = [dimension, *[d for d in dimensions if d != dimension]]
runs = {
    v: judge_cases(cat, cases, scored, judge=judge, ledger=ledger,
                   rubric_versions={**rubric_versions, dimension: v}, progress=False)
    for v in versions
}
first, second = versions
comparison = compare_versions(runs[first], runs[second], cat, dimension=dimension,
                              names=(first, second))
views = {v: same_call_view(runs[v], cat, dimensions=(dimension, companion)) for v in versions}
name = rp.dimension_name(dimension)

# %%
rp.header(
    f"Rubric constructs: {name.lower()} {first} against {second}",
    f"Is a disagreement the judge's fault, the labels' or the rubric's? The same cases are "
    f"scored under {name.lower()} rubric {first} and {second}, in the same call as "
    f"{rp.dimension_name(companion).lower()}.",
    catalogue=cat, judge=judge, adr_base=adr_base,
    parameters={"catalogue": catalogue, "split": split, "dimension": dimension,
                "versions": versions, "companion": companion, "rubric_versions": rubric_versions,
                "explore": explore, "ledger": ledger, "seed": seed},
)

# %% [markdown]
# ## The question
#
# The human self-harm label asks two things about the latest user turn: is there a
# self-harm signal, and if so, is it handled? **Rubric v1** asked the judge only how
# appropriate the reply was, with no "signal absent" anchor: on a benign turn, a warm reply
# can read as *high* to the judge and *low* to the humans. **Rubric v3**, in force, is
# *presence-gated* (ADR-0006) with the open rules settled (ADR-0010): no signal means
# *low*, however good the reply, even one that offers a crisis line anyway.
#
# The same call also scores medical escalation, whose rubric has an "emergency absent"
# anchor. If escalation scores benign turns *low* while self-harm v1 scores them *high*,
# the judge can map an absent signal to *low*: the fault is in the rubric text, not in the
# judge or the labels.

# %%
display(rp.construct_caveat(judge))
display(rp.adr_list(["adr-0006", "adr-0002"], adr_base))
display(rp.row(*[rp.rubric_card(cat.rubric(dimension, v), bins) for v in versions]))

# %% [markdown]
# ## Agreement with the humans under each version
#
# Cohen's kappa of the judge against the same human labels, under each rubric version.
# The labels do not move; only the rubric does. The pairs are the gate's (gated strata,
# final turn, latest answer): under the rubric in force this is the calibration page's
# kappa and `evalkit gate`'s.

# %%
rp.table(comparison["agreement"].assign(
             ci=[rp.interval(lo, hi) for lo, hi in zip(comparison["agreement"]["ci_low"],
                                                        comparison["agreement"]["ci_high"])]),
         {"version": "Rubric version", "kappa": "Cohen's kappa", "ci": "95% CI (Wald)",
          "n": "Pairs", "status": "Status", "n_left_out": "Cases left out"},
         caption=f"{name}: agreement with the human labels")

# %% [markdown]
# ## How the judge's answers moved
#
# The confusion between the two versions (rows: the bin under the first version, columns:
# under the second), the marginals before and after beside the humans', and, per stratum,
# the share of cases in each bin and how many moved down or up. These count every case
# both versions scored, diagnostic and canary cases included (they show how a rubric moves
# them), so their totals are larger than the pairs of the agreement table above.

# %%
marg = comparison["marginals"].reset_index()
display(rp.row(
    rp.confusion_heatmap(comparison["confusion"].rename_axis(index=None, columns=None),
                         f"{name}: {first} against {second}",
                         rows_title=f"Judge under {first}", columns_title=f"Judge under {second}"),
    rp.stacked_share_chart(rp.version_movement(comparison["cases"], versions), x="version",
                           color="bin", facet="stratum", bins=bins,
                           title=f"{name}: judge's bins per stratum", x_title="Rubric",
                           color_title="Judge's bin"),
))
display(rp.table(marg, {"bin": "Bin", first: f"Judge under {first}",
                        second: f"Judge under {second}", "human": "Human labels"},
                 caption="Marginals before and after"))
by_stratum = comparison["by_stratum"]
display(rp.table(by_stratum, {c: c.replace("_", " ").capitalize() if c not in ("n",) else "Cases"
                              for c in by_stratum.columns},
                 caption="Per stratum: share of cases in each bin under each version, and moves",
                 formats={c: rp.pct for c in by_stratum.columns
                          if c.startswith((*versions, "human"))}))

# %% [markdown]
# ## Where the constructs must disagree
#
# Per author design of the reply (from the catalogue's design metadata, which no judge or
# labeler sees). On the **over-recognition** rows the user's turn carries no self-harm
# signal and the reply offers a crisis line anyway: the humans label them *low*; a
# response-appropriateness rubric reads them as *high*, a presence-gated one must not.

# %%
by_design = comparison["by_design"]
if len(by_design):
    display(rp.table(by_design,
                     {c: c.replace("_", " ").capitalize() if c != "n" else "Cases"
                      for c in by_design.columns},
                     caption="Per reply design: share of cases in each bin under each version",
                     formats={c: rp.pct for c in by_design.columns
                              if c.startswith((*versions, "human"))}))

# %% [markdown]
# ## The same-call view
#
# Per stratum, on the turns scored in one call: how often the companion dimension answered
# *low*, how often self-harm answered *high* or *low*, and how often the humans labelled
# self-harm *low*. Under a construct failure, benign turns are low on escalation and high
# on self-harm; under the corrected rubric, both are low, like the humans' labels.

# %%
for v in versions:
    summary = rp.same_call_summary(views[v], dimension, companion, bins)
    display(rp.table(summary, {"stratum": "Stratum", "n": "Cases",
                               "companion_low": f"{rp.dimension_name(companion)}: judge low",
                               "dimension_high": f"{name}: judge high",
                               "dimension_low": f"{name}: judge low",
                               "human_low": f"{name}: human low",
                               "same_call": "Scored in one call"},
                     caption=f"Rubric {v}", formats={c: rp.pct for c in summary.columns
                                                      if c not in ("stratum", "n")}))

# %% [markdown]
# ## Benign turns, side by side
#
# The benign cases with each dimension's bin under each version and the human labels.

# %%
benign = views[first][views[first]["stratum"] == "benign"][
    ["case_id", "locale", f"{dimension}_judge", f"{companion}_judge", f"{dimension}_human",
     f"{companion}_human"]].merge(
    views[second][["case_id", f"{dimension}_judge"]].rename(
        columns={f"{dimension}_judge": "second"}), on="case_id", how="left")
rp.table(benign.head(24), {"case_id": "Case", "locale": "Locale",
                           f"{dimension}_judge": f"{name} ({first})",
                           "second": f"{name} ({second})",
                           f"{companion}_judge": rp.dimension_name(companion),
                           f"{dimension}_human": f"{name}: human",
                           f"{companion}_human": f"{rp.dimension_name(companion)}: human"},
         caption="Benign cases (first 24)", empty="No benign case in this catalogue.")

# %% [markdown]
# ## Conversations that moved
#
# A few cases whose self-harm bin changed between the versions (benign ones first), shown
# as written; the scored reply is outlined.

# %%
rp.transcripts(rp.construct_examples(comparison["cases"], cat, versions, limit=max_examples),
               name)

# %%
# The headline the index page shows beside the link to this page (not displayed here).
rp.publish_headline(rp.construct_headline(comparison["agreement"], dimension))
