"""multi_rater / multi_rater_counts / fleiss_kappa(missing=...) against irrCAC's published output.

Sources of the expected numbers (each test says which):

* [README] kgwet/irrCAC, README.md ("Computing agreement coefficients from raw ratings" and
  "... from the distribution of raters by subject & category"); the same output is printed
  in the package vignette overview.html.
* [WEIGHTING] kgwet/irrCAC, vignette "Weighted Chance-corrected Agreement Coefficients"
  (inst/doc/weighting.html), sections "Weighting for a dataset of raw ratings" and
  "Weighting when input data is the distribution of raters by subject and rating".
* [PORT] the Python port of irrCAC (afergadis/irrCAC, PyPI ``irrCAC``), its test suite
  test/unit/irrCAC/raw/test_{fleiss,gwet,conger,bp,krippendorff}.py, which pins irrCAC's
  values at 3 decimals for datasets whose R output is not printed in irrCAC's docs.

irrCAC rounds ``coeff.val`` and ``coeff.se`` of the ``*.raw`` functions to 5 decimals and the
interval to 3; other numbers (``pa``, ``pe``, the ``*.dist`` output) are R's 7 significant
digits.  The helpers below compare at exactly that precision.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd
import pytest

from evalkit.agreement import (
    STATUSES,
    fleiss_kappa,
    gwet_ac1,
    krippendorff_alpha,
    multi_rater,
    multi_rater_counts,
)

N = None

# cac.raw4raters (irrCAC; Gwet 2014, Handbook of Inter-Rater Reliability, 4th ed., p. 120),
# units × raters as printed in [README].
RAW4RATERS = [
    [1, 1, N, 1],
    [2, 2, 3, 2],
    [3, 3, 3, 3],
    [3, 3, 3, 3],
    [2, 2, 2, 2],
    [1, 2, 3, 4],
    [4, 4, 4, 4],
    [1, 1, 2, 1],
    [2, 2, 2, 2],
    [N, 5, 5, 5],
    [N, N, 1, 1],
    [N, N, 3, N],
]
CATS5 = [1, 2, 3, 4, 5]

# distrib.6raters (irrCAC; Fleiss 1971): 15 patients × 5 diagnoses, counts of 6
# psychiatrists, as printed in [README].
DISTRIB_6RATERS = [
    [0, 0, 0, 6, 0],
    [0, 3, 0, 0, 3],
    [0, 1, 4, 0, 1],
    [0, 0, 0, 0, 6],
    [0, 3, 0, 3, 0],
    [2, 0, 4, 0, 0],
    [0, 0, 4, 0, 2],
    [2, 0, 3, 1, 0],
    [2, 0, 0, 4, 0],
    [0, 0, 0, 0, 6],
    [1, 0, 0, 5, 0],
    [1, 1, 0, 4, 0],
    [0, 3, 3, 0, 0],
    [1, 0, 0, 5, 0],
    [0, 2, 0, 3, 1],
]
DIAGNOSES = ["Depression", "Personality Disorder", "Schizophrenia", "Neurosis", "Other"]

# cac.ben.gerry (irrCAC): 12 units, raters Ben and Gerry; Gerry's rating of unit 10 is
# missing (transcribed in [PORT]'s irrCAC/datasets.py, raw_ben_gerry).
BEN = ["a", "a", "b", "b", "d", "c", "c", "c", "e", "d", "d", "a"]
GERRY = ["b", "a", "b", "b", "b", "c", "c", "c", "e", N, "d", "d"]
ABCDE = list("abcde")

# cac.raw.g1g2 and cac.dist.g1g2 (irrCAC): 14 units, 4 raters, categories a-e; the second is
# the first summarised as counts per category (transcribed in [PORT]'s datasets.py).
RAW_G1G2 = {
    "Rater1": ["a", "b", "c", "c", "b", "a", "d", "a", "b", N, N, N, "b", "b"],
    "Rater2": ["a", "b", "c", "c", "b", "b", "d", "a", "b", "e", N, N, "b", "a"],
    "Rater3": [N, "c", "c", "c", "b", "c", "d", "b", "b", "e", "a", "c", "c", "c"],
    "Rater4": ["a", "b", "c", "c", "b", "d", "d", "a", "b", "e", "a", N, "b", "b"],
}
DIST_G1G2 = {
    "a": [3, 0, 0, 0, 0, 1, 0, 3, 0, 0, 2, 0, 0, 1],
    "b": [0, 3, 0, 0, 4, 1, 0, 1, 4, 0, 0, 0, 3, 2],
    "c": [0, 1, 4, 4, 0, 1, 0, 0, 0, 0, 0, 1, 1, 1],
    "d": [0, 0, 0, 0, 0, 1, 4, 0, 0, 0, 0, 0, 0, 0],
    "e": [0, 0, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 0],
}


def row(table: pd.DataFrame, name: str) -> dict[str, Any]:
    return {k: (None if v is pd.NA else v) for k, v in table.loc[name].items()}


def r7(x: float, printed: str) -> bool:
    """``x`` equals a number R printed with 7 significant digits."""
    v = float(printed)
    exponent = math.floor(math.log10(abs(v))) if v else 0
    return abs(x - v) <= 0.5 * 10.0 ** (exponent - 6) + 1e-15


def check_raw(r: dict[str, Any], value: float, se: float, ci: tuple[float, float], pe: str) -> None:
    """irrCAC ``*.raw`` output: value and se to 5 decimals, interval to 3, pe to 7 digits."""
    assert round(r["value"], 5) == value
    assert round(r["se"], 5) == se
    assert (round(r["ci_low"], 3), round(r["ci_high"], 3)) == ci
    assert r7(r["pe"], pe)
    assert r["status"] == "ok"


# [README]: pa.coeff.raw, fleiss.kappa.raw, conger.kappa.raw, gwet.ac1.raw, bp.coeff.raw and
# krippen.alpha.raw on cac.raw4raters; columns coeff.val, coeff.se, conf.int, pe.
RAW4RATERS_README = {
    "percent_agreement": (0.81818, 0.12561, (0.542, 1.0), "0"),  # pa 0.8181818
    "fleiss": (0.76117, 0.15302, (0.424, 1.0), "0.2387153"),
    "conger": (0.76282, 0.14917, (0.435, 1.0), "0.2334252"),
    "gwet_ac1": (0.77544, 0.14295, (0.461, 1.0), "0.1903212"),
    "brennan_prediger": (0.77273, 0.14472, (0.454, 1.0), "0.2"),
    "krippendorff_alpha": (0.74342, 0.14557, (0.419, 1.0), "0.24"),
}

# [WEIGHTING]: the same functions with weights = "quadratic".
RAW4RATERS_QUADRATIC = {
    "percent_agreement": (0.97538, 0.09062, (0.776, 1.0), "0"),  # pa 0.9753788
    "fleiss": (0.86494, 0.14603, (0.544, 1.0), "0.8177083"),
    "conger": (0.85771, 0.14367, (0.541, 1.0), "0.8269638"),
    "gwet_ac1": (0.914, 0.10396, (0.685, 1.0), "0.7137044"),  # AC2
    "brennan_prediger": (0.90152, 0.11089, (0.657, 1.0), "0.75"),
    "krippendorff_alpha": (0.84911, 0.12913, (0.561, 1.0), "0.825"),
}


@pytest.mark.parametrize("name", list(RAW4RATERS_README))
def test_raw4raters_matches_irrcac_readme(name: str) -> None:
    table = multi_rater(RAW4RATERS, CATS5)
    check_raw(row(table, name), *RAW4RATERS_README[name])


@pytest.mark.parametrize("name", list(RAW4RATERS_QUADRATIC))
def test_raw4raters_quadratic_matches_irrcac_weighting_vignette(name: str) -> None:
    table = multi_rater(RAW4RATERS, CATS5, "quadratic")
    check_raw(row(table, name), *RAW4RATERS_QUADRATIC[name])


def test_raw4raters_percent_agreement_at_full_printed_precision() -> None:
    # [README] pa.coeff.raw: pa = coeff.val = 0.8181818; [WEIGHTING] quadratic: 0.9753788
    assert r7(row(multi_rater(RAW4RATERS, CATS5), "percent_agreement")["value"], "0.8181818")
    quadratic = multi_rater(RAW4RATERS, CATS5, "quadratic")
    assert r7(row(quadratic, "percent_agreement")["value"], "0.9753788")


def test_raw4raters_table_shape_and_units() -> None:
    table = multi_rater(RAW4RATERS, CATS5)
    assert list(table.index) == [
        "percent_agreement",
        "fleiss",
        "conger",
        "gwet_ac1",
        "brennan_prediger",
        "krippendorff_alpha",
    ]
    assert list(table.columns) == ["value", "se", "ci_low", "ci_high", "pe", "status", "n_units"]
    assert table["value"].dtype == "Float64" and table["n_units"].dtype == "Int64"
    # 12 units have a rating; alpha uses the 11 rated at least twice (unit 12 is rated once)
    assert list(table["n_units"]) == [12, 12, 12, 12, 12, 11]
    assert table.attrs["n_raters"] == 4 and table.attrs["weights"] is None
    assert any("rated once" in note for note in table.attrs["notes"])


def test_fleiss_kappa_default_is_irrcac_on_missing_data() -> None:
    # [README] fleiss.kappa.raw(cac.raw4raters): coeff.val 0.76117, pa 0.8181818, pe 0.2387153
    r = fleiss_kappa(RAW4RATERS, CATS5)
    assert round(r.value, 5) == 0.76117
    assert r7(r.p_observed, "0.8181818") and r7(r.p_expected, "0.2387153")
    assert r.n_units == 12 and r.n_missing == 4 and r.status == "ok"
    # the null-hypothesis SE needs the same number of ratings on every unit
    assert r.se is None and r.z is None and r.per_category == {}
    assert any("different numbers of ratings" in note for note in r.notes)


def test_fleiss_kappa_listwise_keeps_the_old_behaviour() -> None:
    r = fleiss_kappa(RAW4RATERS, CATS5, missing="listwise")
    complete = [u for u in RAW4RATERS if None not in u]
    assert r.n_units == 8 and r.n_missing == 4
    assert r.value == pytest.approx(fleiss_kappa(complete, CATS5).value, abs=1e-15)
    assert round(r.value, 3) == 0.641
    with pytest.raises(ValueError, match="unknown missing 'pairwise'"):
        fleiss_kappa(RAW4RATERS, CATS5, missing="pairwise")


def test_fleiss_kappa_null_se_when_every_unit_has_the_same_number_of_ratings() -> None:
    # each unit has exactly 3 of its 4 ratings: classical Fleiss with m = 3 on the rest
    data = [[1, 1, 2, N], [N, 2, 2, 2], [3, 3, N, 1], [1, N, 1, 1], [2, 3, N, 3]]
    compact = [[v for v in u if v is not None] for u in data]
    r = fleiss_kappa(data, [1, 2, 3])
    ref = fleiss_kappa(compact, [1, 2, 3])
    assert r.value == pytest.approx(ref.value, abs=1e-15)
    assert r.se == pytest.approx(ref.se, abs=1e-15) and r.n_raters == 4
    assert r.per_category == pytest.approx(ref.per_category)


# [README] gwet.ac1.dist, fleiss.kappa.dist, krippen.alpha.dist and bp.coeff.dist on
# distrib.6raters: coeff, stderr, conf.int (3 decimals), pe (R's 7 significant digits).
DISTRIB_README = {
    "gwet_ac1": ("0.4448007", "0.08418757", (0.264, 0.625), "0.1914815"),
    "fleiss": ("0.4139265", "0.08119291", (0.24, 0.588), "0.2340741"),
    "krippendorff_alpha": ("0.4204384", "0.08243228", (0.244, 0.597), "0.2340741"),
    "brennan_prediger": ("0.4388889", "0.08312142", (0.261, 0.617), "0.2"),
}
# [WEIGHTING] the same with weights = quadratic.weights(1:q).
DISTRIB_QUADRATIC = {
    "gwet_ac1": ("0.4837438", "0.1058227", (0.257, 0.711), "0.7180556"),
    "fleiss": ("0.2511909", "0.1457381", (-0.061, 0.564), "0.8056173"),
    "krippendorff_alpha": ("0.259511", "0.133958", (-0.028, 0.547), "0.8056173"),
    "brennan_prediger": ("0.4177778", "0.1067493", (0.189, 0.647), "0.75"),
}


@pytest.mark.parametrize(
    ("weights", "expected"), [(None, DISTRIB_README), ("quadratic", DISTRIB_QUADRATIC)]
)
def test_distrib_6raters_counts_match_irrcac(weights: str | None, expected: dict[str, Any]) -> None:
    table = multi_rater_counts(DISTRIB_6RATERS, DIAGNOSES, weights)
    for name, (value, se, ci, pe) in expected.items():
        r = row(table, name)
        assert r7(r["value"], value) and r7(r["se"], se), name
        assert (round(r["ci_low"], 3), round(r["ci_high"], 3)) == ci, name
        assert r7(r["pe"], pe) and r["status"] == "ok", name
    # [README]/[WEIGHTING] pa printed by every *.dist function: 0.5511111 / 0.8544444
    assert r7(
        row(table, "percent_agreement")["value"], "0.5511111" if weights is None else "0.8544444"
    )
    conger = row(table, "conger")
    assert conger["status"] == "not_applicable" and conger["value"] is None


# [PORT] test_*.py ``test_*_raw_ben_gerry`` (digits=3): value, se, CI, pe.
BEN_GERRY_PORT = {
    "fleiss": (0.649, 0.191, (0.228, 1.0), 0.222),
    "conger": (0.657, 0.179, (0.262, 1.0), 0.205),
    "gwet_ac1": (0.661, 0.184, (0.257, 1.0), 0.194),
    "brennan_prediger": (0.659, 0.185, (0.251, 1.0), 0.200),
    "krippendorff_alpha": (0.665, 0.180, (0.264, 1.0), 0.223),
}
# [PORT] ``test_*_raw_g1g2``.
G1G2_PORT = {
    "fleiss": (0.657, 0.150, (0.333, 0.981), 0.252),
    "conger": (0.659, 0.146, (0.343, 0.974), 0.249),
    "gwet_ac1": (0.685, 0.134, (0.396, 0.973), 0.187),
    "brennan_prediger": (0.679, 0.136, (0.385, 0.974), 0.200),
    "krippendorff_alpha": (0.632, 0.150, (0.306, 0.958), 0.261),
}


def check3(r: dict[str, Any], value: float, se: float, ci: tuple[float, float], pe: float) -> None:
    got = (r["value"], r["se"], r["ci_low"], r["ci_high"], r["pe"])
    assert tuple(round(x, 3) for x in got) == (value, se, *ci, pe)


@pytest.mark.parametrize("name", list(BEN_GERRY_PORT))
def test_ben_gerry_matches_irrcac(name: str) -> None:
    table = multi_rater(list(zip(BEN, GERRY, strict=True)), ABCDE)
    check3(row(table, name), *BEN_GERRY_PORT[name])
    # [PORT] pa = 0.727 (8 of the 11 units both rated); unit 10, rated once, is in p_e
    assert round(row(table, "percent_agreement")["value"], 3) == 0.727


@pytest.mark.parametrize("name", list(G1G2_PORT))
def test_raw_g1g2_matches_irrcac(name: str) -> None:
    check3(row(multi_rater(pd.DataFrame(RAW_G1G2), ABCDE), name), *G1G2_PORT[name])


def test_dist_g1g2_counts_path() -> None:
    raw = pd.DataFrame(RAW_G1G2)
    counts = pd.DataFrame(DIST_G1G2)
    # cac.dist.g1g2 is cac.raw.g1g2 counted per category
    tallied = pd.DataFrame({c: (raw == c).sum(axis=1) for c in ABCDE})
    pd.testing.assert_frame_equal(tallied, counts, check_dtype=False)
    table = multi_rater_counts(counts, ABCDE)
    # fleiss/gwet/bp.*.dist apply the *.raw formulas to these counts, so the [PORT] pins hold
    for name in ("fleiss", "gwet_ac1", "brennan_prediger"):
        check3(row(table, name), *G1G2_PORT[name])
    raw_table = multi_rater(raw, ABCDE)
    for name in ("percent_agreement", "fleiss", "gwet_ac1", "brennan_prediger"):
        assert row(table, name) == pytest.approx(row(raw_table, name)), name
    # krippen.alpha.dist: same alpha and p_e as the raw function, its own variance
    alpha, raw_alpha = row(table, "krippendorff_alpha"), row(raw_table, "krippendorff_alpha")
    assert alpha["value"] == pytest.approx(raw_alpha["value"]) and round(alpha["value"], 3) == 0.632
    assert alpha["se"] != pytest.approx(raw_alpha["se"])


def test_custom_weight_matrix() -> None:
    # [PORT] test_conger_kappa_raw4raters_custom_weights / test_bp_kappa_raw4raters_custom_weights
    w = [
        [1.00, 0.75, 0.50, 0.25, 0.00],
        [0.00, 1.00, 0.75, 0.50, 0.25],
        [0.25, 0.00, 1.00, 0.75, 0.50],
        [0.50, 0.25, 0.00, 1.00, 0.75],
        [0.75, 0.50, 0.25, 0.00, 1.00],
    ]
    table = multi_rater(RAW4RATERS, CATS5, np.array(w))
    check3(row(table, "conger"), 0.763, 0.149, (0.435, 1.0), 0.521)
    check3(row(table, "brennan_prediger"), 0.773, 0.145, (0.454, 1.0), 0.500)
    assert round(row(table, "percent_agreement")["value"], 3) == 0.886
    assert table.attrs["weights"] == "custom"


def test_named_weights_are_the_rank_matrices() -> None:
    q = len(CATS5)
    idx = np.arange(q)
    linear = 1 - np.abs(idx[:, None] - idx[None, :]) / (q - 1)
    a = multi_rater(RAW4RATERS, CATS5, "linear")
    b = multi_rater(RAW4RATERS, CATS5, linear)
    pd.testing.assert_frame_equal(a.drop(columns="status"), b.drop(columns="status"))
    # [PORT] test_fleiss_kappa_raw4raters_linear_weights: 0.818, se 0.149, CI (0.491, 1), pe 0.667
    check3(row(a, "fleiss"), 0.818, 0.149, (0.491, 1.0), 0.667)


def test_krippendorff_and_two_rater_values_agree_with_evalkit() -> None:
    table = multi_rater(RAW4RATERS, CATS5)
    raters_by_units = [list(col) for col in zip(*RAW4RATERS, strict=True)]
    alpha = krippendorff_alpha(raters_by_units, "nominal", CATS5).value
    assert row(table, "krippendorff_alpha")["value"] == pytest.approx(alpha, abs=1e-12)
    # on complete pairs (gwet_ac1 drops unit 10 altogether; irrCAC keeps it in p_e)
    ben, gerry = BEN[:9] + BEN[10:], GERRY[:9] + GERRY[10:]
    two = multi_rater(list(zip(ben, gerry, strict=True)), ABCDE)
    assert row(two, "gwet_ac1")["value"] == pytest.approx(gwet_ac1(ben, gerry, ABCDE).value)
    with_missing = multi_rater(list(zip(BEN, GERRY, strict=True)), ABCDE)
    assert row(with_missing, "gwet_ac1")["value"] != pytest.approx(
        gwet_ac1(BEN, GERRY, ABCDE).value
    )


def wide_to_long(data: list[list[Any]]) -> pd.DataFrame:
    recs = [
        {"unit": f"u{i}", "rater": f"r{j}", "label": v}
        for i, unit in enumerate(data)
        for j, v in enumerate(unit)
    ]
    return pd.DataFrame(recs)


def test_long_frame_and_mapping_give_the_wide_table() -> None:
    wide = multi_rater(RAW4RATERS, CATS5, "quadratic")
    long = wide_to_long(RAW4RATERS)
    pd.testing.assert_frame_equal(multi_rater(long, CATS5, "quadratic"), wide)
    # rows for missing ratings may be left out of the long frame altogether
    present = long[long["label"].notna()].sample(frac=1.0, random_state=3)
    pd.testing.assert_frame_equal(multi_rater(present, CATS5, "quadratic"), wide)
    mapping: dict[str, dict[str, Any]] = {}
    for rec in present.itertuples():
        mapping.setdefault(rec.rater, {})[rec.unit] = rec.label
    pd.testing.assert_frame_equal(multi_rater(mapping, CATS5, "quadratic"), wide)
    frame = pd.DataFrame(RAW4RATERS, columns=["A", "B", "C", "D"], dtype=float)
    pd.testing.assert_frame_equal(multi_rater(frame, CATS5, "quadratic"), wide)
    pd.testing.assert_frame_equal(multi_rater(frame.to_numpy(), CATS5, "quadratic"), wide)


def test_listwise_is_the_complete_units_only() -> None:
    complete = [u for u in RAW4RATERS if None not in u]
    listwise = multi_rater(RAW4RATERS, CATS5, missing="listwise")
    pd.testing.assert_frame_equal(
        listwise.drop(columns="status"), multi_rater(complete, CATS5).drop(columns="status")
    )
    assert list(listwise["n_units"]) == [8] * 6
    with pytest.raises(ValueError, match="unknown missing"):
        multi_rater(RAW4RATERS, CATS5, missing="pairwise")


def test_a_unit_rated_once_enters_the_chance_term_only() -> None:
    # unit 12 of cac.raw4raters is rated once (by rater 3)
    without = multi_rater(RAW4RATERS[:11], CATS5)
    full = multi_rater(RAW4RATERS, CATS5)
    for name in ("percent_agreement", "krippendorff_alpha"):
        assert row(full, name)["value"] == pytest.approx(row(without, name)["value"])
    assert row(full, "fleiss")["pe"] != pytest.approx(row(without, "fleiss")["pe"])
    assert row(full, "fleiss")["n_units"] == 12 and row(without, "fleiss")["n_units"] == 11
    only_once = multi_rater([[1, N], [N, 2], [3, N]], [1, 2, 3])
    assert set(only_once["status"]) == {"no_pairs"} and only_once["value"].isna().all()


def test_single_labeler_statuses() -> None:
    for data in ([[1], [2], [1]], [[1, N], [2, N], [3, N]], {"ann": {"u1": 1, "u2": 2}}):
        table = multi_rater(data, [1, 2, 3])
        assert set(table["status"]) == {"single_rater"}, data
        assert table["value"].isna().all() and table.attrs["n_raters"] == 1
    assert "single_rater" in STATUSES and "single_category" in STATUSES


def test_every_rating_the_same_category() -> None:
    table = multi_rater([["a", "a", "a"], ["a", "a", N], ["a", "a", "a"]], ABCDE)
    for name in ("fleiss", "conger", "krippendorff_alpha"):
        r = row(table, name)
        assert r["status"] == "no_variation" and r["value"] is None and r["pe"] == 1.0
    for name in ("percent_agreement", "gwet_ac1", "brennan_prediger"):
        r = row(table, name)
        assert r["status"] == "single_category" and r["value"] == 1.0


def test_a_constant_rater_among_others_is_still_ok() -> None:
    data = [[1, 1, 2], [2, 1, 2], [3, 1, 3], [1, 1, 1], [2, 1, 2]]
    table = multi_rater(data, [1, 2, 3])
    assert set(table["status"]) == {"ok"}
    assert table[["value", "se", "ci_low", "ci_high", "pe"]].notna().all().all()
    assert any("single category" in note for note in table.attrs["notes"])


def test_too_few_units() -> None:
    table = multi_rater([[1, 2, 2]], [1, 2, 3])
    assert set(table["status"]) == {"too_few_pairs"} and table["value"].isna().all()


def test_interval_level_and_clipping() -> None:
    t95 = multi_rater(RAW4RATERS, CATS5)
    t80 = multi_rater(RAW4RATERS, CATS5, level=0.80)
    assert (t80["ci_low"] > t95["ci_low"]).all()
    assert (t95["ci_high"] <= 1.0).all() and (t95["ci_low"] >= -1.0).all()
    bad = multi_rater([[1, 2], [2, 1], [1, 2], [2, 1], [1, 1]], [1, 2])
    assert (bad["ci_low"] >= -1.0).all()
    for level in (0, 1, 1.5, "0.9", True):
        with pytest.raises(ValueError, match="level"):
            multi_rater(RAW4RATERS, CATS5, level=level)


def test_never_nan() -> None:
    cases = [
        ([[1, 1], [1, 1]], [1, 2]),
        ([[1, 2], [2, 1]], [1, 2]),
        ([[1, N], [N, 1], [1, 1]], [1, 2]),
        ([[1, 1, 1], [2, 2, 2]], [1, 2]),
        ([], [1, 2]),
    ]
    for data, cats in cases:
        table = multi_rater(data, cats)
        for col in ("value", "se", "ci_low", "ci_high", "pe"):
            assert not any(isinstance(v, float) and math.isnan(v) for v in table[col].tolist())
        assert set(table["status"]) <= set(STATUSES)


def test_categories_outside_the_declared_ones_name_the_position() -> None:
    with pytest.raises(ValueError, match=r"data\[1\]\[2\] = 9 is not one of the categories"):
        multi_rater([[1, 2, 3], [1, 2, 9]], [1, 2, 3])
    long = wide_to_long([[1, 2, 3], [1, 2, 9]])
    with pytest.raises(ValueError, match=r"data\['label'\]\[5\] = 9"):
        multi_rater(long, [1, 2, 3])
    with pytest.raises(ValueError, match=r"data\['r2'\]\['u3'\] = 'x'"):
        multi_rater({"r1": {"u3": "a"}, "r2": {"u1": "a", "u3": "x"}}, ABCDE)
    with pytest.raises(ValueError, match="True == 1"):
        multi_rater([[1, 0], [True, 1]], [0, 1])


def test_bad_input() -> None:
    with pytest.raises(ValueError, match="2-dimensional"):
        multi_rater([1, 2, 3], [1, 2, 3])
    with pytest.raises(ValueError, match="2-dimensional"):
        multi_rater(np.array([1, 2, 3]), [1, 2, 3])
    with pytest.raises(ValueError, match="same number of rater columns"):
        multi_rater([[1, 2], [1]], [1, 2])
    with pytest.raises(ValueError, match="twice for rater"):
        multi_rater(pd.DataFrame({"unit": [1, 1], "rater": ["a", "a"], "label": [1, 2]}), [1, 2])
    with pytest.raises(ValueError, match="missing unit id"):
        multi_rater(pd.DataFrame({"unit": [1, N], "rater": ["a", "b"], "label": [1, 2]}), [1, 2])
    with pytest.raises(ValueError, match="mapping unit"):
        multi_rater({"r1": [1, 2]}, [1, 2])
    with pytest.raises(ValueError, match="unknown weights"):
        multi_rater(RAW4RATERS, CATS5, "cubic")
    with pytest.raises(ValueError, match="5 × 5"):
        multi_rater(RAW4RATERS, CATS5, np.eye(4))
    with pytest.raises(ValueError, match="diagonal"):
        multi_rater(RAW4RATERS, CATS5, np.full((5, 5), 0.5))


def test_counts_validation() -> None:
    with pytest.raises(ValueError, match="one column per category"):
        multi_rater_counts([[1, 2]], [1, 2, 3])
    with pytest.raises(ValueError, match=r"counts\[1\]\[0\] = -1"):
        multi_rater_counts([[1, 2], [-1, 3]], [1, 2])
    with pytest.raises(ValueError, match=r"counts\[0\]\[1\] = 1.5"):
        multi_rater_counts([[1, 1.5]], [1, 2])
    with pytest.raises(ValueError, match="2-dimensional"):
        multi_rater_counts([1, 2], [1, 2])
    table = multi_rater_counts([[0, 0], [1, 0], [2, 1], [0, 3]], [1, 2])
    assert any("no rating dropped" in note for note in table.attrs["notes"])
    assert set(multi_rater_counts([[1, 0], [0, 1]], [1, 2])["status"]) == {"no_pairs"}
