"""Fleiss' kappa: Fleiss (1971) example, Wikipedia example, the null SE, edge cases."""

from __future__ import annotations

import numpy as np
import pytest
from statsmodels.stats.inter_rater import aggregate_raters
from statsmodels.stats.inter_rater import fleiss_kappa as sm_fleiss_kappa

from evalkit.agreement import fleiss_kappa

# Fleiss (1971) Psychol Bull 76:378, Table 1: 30 patients × 6 psychiatrists, 5 diagnoses
# (as R irr's `diagnoses` and statsmodels' test data, coded 1..5).
DIAGNOSES = np.array(
    [
        [4, 4, 4, 4, 4, 4],
        [2, 2, 2, 5, 5, 5],
        [2, 3, 3, 3, 3, 5],
        [5, 5, 5, 5, 5, 5],
        [2, 2, 2, 4, 4, 4],
        [1, 1, 3, 3, 3, 3],
        [3, 3, 3, 3, 5, 5],
        [1, 1, 3, 3, 3, 4],
        [1, 1, 4, 4, 4, 4],
        [5, 5, 5, 5, 5, 5],
        [1, 4, 4, 4, 4, 4],
        [1, 2, 4, 4, 4, 4],
        [2, 2, 2, 3, 3, 3],
        [1, 4, 4, 4, 4, 4],
        [2, 2, 4, 4, 4, 5],
        [3, 3, 3, 3, 3, 5],
        [1, 1, 1, 4, 5, 5],
        [1, 1, 1, 1, 1, 2],
        [2, 2, 4, 4, 4, 4],
        [1, 3, 3, 5, 5, 5],
        [5, 5, 5, 5, 5, 5],
        [2, 4, 4, 4, 4, 4],
        [2, 2, 4, 5, 5, 5],
        [1, 1, 4, 4, 4, 4],
        [1, 4, 4, 4, 4, 5],
        [2, 2, 2, 2, 2, 4],
        [1, 1, 1, 1, 5, 5],
        [2, 2, 4, 4, 4, 4],
        [1, 3, 3, 3, 3, 3],
        [5, 5, 5, 5, 5, 5],
    ]
)
CATS = [1, 2, 3, 4, 5]

# Wikipedia "Fleiss' kappa" worked example: 10 subjects, 14 raters, counts per category.
WIKI_COUNTS = np.array(
    [
        [0, 0, 0, 0, 14],
        [0, 2, 6, 4, 2],
        [0, 0, 3, 5, 6],
        [0, 3, 9, 2, 0],
        [2, 2, 8, 1, 1],
        [7, 7, 0, 0, 0],
        [3, 2, 6, 3, 0],
        [2, 5, 3, 2, 2],
        [6, 5, 2, 1, 0],
        [0, 2, 2, 3, 7],
    ]
)


def irr_null_se(counts: np.ndarray) -> float:
    """The variance line of R irr::kappam.fleiss (Fleiss, Nee & Landis 1979), verbatim."""
    ns, nr = counts.shape[0], counts[0].sum()
    pj = counts.sum(axis=0) / (ns * nr)
    qj = 1 - pj
    var = (2 / ((pj * qj).sum() ** 2 * (ns * nr * (nr - 1)))) * (
        (pj * qj).sum() ** 2 - (pj * qj * (qj - pj)).sum()
    )
    return float(np.sqrt(var))


def test_fleiss_1971_example() -> None:
    r = fleiss_kappa(DIAGNOSES, CATS)
    # Fleiss (1971): kappa = .430
    assert round(r.value, 3) == 0.430
    assert r.n_units == 30 and r.n_raters == 6 and r.status == "ok"
    counts, _ = aggregate_raters(DIAGNOSES)
    assert r.value == pytest.approx(sm_fleiss_kappa(counts), abs=1e-12)
    # Null SE: cross-checked only, against irr's variance formula (z = 17.65).
    assert r.se == pytest.approx(irr_null_se(counts), abs=1e-12)
    assert r.z == pytest.approx(r.value / irr_null_se(counts))


def test_first_three_raters_match_irr_output() -> None:
    # irr::kappam.fleiss on the first three raters of `diagnoses`, output quoted at
    # blog.csdn.net/weixin_39974030/article/details/117938889: Kappa = 0.534, z = 9.89
    r = fleiss_kappa(DIAGNOSES[:, :3], CATS)
    assert round(r.value, 3) == 0.534
    assert round(r.z, 2) == 9.89


def test_wikipedia_example() -> None:
    # Wikipedia "Fleiss' kappa": kappa = 0.210 (also pinned in statsmodels' tests)
    units = []
    for row in WIKI_COUNTS:
        units.append([c for c, k in zip("abcde", row, strict=True) for _ in range(k)])
    r = fleiss_kappa(units, list("abcde"))
    assert round(r.value, 3) == 0.210


def test_per_category_kappas_match_irr_detail_formula() -> None:
    r = fleiss_kappa(DIAGNOSES, CATS)
    counts, _ = aggregate_raters(DIAGNOSES)
    ns, nr = counts.shape[0], counts[0].sum()
    pj = counts.sum(axis=0) / (ns * nr)
    pjk = ((counts**2).sum(axis=0) - ns * nr * pj) / (ns * nr * (nr - 1) * pj)
    expected = (pjk - pj) / (1 - pj)  # irr::kappam.fleiss(detail = TRUE)
    for c, e in zip(CATS, expected, strict=True):
        assert r.per_category[c] == pytest.approx(e, abs=1e-12)


def test_missing_units_dropped_listwise_and_edge_statuses() -> None:
    data = [list(row) for row in DIAGNOSES]
    data[0][2] = None
    data[5][0] = float("nan")
    r = fleiss_kappa(data, CATS, missing="listwise")
    assert r.n_units == 28 and r.n_missing == 2 and r.status == "ok"
    assert fleiss_kappa([[1, None]], CATS).status == "no_pairs"
    assert fleiss_kappa([[1, 2]], CATS).status == "too_few_pairs"
    same = fleiss_kappa([[3, 3], [3, 3]], CATS)
    assert same.status == "no_variation" and same.value is None and same.se is None


def test_bad_input() -> None:
    with pytest.raises(ValueError, match="at least 2 raters"):
        fleiss_kappa([[1], [2]], CATS)
    with pytest.raises(ValueError, match="same number"):
        fleiss_kappa([[1, 2], [1, 2, 3]], CATS)
    with pytest.raises(ValueError, match=r"data\[1\]\[1\] = 9"):
        fleiss_kappa([[1, 2], [1, 9]], CATS)
