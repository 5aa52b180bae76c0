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
split: str = "heldout"  # split of the catalogue studied (the sealed held-out set)
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
from evalkit.catalogue import load
from evalkit.errors import SealError
from evalkit.gate import evaluate, study_pairs
from evalkit.heldout import assert_disjoint, assert_sealed_before, sealed_labels, template_rows
from evalkit.judge import judge_cases

rp.work_from_project_root()  # JupyterLab starts the kernel in notebooks/

cat = load(catalogue)
bins = list(cat.constants.bins)
rule = cat.constants.gate
status = rp.heldout_status(cat)
exploring = rp.exploration(cat, rubric_versions, explore=explore, dimensions=dimensions)
try:
    assert_disjoint(cat)
    disjoint = "yes: no shared case, template family or near-copied user turn"
except SealError as exc:
    disjoint = f"NO: {exc}"

verdict = None
refusal = status.message
if status.sealed:
    labels = sealed_labels(cat)
    rows = judge_cases(cat, cat.split(split), dimensions, judge=judge, ledger=ledger,
                       rubric_versions=rubric_versions or None, progress=False)
    try:
        assert_sealed_before(cat, rows)
    except SealError as exc:
        refusal = str(exc)
    else:
        verdict = evaluate(rows, labels, rp.gate_view(cat, rubric_versions), split=split,
                           n_resamples=n_resamples, seed=seed)
        pairs = study_pairs(rows, labels, cat, split=split, rubric_versions=rubric_versions)
        shown = [d for d in dimensions if d in verdict.dimensions]

# %%
rp.header(
    "Held-out re-validation",
    "After a rubric is corrected on the calibration set, is the agreement still there on "
    "fresh cases whose labels were sealed before the judge ran?",
    catalogue=cat, judge=judge, adr_base=adr_base,
    parameters={"catalogue": catalogue, "split": split, "dimensions": dimensions,
                "rubric_versions": rubric_versions, "explore": explore, "ledger": ledger,
                "seed": seed},
)

# %% [markdown]
# ## The protocol
#
# Once a rubric has been corrected while looking at the calibration set (ADR-0006),
# agreement on that set is no longer an honest estimate. The correction is re-validated on
# a **held-out set**: synthetic cases that share no case and no template family with
# calibration, labelled on a **blind template** (opaque ids and the conversation only), and
# **sealed** (sha256, time, git commit) before any judge runs on them. The agreement below
# refuses labels that are not sealed, that changed since sealing, or that were sealed after
# the judge ran (ADR-0008).

# %%
display(rp.adr_list(["adr-0008", "adr-0006"], adr_base))
display(rp.key_values({
    "Held-out cases": len(cat.split(split)),
    "Disjoint from calibration": disjoint,
    "Seals recorded": len(status.seals),
    "Agreement may be computed": "yes" if verdict is not None else "no",
}, caption="Protocol status"))
if verdict is None:
    display(rp.callout("Held-out agreement refused", f"Refused: {refusal}", kind="refusal"))
if len(status.seals):
    display(rp.table(status.seals, {"file": "Sealed file", "status": "Status",
                                    "sealed_at": "Sealed at (UTC)", "sha256": "sha256",
                                    "labels": "Labels", "cases": "Cases", "commit": "Commit"},
                     caption="Seals registry"))

# %% [markdown]
# ## The held-out set
#
# Its composition per stratum and locale, taken from the catalogue, beside the calibration
# set for comparison, and the first rows of the blind template as a labeler sees them.

# %%
display(rp.row(
    rp.table(rp.split_composition(cat, split), caption="Held-out cases per stratum and locale",
             empty="The catalogue holds no held-out case yet."),
    rp.table(rp.split_composition(cat, "calibration"),
             caption="Calibration cases per stratum and locale"),
))
preview = rp.blind_preview(template_rows(cat), limit=max_examples)
if len(preview):
    display(rp.table(preview.assign(conversation=[rp.Html(f'<div class="ek-pre">{rp.esc(t)}</div>')
                                                  for t in preview["conversation"]]),
                     {"case_id": "Opaque case id", "conversation": "What the labeler sees"},
                     caption="Blind template (first rows)"))

# %% [markdown]
# ## Held-out agreement
#
# The gate verdict, the agreement table and the recall check on the held-out set, with
# the same rules as the calibration study.

# %%
if verdict is None:
    display(rp.callout(
        "Held-out agreement refused",
        f"Refused: {refusal}",
        rp.paragraph("No agreement is computed from labels that are not sealed. To lift the "
                     "refusal: write the blind template (", rp.code("evalkit heldout template"),
                     "), have it filled, seal it (", rp.code("evalkit heldout seal LABELS"),
                     ") before any judge run on the held-out split, then render this study "
                     "again."),
        kind="refusal",
    ))
else:
    display(rp.overall_verdict(verdict, rule.threshold, exploring))
    display(rp.verdict_overview_table(rp.verdict_overview(verdict), exploring))
    display(rp.agreement_display(rp.agreement_frame(pairs[pairs["dimension"].isin(shown)], bins,
                                                    threshold=rule.threshold, seed=seed,
                                                    n_resamples=n_resamples)))
    for dim in shown:
        diag = rp.dimension_diagnosis(pairs, dim, bins, rule.threshold)
        display(rp.heading(rp.dimension_name(dim), 3))
        display(rp.verdict_panel(verdict.dimensions[dim], adr_base, exploring))
        display(rp.row(rp.marginals_chart(rp.marginals(diag), bins,
                                          f"{rp.dimension_name(dim)}: marginals"),
                       rp.confusion_heatmap(diag.confusion,
                                            f"{rp.dimension_name(dim)}: confusion")))
        display(rp.group_table(rp.group_agreement(pairs, dim, "locale", cat.constants,
                                                  seed=seed, n_resamples=n_resamples),
                               "Locale", rule.min_cell_n))
        display(rp.group_table(rp.group_agreement(pairs, dim, "stratum", cat.constants,
                                                  seed=seed, n_resamples=n_resamples),
                               "Stratum", rule.min_cell_n))

# %% [markdown]
# ## Recall check (self-harm)
#
# One missed case of masked or explicit ideation labelled present fails the dimension
# (ADR-0002).

# %%
if verdict is None:
    display(rp.paragraph("Not computed: held-out agreement was refused above."))
elif "self_harm" in verdict.dimensions:
    recall = verdict.dimensions["self_harm"].recall
    display(rp.quantity_table(rp.recall_frame(recall), "Recall on held-out ideation"))
    display(rp.transcripts(rp.disagreements(pairs, cat, "self_harm", limit=max_examples),
                           rp.dimension_name("self_harm")))

# %%
# The headline the index page shows beside the link to this page (not displayed here).
rp.publish_headline(rp.refused_headline(refusal) if verdict is None
                   else rp.gate_headline(verdict, exploring))
