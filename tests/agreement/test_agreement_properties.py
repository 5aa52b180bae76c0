"""Property-based tests (hypothesis): symmetry, relabeling, perfect agreement, bounds."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from hypothesis import example, given, settings
from hypothesis import strategies as st

from evalkit.agreement import (
    brennan_prediger,
    cohens_kappa,
    diagnose,
    gwet_ac1,
    krippendorff_alpha,
)
from evalkit.agreement._krippendorff import alpha_from_table

# derandomize: CI runs the same examples every time, so a red build is reproducible.
SETTINGS = settings(max_examples=120, deadline=None, derandomize=True)
WEIGHTS = st.sampled_from([None, "linear", "quadratic"])


@st.composite
def rated_pairs(draw: Any, missing: bool = True) -> tuple[list[Any], list[Any], list[str]]:
    q = draw(st.integers(min_value=2, max_value=5))
    cats = [f"c{i}" for i in range(q)]
    value = st.sampled_from(cats)
    if missing:
        value = st.one_of(value, value, value, st.none())
    n = draw(st.integers(min_value=0, max_value=40))
    a = draw(st.lists(value, min_size=n, max_size=n))
    b = draw(st.lists(value, min_size=n, max_size=n))
    return a, b, cats


def close(x: float | None, y: float | None) -> bool:
    if x is None or y is None:
        return x is y
    return math.isclose(x, y, rel_tol=1e-9, abs_tol=1e-12)


@SETTINGS
@given(rated_pairs(), WEIGHTS)
# Found by hypothesis: kappa ~ 0 with a variance that is rounding noise; the two orders
# gave SEs of 7.7e-9 and 9.5e-9 before tiny variances were taken as 0.
@example((["c0", "c0", "c1", None], ["c1", "c2", "c3", "c0"], ["c0", "c1", "c2", "c3"]), "linear")
def test_kappa_is_symmetric_in_the_raters(data: Any, weights: str | None) -> None:
    a, b, cats = data
    ab = cohens_kappa(a, b, cats, weights=weights)
    ba = cohens_kappa(b, a, cats, weights=weights)
    assert ab.status == ba.status
    assert close(ab.value, ba.value) and close(ab.se, ba.se)
    assert close(gwet_ac1(a, b, cats, weights).value, gwet_ac1(b, a, cats, weights).value)


@SETTINGS
@given(rated_pairs(), st.randoms(use_true_random=False))
def test_unweighted_coefficients_are_invariant_to_relabeling(data: Any, rnd: Any) -> None:
    a, b, cats = data
    perm = list(cats)
    rnd.shuffle(perm)
    rename = {c: f"new-{p}" for c, p in zip(cats, perm, strict=True)}
    new_cats = [rename[c] for c in perm]  # a different order of the renamed categories

    def f(xs: list[Any]) -> list[Any]:
        return [rename[x] if x is not None else None for x in xs]

    for fn in (cohens_kappa, gwet_ac1, brennan_prediger):
        old = fn(a, b, cats)
        new = fn(f(a), f(b), new_cats)
        assert old.status == new.status
        assert close(old.value, new.value) and close(old.se, new.se)


@SETTINGS
@given(rated_pairs(missing=False), WEIGHTS)
def test_perfect_agreement_gives_one(data: Any, weights: str | None) -> None:
    a, _, cats = data
    if len(set(a)) < 2:
        return
    assert cohens_kappa(a, a, cats, weights=weights).value == 1.0
    assert math.isclose(gwet_ac1(a, a, cats, weights).value, 1.0)
    assert math.isclose(brennan_prediger(a, a, cats, weights).value, 1.0)
    assert krippendorff_alpha([a, a], "nominal").value == 1.0


@SETTINGS
@given(rated_pairs(), WEIGHTS)
def test_bounds(data: Any, weights: str | None) -> None:
    a, b, cats = data
    k = cohens_kappa(a, b, cats, weights=weights)
    if k.value is not None:
        assert -1.0 - 1e-12 <= k.value <= 1.0 + 1e-12
        assert k.se is None or k.se >= 0.0
    for r in (gwet_ac1(a, b, cats, weights), brennan_prediger(a, b, cats, weights)):
        if r.value is not None:
            assert r.value <= 1.0 + 1e-12
            # Unweighted, p_e <= 1/q so the minimum is -1/(q-1); weighted AC2 and BP can
            # fall below -1 because their chance agreement can exceed 1/2.
            if weights is None:
                assert r.value >= -1.0 / (len(cats) - 1) - 1e-12
    if weights is None:
        d = diagnose(a, b, cats)
        if d.kappa.value is not None and d.kappa_max is not None:
            assert d.kappa.value <= d.kappa_max + 1e-12


@SETTINGS
@given(rated_pairs())
def test_no_nan_anywhere_and_alpha_matches_table_shortcut(data: Any) -> None:
    a, b, cats = data
    d = diagnose(a, b, cats).to_dict()

    def walk(x: Any) -> None:
        if isinstance(x, float):
            assert math.isfinite(x)
        elif isinstance(x, dict):
            for v in x.values():
                walk(v)
        elif isinstance(x, list):
            for v in x:
                walk(v)

    walk(d)
    alpha = krippendorff_alpha([a, b], "nominal", categories=cats)
    table = np.array(d["confusion"]["data"], dtype=float)
    if alpha.value is not None:
        shortcut = alpha_from_table(table)[0]
        assert shortcut is not None and math.isclose(alpha.value, shortcut, abs_tol=1e-12)
        swapped = krippendorff_alpha([b, a], "nominal", categories=cats).value
        assert swapped is not None and math.isclose(alpha.value, swapped, abs_tol=1e-12)
