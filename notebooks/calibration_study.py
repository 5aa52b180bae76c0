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
dimensions: list[str] = ["self_harm", "escalation", "faithfulness"]  # dimensions to judge and show (default: the gated ones)
judge: str = "baseline"  # judge spec: baseline (offline), replay[:JUDGE], anthropic:MODEL, openai:URL:MODEL
rubric_versions: dict[str, str] = {}  # {dimension: rubric version} to study (empty: the rubrics in force)
explore: bool = False  # label the page exploratory, not gate evidence (ADR-0017)
ledger: str = "ledgers/baseline.sqlite"  # judge ledger (SQLite), created if missing; replay reads it
seed: int = 0  # seed of bootstraps and simulations, in [0, inf)
adr_base: str = "adr/"  # link prefix of the ADR pages cited by the page
n_resamples: int = 2000  # bootstrap resamples of each kappa interval, in [1, 100000]
max_examples: int = 3  # disagreement examples shown per dimension, in [0, 100]
# %%
from IPython.display import display

import evalkit.report as rp
from evalkit.catalogue import audit, load
from evalkit.gate import evaluate, label_history, study_pairs
from evalkit.judge import judge_cases

rp.work_from_project_root()  # JupyterLab starts the kernel in notebooks/

cat = load(catalogue)
bins = list(cat.constants.bins)
rule = cat.constants.gate
rows = judge_cases(cat, cat.split(split), dimensions, judge=judge, ledger=ledger,
                   rubric_versions=rubric_versions or None, progress=False)
# An exploratory run (ADR-0017) is gated against the rubrics it asked for, so that the
# verdict and the agreement table describe the same pairs; it never reads as gate evidence.
exploring = rp.exploration(cat, rubric_versions, explore=explore, dimensions=dimensions)
verdict = evaluate(rows, cat.labels, rp.gate_view(cat, rubric_versions), split=split,
                   n_resamples=n_resamples, seed=seed, label_history=label_history(cat))
pairs = study_pairs(rows, cat.labels, cat, split=split, rubric_versions=rubric_versions)
shown = [d for d in dimensions if d in verdict.dimensions]

# %%
rp.header(
    "Calibration study",
    "Does the judge put each reply in the same bin as the human labels? The gate lets a "
    "judge gate a launch only if it does, dimension by dimension.",
    catalogue=cat, judge=judge, adr_base=adr_base,
    parameters={"catalogue": catalogue, "split": split, "dimensions": dimensions,
                "rubric_versions": rubric_versions, "explore": explore, "ledger": ledger,
                "seed": seed},
)

# %% [markdown]
# ## How to read this study
#
# Every case is a short conversation with a health chat agent. A human labeler and the
# judge each put the agent's final reply in one of three ordered bins, **low**, **partial** or
# **high**, on each dimension: *self-harm* (is a self-harm signal recognised and routed to
# the right crisis line?), *medical escalation* (is an emergency escalated with the right
# urgency?) and *faithfulness* (does the reply rest on its sources?). The human labels are
# the consensus of several blind labelers who saw only the conversation and the labeling
# guide (ADR-0012); the section "Who labelled" below says who they are and how well they
# agree with each other.
#
# Agreement is measured with **Cohen's kappa**: the share of cases where judge and human
# agree, corrected for the agreement expected by chance. A dimension passes when kappa
# reaches the frozen threshold **and** no hard fail applies (a column stuck in one bin,
# a missed case of ideation, unusable answers…). Each reason below links to the decision
# record (ADR) that set the rule.

# %% [markdown]
# ## The verdict

# %%
display(rp.overall_verdict(verdict, rule.threshold, exploring))
rp.verdict_overview_table(rp.verdict_overview(verdict), exploring)

# %% [markdown]
# ## Who labelled, and how well the labelers agree
#
# Each label set is one labeler's, made blind (ADR-0012). The gate reads their consensus.
# Labeler-labeler agreement bounds what any judge can be shown to reach: a judge cannot be
# shown to agree with the humans better than they agree with each other.

# %%
display(rp.labelers_panel(cat))

# %% [markdown]
# ## Can this catalogue be passed without reading the turn?
#
# A catalogue is a measuring instrument. Before any kappa below is read, the audit asks
# what shortcuts reach against the same labels: a classifier that reads only the agent's
# reply, one that reads only the user's side, surface features of the text, a fixed rule
# on phone numbers (ADR-0011). If one reaches the frozen audit ceiling, the catalogue
# measures its own writing and no judge's kappa on it means anything.

# %%
catalogue_audit = audit(cat, split=split, baseline=rp.reference_bins(rows, judge))
display(rp.audit_panel(catalogue_audit))

# %% [markdown]
# ## Agreement
#
# Beside kappa: its 95% interval (Wald, and a bootstrap that resamples whole template
# families), raw agreement *p_o* and chance agreement *p_e*, the largest kappa the two
# marginals allow, and three coefficients that react differently to skewed bins (Gwet's
# AC1, PABAK, Krippendorff's alpha). They explain a kappa; they never replace it.

# %%
rp.agreement_display(rp.agreement_frame(pairs[pairs["dimension"].isin(shown)], bins,
                                        threshold=rule.threshold, seed=seed,
                                        n_resamples=n_resamples))

# %% [markdown]
# ## Each dimension
#
# For each dimension: the verdict and its reasons, how often each rater used each bin
# (the *marginals*), the confusion matrix (rows: the judge's answer, columns: the human
# label; the diagonal is agreement), and the kappa-paradox diagnostics. A low kappa has two
# causes: real disagreement (low *p_o*), or a corpus where one bin dominates so that chance
# agreement is high (the *kappa paradox*). When the maximum attainable kappa is below the
# threshold, no judge could pass: the corpus is rebalanced, never the constants (ADR-0004).

# %%
diagnoses = {}
for dim in shown:
    v = verdict.dimensions[dim]
    diag = rp.dimension_diagnosis(pairs, dim, bins, rule.threshold)
    diagnoses[dim] = diag
    display(rp.heading(rp.dimension_name(dim), 3, anchor=f"dim-{dim}"))
    display(rp.verdict_panel(v, adr_base, exploring))
    display(rp.human_evidence_panel(v))
    ceiling = rp.ceiling_frame(v)
    if len(ceiling):
        display(rp.ceiling_chart(ceiling, rule.threshold,
                                 f"{rp.dimension_name(dim)}: the judge among the labelers"))
    margins = rp.marginals(diag)
    display(rp.row(rp.marginals_chart(margins, bins, f"{rp.dimension_name(dim)}: marginals"),
                   rp.confusion_heatmap(diag.confusion, f"{rp.dimension_name(dim)}: confusion")))
    display(rp.marginals_table(margins))
    display(rp.quantity_table(rp.paradox_summary(diag), "Kappa-paradox diagnostics"))
    display(rp.table(rp.per_bin_diagnostics(diag),
                     {"bin": "Bin", "specific_agreement": "Specific agreement",
                      "prevalence_index": "Prevalence index", "bias_index": "Bias index"},
                     caption="Per bin (each bin against the other two)"))
    flags = rp.flags_text(diag)
    if flags:
        display(rp.callout("Diagnostic flags", rp.bullets(flags), kind="warning"))
    advice = rp.advice_frame(v)
    if len(advice):
        display(rp.table(advice, {"bin": "Bin", "locale": "Locale", "add": "Cases to add",
                                  "human_labels_now": "Human labels in that bin now"},
                         caption="Rebalancing advice (ADR-0004): the fewest cases to add so "
                                 "that the maximum attainable kappa clears the threshold"))
    apart = rp.apart_frame(v, bins)
    if len(apart):
        display(rp.apart_table(apart, bins))

# %% [markdown]
# ## Per locale and per stratum
#
# The same agreement, cut by the locale of the conversation (en-US, en-GB, es-ES) and by
# its stratum (what kind of case it is). Cells with fewer pairs than the frozen minimum
# cell size are **descriptive**: they show where to look, they do not decide anything.
# Diagnostic and injection-canary strata never enter the gate.

# %%
for dim in shown:
    display(rp.heading(rp.dimension_name(dim), 3))
    by_locale = rp.group_agreement(pairs, dim, "locale", cat.constants, seed=seed,
                                   n_resamples=n_resamples)
    by_stratum = rp.group_agreement(pairs, dim, "stratum", cat.constants, seed=seed,
                                    n_resamples=n_resamples)
    display(rp.row(rp.group_kappa_chart(by_locale, "Locale", rule.threshold,
                                        f"{rp.dimension_name(dim)} by locale"),
                   rp.group_kappa_chart(by_stratum, "Stratum", rule.threshold,
                                        f"{rp.dimension_name(dim)} by stratum")))
    display(rp.group_table(by_locale, "Locale", rule.min_cell_n))
    display(rp.group_table(by_stratum, "Stratum", rule.min_cell_n))

# %% [markdown]
# ## Which rule a disagreement breaks
#
# A construct is a short list of rules (the presence gate, the recall clause, look-back,
# risk about another person, ...) stated in the labeling guide and in the rubric under the
# same ids (ADR-0024). The design files say which cases exercise each rule. Per rule:
# how the judge does on those cases, where it disagrees with the humans, and how the
# labelers agree with each other there. A rule with low agreement tells a researcher
# where to look: the rubric's text for it, the judge, or the cases. None of this moves the
# verdict.

# %%
for dim in shown:
    panel = rp.rules_panel(verdict.dimensions[dim], pairs, cat)
    if panel is not None:
        display(rp.heading(rp.dimension_name(dim), 3))
        display(panel)

# %% [markdown]
# ## Where the judge departs from the humans
#
# Beside the agreement: which way the judge errs on the gated pairs (over- or
# under-scoring on the ordered bins, with a sign test), whether it errs more, or more one
# way, on replies longer than the median (a length-bias probe with intervals), and in
# which locale and stratum. Small cells are descriptive, as above.

# %%
for dim in shown:
    display(rp.heading(rp.dimension_name(dim), 3))
    display(rp.error_structure_panel(rp.error_structure(pairs, cat, dim)))

# %% [markdown]
# ## Recall check (self-harm)
#
# Kappa can be high while the judge misses a person at risk. On every case of masked or
# explicit ideation that the humans labelled *partial* or *high*, a judge answer of *low*
# (or a judge saying the signal is absent) is a false negative, and **one false negative
# fails the dimension** whatever kappa says (ADR-0002). With no miss, the 95% upper bound of
# the miss rate (about 3/n, the rule of three) says how much a clean result is worth.

# %%
if "self_harm" in shown:
    recall = verdict.dimensions["self_harm"].recall
    display(rp.quantity_table(rp.recall_frame(recall), "Recall on ideation labelled present"))
    missed = (recall or {}).get("false_negative_cases", [])
    if missed:
        display(rp.paragraph(f"Missed cases ({len(missed)}): ", ", ".join(missed[:40]),
                             " …" if len(missed) > 40 else ""))
    display(rp.adr_list(["adr-0002"], adr_base))
else:
    display(rp.paragraph("Self-harm is not among the dimensions of this run."))

# %% [markdown]
# ## Sample size and power
#
# How many labelled pairs does the gate need? The table gives the pairs needed for a 95%
# interval of a given half width around the threshold, with the human marginals of this
# corpus. The chart simulates studies of the current size: for a judge whose true kappa is
# on the x axis, how often would it pass, by the point estimate (the gate's rule) and by
# the stricter rule that the interval's lower bound clears the threshold?

# %%
for dim in shown:
    panel = rp.power_panel(diagnoses[dim], threshold=rule.threshold, seed=seed)
    display(rp.heading(rp.dimension_name(dim), 3))
    display(rp.table(panel.sizes, {"kappa": "Kappa", "half_width": "Interval half width",
                                   "pairs_needed": "Pairs needed", "pairs_now": "Pairs now"},
                     caption="Pairs needed for a 95% interval of ± half width",
                     formats={"kappa": lambda v: f"{v:.2f}", "half_width": lambda v: f"± {v:.2f}"}))
    if len(panel.curve):
        display(rp.power_chart(panel.curve, rule.threshold, panel.n,
                               f"{rp.dimension_name(dim)}: chance of passing with {panel.n} pairs"))
    if panel.note:
        display(rp.paragraph(panel.note, css="ek-table-note"))

# %% [markdown]
# ## Where judge and human disagree
#
# A few conversations where the judge's bin is farthest from the human label, shown as
# written (the scored reply is outlined). They make the numbers above concrete.

# %%
for dim in shown:
    display(rp.heading(rp.dimension_name(dim), 3))
    display(rp.transcripts(rp.disagreements(pairs, cat, dim, limit=max_examples),
                           rp.dimension_name(dim)))

# %%
# The headline the index page shows beside the link to this page (not displayed here).
rp.publish_headline(rp.gate_headline(verdict, exploring))
