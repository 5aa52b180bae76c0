"""Observed shares, censoring counts and follow-up beside the KM curve, computed by hand."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from evalkit.onset import (
    censoring,
    cumulative_incidence,
    describe_censoring,
    followup_lengths,
    followup_note,
    incidence_chart,
    incidence_plot,
    observed_within,
    onset_study,
    swimmer_caption,
    swimmer_plot,
    time_to_event,
)
from tests.onset._known import frame


def _tte(latency: list[float], censored: list[bool], **cols: list[object]) -> pd.DataFrame:
    return pd.DataFrame(
        {"case_id": [f"k{i}" for i in range(len(latency))], "latency": latency,
         "censored": censored, **cols}
    )  # fmt: skip


def test_observed_share_of_the_known_frame_by_hand() -> None:
    # Latencies (event?) from tests/onset/_known.py, event "routed", seven cases at risk:
    #   c1 0 E | c2 1 E | c3 3 C | c4 1 E | c5 0 C | c7 2 E | c8 0 E; longest follow-up 3.
    #   k  events <= k       share   censored before k   KM (test_time_to_event)
    #   0  c1 c8       = 2   2/7     0                   2/7
    #   1  + c2 c4     = 4   4/7     1 (c5 at 0)          9/14
    #   2  + c7        = 5   5/7     1                   23/28
    #   3  (none)      = 5   5/7     1 (c3 is censored AT 3, not before)   23/28
    tte = time_to_event(frame())
    obs = observed_within(tte)
    assert obs["within"].tolist() == [0, 1, 2, 3]
    assert obs["n_cases"].tolist() == [7] * 4
    assert obs["n_observed"].tolist() == [2, 4, 5, 5]
    np.testing.assert_allclose(obs["observed_share"], [2 / 7, 4 / 7, 5 / 7, 5 / 7])
    assert obs["n_censored_before"].tolist() == [0, 1, 1, 1]
    assert set(obs["by"]) == {"all"} and set(obs["group"]) == {"all"}
    km = cumulative_incidence(tte, horizon=3)["incidence"].to_numpy()
    assert obs.loc[0, "observed_share"] == pytest.approx(km[0])  # nobody has left at 0
    assert (obs["observed_share"].to_numpy() <= km + 1e-12).all()
    assert observed_within(tte, 1)["within"].tolist() == [0, 1]  # horizon caps the rows
    # Censoring of the curve: 2 censored (c3, c5), c5 at 0; at risk at 1: c2 c3 c4 c7.
    row = censoring(tte).iloc[0]
    assert (row["n_cases"], row["n_events"], row["n_censored"]) == (7, 5, 2)
    assert (row["n_censored_at_0"], row["n_risk_at_1"], row["max_followup"]) == (1, 4, 3)
    assert row["observed_share"] == pytest.approx(5 / 7)
    assert row["share_censored"] == pytest.approx(2 / 7)


def test_all_censored_at_zero() -> None:
    # Three conversations end with the onset reply, none with the event: one row, k = 0,
    # share 0/3; the KM curve is 0 too, with nothing after reply 0 to rest on.
    tte = _tte([0.0, 0.0, 0.0], [True, True, True])
    obs = observed_within(tte, 5)
    assert obs["within"].tolist() == [0]
    assert obs.loc[0, "observed_share"] == 0.0 and obs.loc[0, "n_censored_before"] == 0
    row = censoring(tte).iloc[0]
    assert (row["n_censored"], row["n_censored_at_0"], row["n_risk_at_1"]) == (3, 3, 0)
    assert row["share_censored"] == 1.0 and row["observed_share"] == 0.0


def test_no_censoring_equals_the_km_curve() -> None:
    # Events at 0, 1, 1, 2 and no censoring: shares 1/4, 3/4, 4/4, which is also KM
    # (without censoring KM is the empirical distribution function).
    tte = _tte([0.0, 1.0, 1.0, 2.0], [False] * 4)
    obs = observed_within(tte)
    np.testing.assert_allclose(obs["observed_share"], [0.25, 0.75, 1.0])
    np.testing.assert_allclose(
        obs["observed_share"], cumulative_incidence(tte, horizon=2)["incidence"]
    )
    assert obs["n_censored_before"].tolist() == [0, 0, 0]
    row = censoring(tte).iloc[0]
    assert (row["n_censored"], row["n_censored_at_0"], row["n_risk_at_1"]) == (0, 0, 3)


def test_heavy_censoring_at_zero_km_reaches_one_observed_does_not() -> None:
    # The shape of issue 14: 10 cases; 1 routed at 0, 8 end with the onset reply (censored
    # at 0), 1 continues and is routed at 1. KM: S(0) = 1 - 1/10 = 0.9; at 1 the risk set
    # is that one case and it has the event, S(1) = 0.9 * (1 - 1/1) = 0 -> incidence 1.0.
    # Observed within 1: 2 of 10 = 0.2; 8 outcomes unknown.
    tte = _tte([0.0] + [0.0] * 8 + [1.0], [False] + [True] * 8 + [False])
    assert cumulative_incidence(tte, horizon=1)["incidence"].tolist() == pytest.approx([0.1, 1.0])
    obs = observed_within(tte)
    np.testing.assert_allclose(obs["observed_share"], [0.1, 0.2])
    assert obs["n_censored_before"].tolist() == [0, 8]
    cen = censoring(tte).assign(event="routed")
    assert describe_censoring(cen) == [
        "routed: observed in 2 of 10 cases (20.0%); 8 censored, 8 of them at reply 0 "
        "(the conversation ends with the onset reply); 1 still followed at reply 1."
    ]


def _onset_frame() -> pd.DataFrame:
    # case onset agent turns  routed at   at-risk turns   latency  follow-up after reply 0
    # a    2     1 3          3           3               0 (E)    0
    # b    0     1 3 5        1           1 3 5           0 (E)    2
    # c    4     1 3 5        1 (alarm)   5               0 (C)    0
    # d    -     1            -           (no onset: left out)
    rows = [("a", 1, 2, False), ("a", 3, 2, True), ("b", 1, 0, True), ("b", 3, 0, False),
            ("b", 5, 0, False), ("c", 1, 4, True), ("c", 3, 4, False), ("c", 5, 4, False),
            ("d", 1, None, False)]  # fmt: skip
    df = pd.DataFrame(rows, columns=["case_id", "turn", "onset_turn", "routed"])
    df["onset_turn"] = df["onset_turn"].astype("Int64")
    return df


def test_an_event_at_onset_counts_at_zero_and_follow_up_is_event_blind() -> None:
    tte = time_to_event(_onset_frame())
    obs = observed_within(tte)
    # Longest latency is 0 (b's event at 0 hides its later replies): one row, a and b.
    assert obs["within"].tolist() == [0]
    assert obs.loc[0, "n_observed"] == 2 and obs.loc[0, "n_cases"] == 3
    assert obs.loc[0, "observed_share"] == pytest.approx(2 / 3)
    row = censoring(tte).iloc[0]
    assert (row["n_events"], row["n_censored_at_0"], row["n_risk_at_1"]) == (2, 1, 0)
    fu = followup_lengths(_onset_frame())
    assert fu["replies_after_onset"].tolist() == [0, 1, 2]
    assert fu["n_cases"].tolist() == [2, 0, 1]  # a and c end with the onset reply
    np.testing.assert_allclose(fu["share"], [2 / 3, 0.0, 1 / 3])
    note = followup_note(fu)
    assert note is not None
    assert note.startswith("2 of 3 conversations (67%) end with the agent's reply")
    assert "SimulatedUser" in note and "run_conversations" in note
    assert "has 2 replies after" in note


def test_followup_note_only_when_a_conversation_ends_at_the_onset_reply() -> None:
    df = _onset_frame()
    longer = df[df["case_id"] == "b"]
    assert followup_note(followup_lengths(longer)) is None
    no_onset = df[df["case_id"] == "d"]
    assert followup_lengths(no_onset).empty and followup_note(followup_lengths(no_onset)) is None


def test_groups_missing_follow_up_and_bad_input() -> None:
    # g1: events at 0 and 2; g2: one case without any reply after the onset (NaN latency).
    tte = _tte([0.0, 2.0, np.nan], [False, False, True], arm=["g1", "g1", "g2"])
    obs = observed_within(tte, by="arm")
    assert set(obs["group"]) == {"g1"}  # g2 has no usable case: no row
    assert obs["n_observed"].tolist() == [1, 1, 2] and set(obs["by"]) == {"arm"}
    cen = censoring(tte, by="arm").set_index("group")
    assert cen.loc["g1", "n_cases"] == 2 and cen.loc["g1", "n_no_followup"] == 0
    assert cen.loc["g2", "n_cases"] == 0 and cen.loc["g2", "n_no_followup"] == 1
    assert np.isnan(cen.loc["g2", "observed_share"]) and pd.isna(cen.loc["g2", "max_followup"])
    assert describe_censoring(cen.reset_index().iloc[[1]]) == [
        "g2: no case with a reply to the onset."
    ]
    assert censoring(tte).iloc[0]["n_cases"] == 2  # overall, the NaN case is left out
    with pytest.raises(ValueError, match="horizon"):
        observed_within(tte, -1)
    with pytest.raises(ValueError, match="no column"):
        censoring(tte, by="nope")
    with pytest.raises(ValueError, match="missing column"):
        observed_within(tte.drop(columns="censored"))


def test_swimmer_caption_says_how_many_of_how_many() -> None:
    df = frame()
    df["signal"] = "none"
    # Seven cases have an onset (c6 has none).
    assert swimmer_caption(df, 5) == "showing 5 of 7 cases with an onset (limit = 5)"
    assert swimmer_caption(df, 60) == "showing 7 of 7 cases with an onset (limit = 60)"
    assert swimmer_caption(df, None) == "showing 7 of 7 cases with an onset (limit = none)"
    assert swimmer_caption(df, None, only_onset=False) == "showing 8 of 8 cases (limit = none)"
    fig = swimmer_plot(df, max_cases=5)
    assert len(fig.axes[0].get_yticklabels()) == 5
    assert "showing 5 of 7" in fig.axes[0].get_title()


def test_study_puts_observed_share_beside_each_curve_and_charts_draw_it() -> None:
    df = frame()
    df["acknowledged"] = df["routed"] | (df["turn"] == 3)
    df["signal_seen"] = df["acknowledged"]
    study = onset_study(df, horizon=5, n_boot=20)
    routed = study.curves("all").query("event == 'routed'").reset_index(drop=True)
    np.testing.assert_allclose(routed["observed_share"][:4], [2 / 7, 4 / 7, 5 / 7, 5 / 7])
    assert routed["observed_share"][4:].isna().all()  # past the longest follow-up (3)
    assert len(study.curves("all", followed_only=True).query("event == 'routed'")) == 4
    cen = study.censored("all").set_index("event")
    assert cen.loc["routed", "n_censored_at_0"] == 1 and cen.loc["routed", "n_risk_at_1"] == 4
    assert set(study.censoring["by"]) == {"all", "stratum"}  # the groupings present
    assert {"censoring", "followup"} <= set(study.tables())
    assert study.followup["n_cases"].sum() == 7
    spec = incidence_chart(study.curves("all")).to_dict()
    layers = spec["spec"]["layer"]
    assert "strokeDash" in layers[1]["encoding"]
    values = next(iter(spec["datasets"].values()))
    per_estimate = pd.DataFrame(values).query("event == 'routed'")["estimate"].value_counts()
    # KM up to the last turn with a case at risk (3), observed share up to follow-up 3.
    assert per_estimate.to_dict() == {"Kaplan–Meier estimate": 4, "observed share": 4}
    fig = incidence_plot(study.curves("all"))
    dashed = [ln for ax in fig.axes for ln in ax.get_lines() if ln.get_linestyle() == "--"]
    assert len(dashed) == 3  # one observed-share line per event


def test_onset_headline_says_how_many_conversations_end_at_the_onset_reply() -> None:
    """#28: "median latency 0.0 replies" hid that most conversations end at the onset
    reply. Worked by hand on the known frame: 7 cases with an onset, only c5 ends with
    the onset reply (1/7 = 14%); routed in c1, c8 at latency 0, c2, c4 at 1, c7 at 2
    (5 events); KM: S(0) = 5/7 (c5 censored at 0), S(1) = 5/7 * 2/4 < 0.5, median 1."""
    from evalkit.report import onset_headline

    study = onset_study(frame(), events=("routed",), groupings=(None,), horizon=2, n_boot=20)
    row = study.summary.iloc[0]
    assert row["share_ending_at_onset_reply"] == pytest.approx(1 / 7)
    (line,) = onset_headline(study.summary).lines
    assert line == (
        "routed",
        "5 of 7 cases · median latency 1.0 replies (KM) · "
        "14% of conversations end at the onset reply",
    )
