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
# Parameters (papermill replaces this cell). Keys never go here: the judge and model
# targets read them from the environment.
catalogue: str = "catalogues"  # catalogue folder (relative paths: from the working directory)
split: str = "calibration"  # split of the catalogue studied: calibration or heldout
dimensions: list[str] = ["self_harm", "escalation"]  # dimensions judged: the one studied and its companion
judge: str = "baseline"  # judge spec: baseline (offline), replay[:JUDGE], anthropic:MODEL, openai:URL:MODEL
rubric_versions: dict[str, str] = {}  # {dimension: rubric version} to study (empty: the rubrics in force)
explore: bool = False  # label the page exploratory, not gate evidence (ADR-0017)
ledger: str = "ledgers/baseline.sqlite"  # judge ledger (SQLite), created if missing; replay reads it
seed: int = 0  # seed of bootstraps and simulations, in [0, inf)
adr_base: str = "adr/"  # link prefix of the ADR pages cited by the page
dimension: str = "self_harm"  # dimension whose onset (first recognised turn) is studied
target: str = "replay"  # conversation target: replay (the catalogue's replies) or a model spec
horizon: int = 5  # last reply (turn) the onset curves follow, in [1, 100]
n_boot: int = 1000  # bootstrap resamples of the curves' intervals, in [1, 100000]
max_cases: int = 60  # lanes of the swimmer plot (the page says how many of how many), in [1, 10000]
# %%
from pathlib import Path

from IPython.display import display

import evalkit.report as rp
from evalkit.catalogue import load
from evalkit.judge import judge_cases
from evalkit.onset import (
    describe_censoring,
    followup_note,
    incidence_chart,
    latency_histogram,
    onset_study,
    per_turn_events,
    swimmer_caption,
    swimmer_plot,
)
from evalkit.runner import run_conversations, transcript_cases

rp.work_from_project_root()  # JupyterLab starts the kernel in notebooks/

cat = load(catalogue)
cases = cat.split(split)
# Conversations are stored beside the ledger (SQLite, like the ledger, so not committed).
transcripts = str(Path(ledger).with_suffix(".transcripts.sqlite"))
records = run_conversations(cases, target, store=transcripts)
conversations = transcript_cases(cases, records)
judged_dims = [dimension, *[d for d in dimensions if d != dimension]]
if "escalation" not in judged_dims:
    judged_dims.append("escalation")
judged = judge_cases(cat, conversations, judged_dims, judge=judge, ledger=ledger,
                     rubric_versions=rubric_versions or None, turns="all", progress=False)
per_turn = per_turn_events(judged, conversations, cat.resources, cat.constants.bins)
study = onset_study(per_turn, horizon=horizon, n_boot=n_boot, seed=seed)

# %%
rp.header(
    "Onset turns: when does the agent recognise a risk?",
    "A self-harm signal can surface in the middle of a conversation. After the turn where it "
    "first appears, how many agent replies pass before the agent acknowledges it and routes "
    "the person to their own country's crisis line?",
    catalogue=cat, judge=judge, adr_base=adr_base,
    parameters={"catalogue": catalogue, "split": split, "target": target,
                "dimensions": judged_dims, "ledger": ledger, "transcripts": transcripts,
                "horizon": horizon, "seed": seed, "max_cases": max_cases},
)

# %% [markdown]
# ## How to read this study
#
# Every agent reply of every conversation is judged on the conversation up to that reply.
# For each case with an **onset** (the first user turn carrying a masked or explicit
# self-harm signal), three events are tracked in the agent's replies after the onset:
#
# - **signal seen**: the judge finds a self-harm signal in the latest user turn;
# - **acknowledged**: the reply's self-harm bin is above *low*;
# - **routed**: the reply gives the crisis-line number of the person's own locale (checked
#   by evalkit against the locale table, not by the judge).
#
# The **latency** is the number of agent replies from the onset to the first event (0: the
# very reply to the disclosure). A conversation that ends before the event is *censored*:
# "not within the conversation", not "never". Each Kaplan–Meier curve below is drawn and
# tabulated beside the plain **observed share** of cases with the event, and beside its
# censoring counts; the judge here is the one named above.

# %% [markdown]
# ## Summary

# %%
display(rp.table(study.summary,
                 {"event": "Event", "n_cases": "Cases with an onset", "n_events": "Events seen",
                  "share_censored": "Censored (not within the conversation)",
                  "km_median_latency": "Median latency (KM estimate, replies)",
                  "median_latency_among_events": "Median latency among events",
                  "n_no_followup": "No reply after onset"},
                 caption="Per event", formats={"share_censored": rp.pct}))
if study.notes:
    display(rp.callout("Notes", rp.bullets(study.notes), kind="warning"))

# %% [markdown]
# ## Cumulative incidence after the onset
#
# Two lines per event. The **solid** line is the Kaplan–Meier estimate: among the
# conversations that continue, the estimated probability that the event has happened within
# *t* agent replies. A conversation that ends without the event is censored: it leaves the
# estimate after its last reply, and every later step is computed from the conversations
# still going. The **dashed** line is the observed share: the cases in which the event was
# seen within *t* replies, out of every case with a reply to the onset. It extrapolates
# nothing, so it is a floor: an event the agent would have made after its conversation
# ended is not counted.
#
# At reply 0 the two lines agree. Past it, the solid line assumes that the conversations
# that ended would have gone on like the ones that continued. When many conversations are
# censored at reply 0 (they end with the onset reply), it extrapolates from the few that
# continue and can climb towards 1 on a handful of cases: it is then **not** the share of
# cases acknowledged or routed, and a steep rise of it does not show a safe agent. The
# censoring of each curve is stated beside it; read the curve together with it and with
# the dashed line.

# %%
note = followup_note(study.followup)
if note:
    display(rp.callout("What these conversations can show", note, kind="warning"))
if len(study.followup):
    display(rp.table(study.followup, {
        "replies_after_onset": "Replies after the onset reply", "n_cases": "Conversations",
        "share": "Share"}, formats={"share": rp.pct},
        caption="Length of each conversation after the reply to the onset (whatever the "
                "events)"))
overall = study.curves("all")
if len(overall):
    display(rp.chart(
        incidence_chart(overall),
        "Each event against agent replies since onset: Kaplan–Meier estimate (solid, 95% "
        "band) and observed share (dashed). Censoring: "
        + " ".join(describe_censoring(study.censored("all")))))
    display(rp.table(study.censored("all"), {
        "event": "Event", "n_cases": "Cases with a reply to the onset",
        "n_events": "Event observed", "observed_share": "Observed share",
        "n_censored": "Censored", "n_censored_at_0": "Censored at reply 0 (ends with it)",
        "n_risk_at_1": "Still followed at reply 1", "max_followup": "Longest follow-up"},
        formats={"observed_share": rp.pct},
        caption="Censoring of each curve: the KM steps after reply 0 rest on the cases "
                "still followed at reply 1"))
    display(rp.table(study.curves("all", followed_only=True), {
        "event": "Event", "turns_since_onset": "Within t replies",
        "incidence": "KM estimate", "ci_low": "95% CI low", "ci_high": "95% CI high",
        "n_risk": "Cases at risk at t (KM)", "observed_share": "Observed share",
        "n_observed": "Event observed by t", "n_cases": "Cases",
        "n_censored_before": "Censored before t (outcome unknown)"},
        formats={"observed_share": rp.pct},
        caption="Kaplan–Meier estimate beside the observed share, up to the longest "
                "follow-up (past it nothing is observed and the KM value is only carried "
                "flat)"))
else:
    display(rp.paragraph("No case of this split has an onset: there is no curve to draw."))

# %% [markdown]
# ## By stratum, locale and onset position
#
# The same curves per group (solid: Kaplan–Meier, dashed: observed share), with 95%
# intervals from a bootstrap that resamples whole template families. The table under each
# chart gives the censoring of every curve in it.

# %%
for by in ("stratum", "locale", "onset_position"):
    part = study.curves(by)
    if part.empty:
        continue
    display(rp.heading(f"By {by.replace('_', ' ')}", 3))
    display(rp.chart(incidence_chart(part, band="boot"),
                     f"Each event by {by.replace('_', ' ')}: Kaplan–Meier estimate (solid, 95% "
                     "cluster bootstrap by template family) and observed share (dashed); "
                     "censoring in the table below"))
    display(rp.table(study.censored(by), {
        "event": "Event", "group": by.replace("_", " ").capitalize(),
        "n_cases": "Cases", "n_events": "Event observed", "observed_share": "Observed share",
        "n_censored": "Censored", "n_censored_at_0": "Censored at reply 0",
        "n_risk_at_1": "Still followed at reply 1", "max_followup": "Longest follow-up"},
        formats={"observed_share": rp.pct},
        caption=f"Censoring of each curve by {by.replace('_', ' ')}"))

# %% [markdown]
# ## Restricted mean time to the event
#
# The mean number of replies without the event, out of the first few after the onset,
# computed from the Kaplan–Meier curve: where the longest follow-up is shorter than the
# horizon, it carries the curve flat past it (marked "extrapolated").

# %%
if len(study.rmst):
    display(rp.table(study.rmst, rp.readable(study.rmst, {
        "horizon": "Up to (replies)", "rmst": "Mean time to event (replies)",
        "ci_low": "95% CI low", "ci_high": "95% CI high", "n_cases": "Cases",
        "max_followup": "Longest follow-up", "extrapolated": "Extrapolated"}),
        caption=f"Restricted mean time to event (up to {horizon} replies; lower is earlier)"))

# %% [markdown]
# ## Swimmer plot
#
# One lane per case with an onset: user turns coloured by their annotated signal level,
# agent replies as white cells with a marker for each event, a black frame at the onset.
# The number of lanes is capped by the notebook parameter `max_cases`; the caption says
# how many cases are shown.

# %%
display(rp.figure(swimmer_plot(per_turn, max_cases=max_cases),
                  f"Swimmer plot, {swimmer_caption(per_turn, max_cases)}: markers show when "
                  "the judge saw the signal, when the reply acknowledged it and when it routed "
                  "to the crisis line"))

# %% [markdown]
# ## Latency

# %%
for event in ("acknowledged", "routed"):
    if event in study.time_to_event:
        display(rp.figure(latency_histogram(study.time_to_event[event],
                                            title=f"Latency to {event.replace('_', ' ')}"),
                          f"Cases by latency to {event} (agent replies after onset); the last "
                          "bar counts cases where it did not happen within the conversation"))

# %% [markdown]
# ## False alarms and persistence
#
# Turns before any onset on which the judge already saw a signal (false alarms), and
# whether an acknowledgement, once made, persists in the following replies.

# %%
if len(study.false_alarms):
    display(rp.table(study.false_alarms, rp.readable(study.false_alarms),
                     caption="False alarms before the onset"))
if len(study.persistence):
    display(rp.table(study.persistence, rp.readable(study.persistence),
                     caption="Persistence after the first acknowledgement"))
if len(study.early_risk):
    display(rp.table(study.early_risk, rp.readable(study.early_risk),
                     caption="Early-risk scores (ERDE and latency-weighted F)"))

# %%
# The headline the index page shows beside the link to this page (not displayed here).
rp.publish_headline(rp.onset_headline(study.summary))
