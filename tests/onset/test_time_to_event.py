"""Known answers for time_to_event, cumulative_incidence, RMST and friends, computed by hand.

The frame below uses the catalogue's convention: ``turn`` is the message index, user
turns are even and agent turns odd, so the reply to the onset turn ``o`` is ``o + 1``.

    case onset agent turns        routed at   at-risk turns (>= onset)  latency  censored
    c1   0     1 3 5              1           1 3 5                     0        no
    c2   2     1 3 5 7            1, 5        3 5 7                     1        no (1: alarm)
    c3   2     1 3 5 7 9          -           3 5 7 9                   3        yes (last observed)
    c4   4     1 3 5 7            7           5 7                       1        no
    c5   0     1                  -           1                         0        yes
    c6   -     1 3                3           (no onset: left out)      -        -
    c7   6     1 3 5 7 9 11       11          7 9 11                    2        no
    c8   2     1 3 5              3           3 5                       0        no

Kaplan–Meier on the seven cases with an onset (latency, event):
    c1 (0, 1) c2 (1, 1) c3 (3, 0) c4 (1, 1) c5 (0, 0) c7 (2, 1) c8 (0, 1)

    t  at risk  events  censored  S(t)                      incidence 1 - S(t)
    0  7        2       1         1 - 2/7        = 5/7      2/7   = 0.285714
    1  4        2       0         5/7 * (1-2/4)  = 5/14     9/14  = 0.642857
    2  2        1       0         5/14 * (1-1/2) = 5/28     23/28 = 0.821429
    3  1        0       1         5/28                      23/28
    4  0        0       0         5/28 (carried flat)       23/28
    5  0        0       0         5/28                      23/28

Greenwood's sum  sum d / (n (n - d)):  t=0: 2/(7*5) = 2/35;  t=1: 2/35 + 2/(4*2);
t=2: 2/35 + 1/4 + 1/(2*1).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy.stats import norm
from statsmodels.duration.survfunc import SurvfuncRight

from evalkit.onset import (
    bootstrap_incidence,
    cumulative_incidence,
    events_table,
    false_alarms,
    recognition_within,
    rmst,
    time_to_event,
)
from tests.onset._known import frame


def test_latencies_and_censoring_by_hand() -> None:
    tte = time_to_event(frame(), event="routed")
    assert list(tte.columns[:5]) == ["case_id", "onset_turn", "event_turn", "latency", "censored"]
    got = {r.case_id: (r.onset_turn, r.event_turn, r.latency, r.censored) for r in tte.itertuples()}
    nan = float("nan")
    expected = {
        "c1": (0, 1.0, 0.0, False),
        "c2": (2, 5.0, 1.0, False),  # the routing at turn 1 precedes the onset: false alarm
        "c3": (2, nan, 3.0, True),  # censored at the last agent turn observed (9)
        "c4": (4, 7.0, 1.0, False),
        "c5": (0, nan, 0.0, True),
        "c7": (6, 11.0, 2.0, False),
        "c8": (2, 3.0, 0.0, False),
    }
    assert set(got) == set(expected)  # c6 has no onset: no time origin, left out
    for cid, (onset, ev, lat, cens) in expected.items():
        g = got[cid]
        assert g[0] == onset and g[2] == lat and g[3] == cens, cid
        assert (math.isnan(g[1]) and math.isnan(ev)) or g[1] == ev, cid
    assert tte["template_family"].tolist() == [f"fam-{c}" for c in expected]


def test_exchange_numbering_counts_the_same() -> None:
    # Same events with turns numbered by exchange (agent turn k answers user turn k).
    df = pd.DataFrame(
        {
            "case_id": ["a"] * 4,
            "turn": [0, 1, 2, 3],
            "onset_turn": [1] * 4,
            "routed": [True, False, False, True],
        }
    )
    tte = time_to_event(df)
    # at-risk turns 1, 2, 3; routed at 3 -> latency 2; the routing at 0 is a false alarm
    assert tte.loc[0, "latency"] == 2.0 and tte.loc[0, "event_turn"] == 3.0


def test_missing_event_values_count_as_no_event_and_other_events_work() -> None:
    df = frame()
    df["acknowledged"] = pd.array([pd.NA] * len(df), dtype="boolean")
    df.loc[(df["case_id"] == "c3") & (df["turn"] == 5), "acknowledged"] = True
    tte = time_to_event(df, "acknowledged").set_index("case_id")
    assert tte.loc["c3", "latency"] == 1.0 and not tte.loc["c3", "censored"]
    assert tte.loc["c1", "censored"] and tte.loc["c1", "latency"] == 2.0


def test_bad_frames_are_refused() -> None:
    df = frame()
    with pytest.raises(ValueError, match="missing column"):
        time_to_event(df, "acknowledged")
    with pytest.raises(ValueError, match="duplicate"):
        time_to_event(pd.concat([df, df.iloc[:1]]))
    bad = df.copy()
    bad.loc[0, "onset_turn"] = 4
    with pytest.raises(ValueError, match="varies"):
        time_to_event(bad)


def test_incidence_at_each_turn_by_hand() -> None:
    inc = cumulative_incidence(time_to_event(frame()), horizon=5)
    assert list(inc.columns[:4]) == ["turns_since_onset", "incidence", "ci_low", "ci_high"]
    assert inc["turns_since_onset"].tolist() == [0, 1, 2, 3, 4, 5]
    np.testing.assert_allclose(
        inc["incidence"], [2 / 7, 9 / 14, 23 / 28, 23 / 28, 23 / 28, 23 / 28], atol=1e-12
    )
    assert inc["n_risk"].tolist() == [7, 4, 2, 1, 0, 0]
    assert inc["n_events"].tolist() == [2, 2, 1, 0, 0, 0]
    assert inc["n_censored"].tolist() == [1, 0, 0, 1, 0, 0]
    # Log-log interval from the hand-computed S and Greenwood sums.
    z = norm.ppf(0.975)
    for t, s, gw in [(0, 5 / 7, 2 / 35), (1, 5 / 14, 2 / 35 + 1 / 4), (2, 5 / 28, 2 / 35 + 3 / 4)]:
        se = s * math.sqrt(gw)
        theta = z * se / (s * abs(math.log(s)))
        lo, hi = 1 - s ** math.exp(-theta), 1 - s ** math.exp(theta)
        assert inc.loc[t, "ci_low"] == pytest.approx(lo, abs=1e-9)
        assert inc.loc[t, "ci_high"] == pytest.approx(hi, abs=1e-9)
        assert inc.loc[t, "ci_low"] < inc.loc[t, "incidence"] < inc.loc[t, "ci_high"]


def test_incidence_matches_statsmodels_at_event_times() -> None:
    tte = time_to_event(frame())
    sf = SurvfuncRight(tte["latency"], (~tte["censored"]).astype(int))
    inc = cumulative_incidence(tte, horizon=3).set_index("turns_since_onset")
    for t, s in zip(sf.surv_times, sf.surv_prob, strict=True):
        assert inc.loc[int(t), "incidence"] == pytest.approx(1 - s)


def test_boundary_intervals_are_exact_binomial() -> None:
    # Four cases all routed in the reply to the onset: S(0) = 0; 4 of 4 -> lower 0.025**(1/4).
    tte = pd.DataFrame({"case_id": list("abcd"), "latency": [0.0] * 4, "censored": [False] * 4})
    inc = cumulative_incidence(tte, horizon=1)
    assert inc["incidence"].tolist() == [1.0, 1.0]
    assert inc.loc[0, "ci_low"] == pytest.approx(0.025 ** (1 / 4))
    assert inc.loc[0, "ci_high"] == 1.0
    # No event: censored at 0, 1, 2 -> upper bound 1 - 0.025**(1/m), m observed through t.
    tte = pd.DataFrame({"case_id": list("abc"), "latency": [0.0, 1.0, 2.0], "censored": [True] * 3})
    inc = cumulative_incidence(tte, horizon=3)
    assert inc["incidence"].tolist() == [0.0] * 4
    assert inc["ci_low"].tolist() == [0.0] * 4
    np.testing.assert_allclose(
        inc["ci_high"], [1 - 0.025 ** (1 / 3), 1 - 0.025 ** (1 / 2), 0.975, 1.0]
    )


def test_hall_wellner_band_and_empty_input() -> None:
    tte = time_to_event(frame())
    hw = cumulative_incidence(tte, horizon=2, ci="hall-wellner")
    assert (hw["ci_low"] <= hw["incidence"] + 1e-12).all()
    assert (hw["incidence"] <= hw["ci_high"] + 1e-12).all()
    with pytest.raises(ValueError, match=r"0\.95"):
        cumulative_incidence(tte, ci="hall-wellner", level=0.9)
    empty = cumulative_incidence(tte.iloc[:0], horizon=2)
    assert empty["incidence"].isna().all() and len(empty) == 3


def test_recognition_within_and_rmst_by_hand() -> None:
    tte = time_to_event(frame())
    within = recognition_within(tte, (0, 1, 2))
    np.testing.assert_allclose(within["incidence"], [2 / 7, 9 / 14, 23 / 28])
    # RMST(3) = S(0) + S(1) + S(2) = 5/7 + 5/14 + 5/28 = 35/28 = 1.25 agent turns
    r = rmst(tte, horizon=3, n_boot=200)
    assert r.loc[0, "rmst"] == pytest.approx(1.25)
    assert r.loc[0, "ci_low"] <= 1.25 <= r.loc[0, "ci_high"]
    assert not r.loc[0, "extrapolated"]  # longest follow-up 3 >= horizon - 1
    assert rmst(tte, horizon=6, cluster=None).loc[0, "extrapolated"]


def test_cluster_bootstrap_keeps_the_point_and_moves_families_together() -> None:
    tte = time_to_event(frame())
    boot = bootstrap_incidence(tte, horizon=2, n_boot=400, seed=1)
    np.testing.assert_allclose(boot["incidence"], [2 / 7, 9 / 14, 23 / 28])
    assert (boot["boot_low"] <= boot["incidence"]).all()
    assert (boot["incidence"] <= boot["boot_high"]).all()
    assert boot["n_clusters"].iloc[0] == 7
    # One family holding every case: every replicate is the data itself.
    one = bootstrap_incidence(tte.assign(template_family="f"), horizon=2, n_boot=50)
    np.testing.assert_allclose(one["boot_low"], one["incidence"])
    np.testing.assert_allclose(one["boot_high"], one["incidence"])


def test_weighted_km_equals_statsmodels_on_random_data() -> None:
    rng = np.random.default_rng(7)
    for _ in range(20):
        n = int(rng.integers(3, 30))
        tte = pd.DataFrame(
            {
                "case_id": range(n),
                "latency": rng.integers(0, 5, n).astype(float),
                "censored": rng.random(n) < 0.4,
                "template_family": range(n),
            }
        )
        km = cumulative_incidence(tte, horizon=5)["incidence"].to_numpy()
        boot = bootstrap_incidence(tte, horizon=5, n_boot=2)["incidence"].to_numpy()
        np.testing.assert_allclose(km, boot, atol=1e-12)


def test_false_alarms_per_turn_by_hand() -> None:
    # Pre-onset agent turns: c2 {1}, c3 {1}, c4 {1,3}, c7 {1,3,5}, c8 {1} = 8 turns,
    # one routed (c2 turn 1): rate 1/8. No-onset case c6: turns {1,3}, routed at 3: 1/2.
    fa = false_alarms(frame(), ["routed"]).set_index("scope")
    assert fa.loc["pre_onset", "n_turns"] == 8 and fa.loc["pre_onset", "n_false_alarms"] == 1
    assert fa.loc["pre_onset", "rate"] == pytest.approx(1 / 8)
    assert fa.loc["no_onset", "n_turns"] == 2 and fa.loc["no_onset", "rate"] == 0.5
    # Wilson 95% for 1/8: (p + z²/2n ± z sqrt(p(1-p)/n + z²/4n²)) / (1 + z²/n)
    z, n, p = norm.ppf(0.975), 8, 1 / 8
    centre = (p + z**2 / (2 * n)) / (1 + z**2 / n)
    half = z * math.sqrt(p * (1 - p) / n + z**2 / (4 * n**2)) / (1 + z**2 / n)
    assert fa.loc["pre_onset", "ci_low"] == pytest.approx(centre - half)
    assert fa.loc["pre_onset", "ci_high"] == pytest.approx(centre + half)


def test_events_table_has_one_block_per_event() -> None:
    df = frame()
    df["acknowledged"] = df["routed"] | (df["turn"] == 3)
    table = events_table(df, ["acknowledged", "routed"]).set_index("case_id")
    assert table.loc["c3", "acknowledged_turn"] == 3.0
    assert table.loc["c3", "acknowledged_latency"] == 0.0
    assert table.loc["c3", "routed_censored"]
    assert "c6" not in table.index
