"""The human ceiling, pairwise kappa and the paired judge-versus-humans comparison:
hand-computed cases, published two-rater kappas, the joint unit bootstrap, statuses and
argument checking."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import cohen_kappa_score

from evalkit.agreement import cohens_kappa, human_ceiling, judge_vs_humans, pairwise_kappa

CATS = ["n", "y"]

# Six units, three humans (binary).  The consensus of the other two, ties to the lower
# bin "n" (first in CATS):
#   unit   A  B  C   C_-A  C_-B        C_-C
#   u1     y  y  y   y     y           y
#   u2     y  y  y   y     y           y
#   u3     n  n  n   n     n           n
#   u4     n  n  n   n     n           n
#   u5     y  n  n   n     n (tie y/n) n (tie y/n)
#   u6     n  y  y   y     n (tie n/y) n (tie n/y)
# kappa(A, C_-A): cells (y,y)=2 (n,n)=2 (y,n)=1 (n,y)=1 -> p_o = 4/6, marginals 3/3 and
#   3/3 -> p_e = 1/2 -> kappa = (2/3 - 1/2) / (1/2) = 1/3.
# kappa(B, C_-B): (y,y)=2 (n,n)=3 (y,n)=1 -> p_o = 5/6; B 3/3, C_-B y=2 n=4 ->
#   p_e = (3·2 + 3·4)/36 = 1/2 -> kappa = (5/6 - 1/2) / (1/2) = 2/3.  C is B's twin: 2/3.
# Judge = B's labels: kappa(judge, C_-A) = 1 (identical), kappa(judge, C_-B) =
#   kappa(B, C_-B) = 2/3, kappa(judge, C_-C) = 2/3; judge row = (1 + 2/3 + 2/3)/3 = 7/9.
# Paired differences d_A = 1 - 1/3, d_B = d_C = 0: difference = 2/9 (judge 7/9, human 5/9).
LABELS = {
    "A": dict(zip(["u1", "u2", "u3", "u4", "u5", "u6"], "yynnyn", strict=True)),
    "B": dict(zip(["u1", "u2", "u3", "u4", "u5", "u6"], "yynnny", strict=True)),
    "C": dict(zip(["u1", "u2", "u3", "u4", "u5", "u6"], "yynnny", strict=True)),
}
JUDGE = dict(LABELS["B"])
CONSENSUS = {"A": "yynnny", "B": "yynnnn", "C": "yynnnn"}


def kappas(frame: pd.DataFrame) -> dict[Any, Any]:
    return {
        r: (None if pd.isna(k) else float(k)) for r, k in zip(frame.rater, frame.kappa, strict=True)
    }


def test_hand_computed_ceiling() -> None:
    f = human_ceiling(LABELS, JUDGE, CATS, n_boot=200)
    assert list(f.columns) == ["rater", "kind", "kappa", "ci_low", "ci_high", "n", "status"]
    assert list(f.kind) == ["human", "human", "human", "judge"]
    k = kappas(f)
    assert k["A"] == pytest.approx(1 / 3) and k["B"] == pytest.approx(2 / 3)
    assert k["C"] == pytest.approx(2 / 3) and k["judge"] == pytest.approx(7 / 9)
    assert list(f.n) == [6, 6, 6, 6] and set(f.status) == {"ok"}
    per_j = f.attrs["judge_by_reference"]
    assert per_j["A"]["kappa"] == pytest.approx(1.0)
    assert per_j["B"]["kappa"] == pytest.approx(2 / 3)
    # Each human's kappa is cohens_kappa against the hand-derived consensus.
    for j, cons in CONSENSUS.items():
        expected = cohens_kappa(list(LABELS[j].values()), list(cons), CATS).value
        assert k[j] == pytest.approx(expected)


def test_hand_computed_paired_comparison() -> None:
    r = judge_vs_humans(LABELS, JUDGE, CATS, n_boot=500)
    assert r.status == "ok" and r.n_humans == 3 and r.n_units == 6
    assert r.judge_kappa == pytest.approx(7 / 9)
    assert r.human_kappa == pytest.approx(5 / 9)
    assert r.difference == pytest.approx(2 / 9)
    assert r.ci_low is not None and r.ci_high is not None
    assert r.ci_low <= r.difference <= r.ci_high
    assert r.non_inferior == (r.ci_low > -0.10)


def test_judge_identical_to_one_human_is_paired_with_that_human() -> None:
    # The judge is B's twin: against B's reference C_-B (same units, same consensus) the
    # judge's kappa is B's own, so d_B = 0 exactly, and the same in human_ceiling.
    r = judge_vs_humans(LABELS, JUDGE, CATS, n_boot=100)
    row = r.per_reference.set_index("reference").loc["B"]
    assert row["judge_kappa"] == row["human_kappa"] and row["used"]
    f = human_ceiling(LABELS, JUDGE, CATS, n_boot=100)
    b_row = f.set_index("rater").loc["B"]
    assert f.attrs["judge_by_reference"]["B"]["kappa"] == b_row["kappa"]
    # Two humans, judge = A: d_A = kappa(A, B) - kappa(A, B) = 0 in every resample, and
    # d_B = kappa(A, A) - kappa(B, A) = 1 - kappa(A, B), so difference = (1 - kappa) / 2.
    two = {"A": LABELS["A"], "B": LABELS["B"]}
    r2 = judge_vs_humans(two, LABELS["A"], CATS, n_boot=300)
    k_ab = cohens_kappa(list(LABELS["A"].values()), list(LABELS["B"].values()), CATS).value
    assert r2.difference == pytest.approx((1 - k_ab) / 2)


def test_bootstrap_resamples_units_jointly() -> None:
    # Explicit joint resampling: draw 6 unit indices with replacement (the module's draws:
    # default_rng(seed).integers(0, 6, size=(n_boot, 6)), one block for so few units),
    # keep the same units for every reference and for both raters of each pair.
    n_boot, seed = 400, 3
    r = judge_vs_humans(LABELS, JUDGE, CATS, n_boot=n_boot, seed=seed)
    draws = np.random.default_rng(seed).integers(0, 6, size=(n_boot, 6))
    units = list(LABELS["A"])
    diffs = []
    for row in draws:
        d = []
        for j, cons in CONSENSUS.items():
            c = [cons[i] for i in row]
            kj = cohens_kappa([JUDGE[units[i]] for i in row], c, CATS).value
            kh = cohens_kappa([LABELS[j][units[i]] for i in row], c, CATS).value
            d.append(None if kj is None or kh is None else kj - kh)
        if None not in d:
            diffs.append(np.mean(d))
    lo, hi = np.quantile(diffs, [0.025, 0.975])
    assert r.n_boot_used == len(diffs) and r.n_degenerate == n_boot - len(diffs)
    assert r.ci_low == pytest.approx(lo, abs=1e-12)
    assert r.ci_high == pytest.approx(hi, abs=1e-12)


def test_ties_lower_bin_or_dropped() -> None:
    # Three levels; on u3 A says low and B high, so C's reference C_-C ties there.
    #   unit  A     B     C     C_-A   C_-B          C_-C
    #   u1    low   low   low   low    low           low
    #   u2    high  high  high  high   high          high
    #   u3    low   high  high  high   low (tie)     low (tie)
    #   u4    mid   mid   mid   mid    mid           mid
    # tie="lower": C vs C_-C: 3 of 4 on the diagonal, (high, low) once; C marginals
    # low/mid/high = 1/1/2, C_-C = 2/1/1 -> p_e = (2 + 1 + 2)/16 = 5/16 ->
    # kappa = (12/16 - 5/16)/(11/16) = 7/11; A and B get 7/11 in the same way.
    # tie="drop": u3 leaves B's and C's references -> perfect agreement, kappa 1; A has
    # no tie and keeps 7/11.  With the category order reversed the lower bin is "high":
    # C_-C(u3) = high and C agrees perfectly.
    cats = ["low", "mid", "high"]
    labels = {
        "A": {"u1": "low", "u2": "high", "u3": "low", "u4": "mid"},
        "B": {"u1": "low", "u2": "high", "u3": "high", "u4": "mid"},
        "C": {"u1": "low", "u2": "high", "u3": "high", "u4": "mid"},
    }
    lower = kappas(human_ceiling(labels, None, cats, n_boot=50))
    assert lower == pytest.approx({"A": 7 / 11, "B": 7 / 11, "C": 7 / 11})
    drop = human_ceiling(labels, None, cats, tie="drop", n_boot=50)
    assert kappas(drop) == pytest.approx({"A": 7 / 11, "B": 1.0, "C": 1.0})
    assert list(drop.n) == [4, 3, 3]
    assert any("tied consensus dropped" in n for n in drop.attrs["notes"])
    reversed_order = kappas(human_ceiling(labels, None, cats[::-1], n_boot=50))
    assert reversed_order["C"] == pytest.approx(1.0)


def test_same_seed_same_intervals_other_seed_differs() -> None:
    rng = np.random.default_rng(11)
    truth = rng.choice(["a", "b", "c"], size=80)
    labels = {}
    for r in ("h1", "h2", "h3", "h4"):
        lab = truth.copy()
        flip = rng.random(80) < 0.3
        lab[flip] = rng.choice(["a", "b", "c"], size=int(flip.sum()))
        labels[r] = {f"u{i}": v for i, v in enumerate(lab) if rng.random() < 0.85}
    judge = {f"u{i}": v for i, v in enumerate(truth)}
    cats = ["a", "b", "c"]
    f1 = human_ceiling(labels, judge, cats, n_boot=300, seed=4)
    f2 = human_ceiling(labels, judge, cats, n_boot=300, seed=4)
    pd.testing.assert_frame_equal(f1, f2)
    f3 = human_ceiling(labels, judge, cats, n_boot=300, seed=5)
    assert not f1.ci_low.equals(f3.ci_low)
    assert f1.kappa.equals(f3.kappa)
    r1 = judge_vs_humans(labels, judge, cats, n_boot=300, seed=4)
    r2 = judge_vs_humans(labels, judge, cats, n_boot=300, seed=4)
    assert r1.to_dict() == r2.to_dict()
    assert (r1.ci_low, r1.ci_high) != (
        judge_vs_humans(labels, judge, cats, n_boot=300, seed=5).ci_low,
        judge_vs_humans(labels, judge, cats, n_boot=300, seed=5).ci_high,
    )
    assert json.loads(json.dumps(r1.to_dict())) == r1.to_dict()


def test_input_forms_agree() -> None:
    long = pd.DataFrame(
        [(u, r, v) for r, d in LABELS.items() for u, v in d.items()],
        columns=["unit", "rater", "label"],
    )
    wide = pd.DataFrame(LABELS)
    ref = human_ceiling(LABELS, JUDGE, CATS, n_boot=100)
    for form in (long, wide):
        pd.testing.assert_frame_equal(human_ceiling(form, pd.Series(JUDGE), CATS, n_boot=100), ref)
        pd.testing.assert_frame_equal(pairwise_kappa(form, CATS), pairwise_kappa(LABELS, CATS))
    gappy = pd.DataFrame(LABELS)
    gappy.loc["u1", "A"] = np.nan  # A did not label u1
    f = human_ceiling(gappy, JUDGE, CATS, n_boot=50)
    assert f.set_index("rater").loc["A", "n"] == 5


# ------------------------------------------------------------------------ pairwise kappa


def expand(table: list[list[int]], cats: list[Any]) -> tuple[list[Any], list[Any]]:
    a: list[Any] = []
    b: list[Any] = []
    for i, row in enumerate(table):
        for j, count in enumerate(row):
            a += [cats[i]] * count
            b += [cats[j]] * count
    return a, b


def test_pairwise_kappa_published_values() -> None:
    # Two readers, 50 grant proposals: Yes/Yes 20, Yes/No 5, No/Yes 10, No/No 15;
    # p_o = 0.70, p_e = 0.5·0.6 + 0.5·0.4 = 0.50, kappa = 0.40 (the worked example of the
    # Wikipedia article "Cohen's kappa"; also howcodex.com/statistics/cohen_kappa_coefficient).
    a, b = expand([[20, 5], [10, 15]], ["Yes", "No"])
    # SAS PROC FREQ table quoted in statsmodels' test suite (test_inter_rater.py):
    # Kappa 0.4842, 95% limits 0.2137, 0.7547.
    c, d = expand([[0, 4, 1], [0, 8, 0], [0, 1, 5]], [1, 2, 3])
    grant = {"A": dict(enumerate(a)), "B": dict(enumerate(b))}
    sas = {"R1": dict(enumerate(c)), "R2": dict(enumerate(d))}
    g = pairwise_kappa(grant, ["Yes", "No"]).iloc[0]
    assert (g.rater_a, g.rater_b, g.n, g.status) == ("A", "B", 50, "ok")
    assert round(g.kappa, 10) == 0.4
    s = pairwise_kappa(sas, [1, 2, 3]).iloc[0]
    assert (round(s.kappa, 4), round(s.ci_low, 4), round(s.ci_high, 4)) == (
        0.4842,
        0.2137,
        0.7547,
    )


def test_pairwise_kappa_hand_case_and_sklearn() -> None:
    p = pairwise_kappa(LABELS, CATS)
    assert list(zip(p.rater_a, p.rater_b, strict=True)) == [("A", "B"), ("A", "C"), ("B", "C")]
    # A vs B: (y,y)=2 (n,n)=2 (y,n)=1 (n,y)=1 -> 1/3 (as above); B and C are identical.
    assert list(p.kappa) == pytest.approx([1 / 3, 1 / 3, 1.0])
    assert list(p.n) == [6, 6, 6]
    rng = np.random.default_rng(2)
    x, y = rng.choice(["p", "q", "r"], size=(2, 70))
    labels = {"X": dict(enumerate(x)), "Y": {i: v for i, v in enumerate(y) if i % 7}}
    row = pairwise_kappa(labels, ["p", "q", "r"]).iloc[0]
    keep = [i for i in range(70) if i % 7]
    assert row.n == len(keep)
    assert row.kappa == pytest.approx(cohen_kappa_score(x[keep], y[keep]))


# ------------------------------------------------------------------------------ statuses


def test_single_labeler_gives_statuses_not_numbers() -> None:
    one = {"A": LABELS["A"]}
    f = human_ceiling(one, JUDGE, CATS, n_boot=50)
    assert list(f.status) == ["no_pairs", "no_pairs"] and f.kappa.isna().all()
    assert f.ci_low.isna().all() and pairwise_kappa(one, CATS).empty
    r = judge_vs_humans(one, JUDGE, CATS)
    assert r.status == "no_pairs" and r.difference is None and r.non_inferior is None
    assert any("only one human" in n for n in r.notes)


def test_units_labelled_once_give_no_pairs() -> None:
    labels = {"A": {"u1": "y", "u2": "n"}, "B": {"u3": "y", "u4": "n"}}
    f = human_ceiling(labels, {"u1": "y", "u3": "n"}, CATS, n_boot=50)
    assert set(f.status) == {"no_pairs"} and f.kappa.isna().all()
    assert pairwise_kappa(labels, CATS).iloc[0].status == "no_pairs"
    r = judge_vs_humans(labels, {"u1": "y", "u3": "n"}, CATS)
    assert r.status == "no_pairs" and r.difference is None


def test_constant_column_and_constant_reference() -> None:
    labels = {**LABELS, "D": dict.fromkeys(LABELS["A"], "n")}
    f = human_ceiling(labels, JUDGE, CATS, n_boot=50).set_index("rater")
    assert f.loc["D", "status"] == "single_rater_constant"
    assert f.loc["D", "kappa"] == 0.0 and pd.isna(f.loc["D", "ci_low"])
    p = pairwise_kappa(labels, CATS)
    assert set(p[p.rater_b == "D"].status) == {"single_rater_constant"}
    # A constant judge: every kappa is 0 by construction; a status, no interval.
    g = human_ceiling(LABELS, dict.fromkeys(JUDGE, "y"), CATS, n_boot=50).set_index("rater")
    assert g.loc["judge", "status"] == "single_rater_constant"
    assert g.loc["judge", "kappa"] == 0.0 and pd.isna(g.loc["judge", "ci_high"])
    # Every consensus reference constant: the comparison does not exist.
    flat = {"A": dict.fromkeys(JUDGE, "n"), "B": dict.fromkeys(JUDGE, "n")}
    r = judge_vs_humans(flat, JUDGE, CATS)
    assert r.status == "no_variation" and r.difference is None and r.non_inferior is None
    h = human_ceiling(flat, JUDGE, CATS, n_boot=50)
    assert list(h.status) == ["both_raters_constant"] * 2 + ["no_variation"]


def test_judge_missing_units_are_left_out_of_its_pairs() -> None:
    judge = {u: v for u, v in JUDGE.items() if u != "u6"}
    r = judge_vs_humans(LABELS, judge, CATS, n_boot=100)
    assert list(r.per_reference.n) == [5, 5, 5] and r.n_units == 5
    f = human_ceiling(LABELS, judge, CATS, n_boot=100)
    assert list(f.n) == [6, 6, 6, 5]
    assert any("did not label 1" in n for n in f.attrs["notes"])


# ----------------------------------------------------------------------------- ValueError


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"tie": "upper"}, "unknown tie"),
        ({"n_boot": 0}, "n_boot"),
        ({"level": 1.5}, "level"),
        ({"seed": "x"}, "seed"),
    ],
)
def test_bad_options_raise(kwargs: dict[str, Any], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        human_ceiling(LABELS, JUDGE, CATS, **kwargs)
    with pytest.raises(ValueError, match=match):
        judge_vs_humans(LABELS, JUDGE, CATS, **kwargs)


def test_bad_inputs_raise() -> None:
    with pytest.raises(ValueError, match=r"labels\['A'\] has 'maybe' for unit 'u1'"):
        human_ceiling({**LABELS, "A": {"u1": "maybe"}}, JUDGE, CATS)
    with pytest.raises(ValueError, match="judge has 'maybe' for unit 'u2'"):
        human_ceiling(LABELS, {**JUDGE, "u2": "maybe"}, CATS)
    with pytest.raises(ValueError, match="categories"):
        pairwise_kappa(LABELS, ["n"])
    with pytest.raises(ValueError, match="labels must be"):
        pairwise_kappa([["y", "n"]], CATS)
    with pytest.raises(ValueError, match="judge must be"):
        human_ceiling(LABELS, ["y", "n"], CATS)
    with pytest.raises(ValueError, match="judge is required"):
        judge_vs_humans(LABELS, None, CATS)
    with pytest.raises(ValueError, match="margin"):
        judge_vs_humans(LABELS, JUDGE, CATS, margin=-0.1)


def test_joint_bootstrap_counts_each_resample_exactly() -> None:
    """Each resample's kappa is the kappa of the table its drawn units make (the counting
    was rewritten to skip a dense one-hot product, issue 29; the draws are the same)."""
    from evalkit.agreement._ceiling import _boot
    from evalkit.agreement._kappa import kappa_from_table

    q, n_units, n_boot, seed = 3, 50, 40, 11
    rng = np.random.default_rng(5)
    columns = []
    for size in (50, 31, 8):
        idx = np.sort(rng.choice(n_units, size, replace=False))
        columns.append((idx, rng.integers(0, q * q, size)))
    got = _boot(columns, n_units, q, n_boot, seed)
    draw = np.random.default_rng(seed).integers(0, n_units, size=(n_boot, n_units))
    for b in range(n_boot):
        drawn = np.bincount(draw[b], minlength=n_units)
        for c, (idx, cells) in enumerate(columns):
            table = np.bincount(cells, weights=drawn[idx], minlength=q * q).reshape(q, q)
            want = kappa_from_table(table, None, categories=("a", "b", "c")).value
            if want is None:
                assert np.isnan(got[b, c])
            else:
                assert got[b, c] == pytest.approx(want, abs=1e-12)
