"""Frozen result records for the agreement statistics, and their JSON-safe ``to_dict``.

Every number a record holds is a plain Python ``float`` or ``int``, or ``None`` when the
number does not exist for these data (never a bare NaN).  ``status`` says why:

``"ok"``
    the value is meaningful.  Missing pairs dropped jointly do not change the status;
    they are counted in ``n_missing`` and described in ``notes``.
``"single_rater_constant"``
    one rater used a single category: Cohen's kappa is exactly 0 by construction
    (p_o = p_e), so ``value`` is 0.0 and there is no standard error or interval.
``"both_raters_constant"``
    both raters used a single category: kappa is 0/0 (same category) or 0 by construction
    (different categories); either way it carries no information and ``value`` is None.
``"too_few_pairs"``
    fewer than 2 complete pairs (or units) remain after dropping missing ones.
``"no_pairs"``
    no complete pair (or pairable unit) at all.
``"no_variation"``
    every rating falls in one category (multi-rater statistics): chance agreement is 1
    and the coefficient is undefined.
``"single_category"``
    every rating falls in one category, for a multi-rater coefficient whose chance term
    does not make it undefined (percent agreement, Gwet's AC1/AC2, Brennan–Prediger in
    :func:`~evalkit.agreement.multi_rater`): the value is given (1.0 with unit diagonal
    weights) but it only says that nobody ever used another category.
``"single_rater"``
    only one rater (column) holds any rating: multi-rater agreement needs two raters, so
    every coefficient is None.
``"not_applicable"``
    the coefficient cannot be computed from this form of the data: Conger's kappa needs to
    know which rater gave which rating, which a units × categories count table does not
    say (:func:`~evalkit.agreement.multi_rater_counts`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any

import numpy as np
import pandas as pd

from evalkit._display import interval, num, record_card, record_items, record_repr

#: Two-sided 95% normal quantile, for Wald intervals.
Z95 = 1.959963984540054

OK = "ok"
SINGLE_RATER_CONSTANT = "single_rater_constant"
BOTH_RATERS_CONSTANT = "both_raters_constant"
TOO_FEW_PAIRS = "too_few_pairs"
NO_PAIRS = "no_pairs"
NO_VARIATION = "no_variation"
SINGLE_CATEGORY = "single_category"
SINGLE_RATER = "single_rater"
NOT_APPLICABLE = "not_applicable"

STATUSES = (
    OK,
    SINGLE_RATER_CONSTANT,
    BOTH_RATERS_CONSTANT,
    TOO_FEW_PAIRS,
    NO_PAIRS,
    NO_VARIATION,
    SINGLE_CATEGORY,
    SINGLE_RATER,
    NOT_APPLICABLE,
)


def jsonable(obj: Any) -> Any:
    """Convert ``obj`` to plain JSON types (numpy scalars, NaN, frames, records, tuples)."""
    if obj is None or isinstance(obj, bool | str):
        return obj
    if isinstance(obj, np.bool_):
        return bool(obj)
    if isinstance(obj, int | np.integer):
        return int(obj)
    if isinstance(obj, float | np.floating):
        value = float(obj)
        return None if not math.isfinite(value) else value
    if isinstance(obj, pd.DataFrame):
        return {
            "index_name": jsonable(obj.index.name),
            "columns_name": jsonable(obj.columns.name),
            "index": [jsonable(v) for v in obj.index],
            "columns": [jsonable(v) for v in obj.columns],
            "data": [[jsonable(v) for v in row] for row in obj.to_numpy().tolist()],
        }
    if hasattr(obj, "to_dict") and not isinstance(obj, Mapping | pd.Series):
        return obj.to_dict()
    if isinstance(obj, Mapping):
        return {_json_key(k): jsonable(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple | np.ndarray | pd.Series):
        return [jsonable(v) for v in list(obj)]
    return str(obj)


def _json_key(key: Any) -> str | int | float | bool | None:
    key = jsonable(key)
    if key is None or isinstance(key, str | int | float | bool):
        return key
    return str(key)


class _Record:
    """Mixin: ``to_dict`` over dataclass fields, JSON-serialisable; a short ``repr`` and an
    HTML card in a notebook (:mod:`evalkit._display`: numbers to 3 decimals, empty fields
    left out). Subclasses are dataclasses with ``repr=False``, so that this ``repr`` is
    theirs."""

    def to_dict(self) -> dict[str, Any]:
        return {f.name: jsonable(getattr(self, f.name)) for f in fields(self)}  # type: ignore[arg-type]

    def _display_title(self) -> str:
        """The card's title: the class name, and the statistic or test when there is one."""
        what = getattr(self, "statistic", None)
        what = what if isinstance(what, str) else getattr(self, "test", None)
        return f"{type(self).__name__}: {what}" if isinstance(what, str) else type(self).__name__

    def _display_subtitle(self) -> str:
        """The headline number and its interval, when the record has them."""
        value = getattr(self, "value", getattr(self, "estimate", None))
        low = getattr(self, "ci_low", getattr(self, "low", None))
        high = getattr(self, "ci_high", getattr(self, "high", None))
        if value is None or isinstance(value, bool):
            return ""
        ci = f", 95% CI {interval(low, high)}" if low is not None and high is not None else ""
        return f"= {num(value)}{ci}"

    def __repr__(self) -> str:
        return record_repr(type(self).__name__, record_items(self))

    def _repr_html_(self) -> str:
        return record_card(
            self._display_title(), record_items(self), subtitle=self._display_subtitle()
        )


@dataclass(frozen=True, repr=False)
class AgreementResult(_Record):
    """A two-rater chance-corrected agreement coefficient (kappa, AC1/AC2, Brennan–Prediger).

    ``p_observed`` and ``p_expected`` are the (weighted) observed and chance agreement the
    coefficient ``(p_o - p_e) / (1 - p_e)`` was built from.  ``se`` is the large-sample
    standard error named in the producing function's docstring; ``ci_low``/``ci_high`` are
    the 95% Wald limits ``value ± 1.959964·se`` clipped to the statistic's range [-1, 1];
    a clipped limit is said in ``notes`` (the Wald interval is symmetric and knows no bounds,
    so near perfect agreement it would otherwise run past 1).
    """

    statistic: str
    value: float | None
    se: float | None
    ci_low: float | None
    ci_high: float | None
    p_observed: float | None
    p_expected: float | None
    n: int
    n_missing: int
    status: str
    weights: str | None
    categories: tuple[Any, ...]
    notes: tuple[str, ...] = ()

    @classmethod
    def with_wald_interval(
        cls,
        statistic: str,
        value: float | None,
        se: float | None,
        p_observed: float | None,
        p_expected: float | None,
        *,
        n: int,
        n_missing: int,
        status: str,
        weights: str | None,
        categories: tuple[Any, ...],
        notes: list[str] | tuple[str, ...] = (),
    ) -> AgreementResult:
        """A result whose 95% Wald interval ``value ± 1.959964·se`` is filled in when both
        the value and its standard error exist (None otherwise, never a fake interval),
        clipped to [-1, 1] with a note saying which limit was clipped and from what."""
        lo = hi = None
        notes = list(notes)
        if value is not None and se is not None:
            lo, hi = value - Z95 * se, value + Z95 * se
            if lo < -1.0 or hi > 1.0:
                notes.append(
                    f"Wald interval [{lo:.3f}, {hi:.3f}] clipped to [-1, 1]: the statistic "
                    "cannot leave that range"
                )
                lo, hi = max(lo, -1.0), min(hi, 1.0)
        return cls(
            statistic=statistic,
            value=value,
            se=se,
            ci_low=lo,
            ci_high=hi,
            p_observed=p_observed,
            p_expected=p_expected,
            n=n,
            n_missing=n_missing,
            status=status,
            weights=weights,
            categories=categories,
            notes=tuple(notes),
        )

    @property
    def n_dropped(self) -> int:
        """Alias of ``n_missing``: pairs dropped jointly because either rating was missing."""
        return self.n_missing


@dataclass(frozen=True, repr=False)
class AlphaResult(_Record):
    """Krippendorff's alpha from a raters × units reliability-data matrix."""

    value: float | None
    status: str
    level: str
    n_raters: int
    n_units: int
    n_pairable_units: int
    n_skipped_units: int
    n_values: int
    observed_disagreement: float | None
    expected_disagreement: float | None
    categories: tuple[Any, ...]
    notes: tuple[str, ...] = ()


@dataclass(frozen=True, repr=False)
class FleissResult(_Record):
    """Fleiss' kappa for a fixed number of raters per unit.

    ``se`` is the standard error under the null hypothesis kappa = 0 (Fleiss, Nee & Landis
    1979); it is for the test ``z = value / se``, not for a confidence interval.
    """

    value: float | None
    se: float | None
    z: float | None
    p_value: float | None
    p_observed: float | None
    p_expected: float | None
    n_units: int
    n_raters: int
    n_missing: int
    status: str
    categories: tuple[Any, ...]
    per_category: dict[Any, float | None] = field(default_factory=dict)
    notes: tuple[str, ...] = ()


@dataclass(frozen=True, repr=False)
class BootstrapResult(_Record):
    """A percentile bootstrap interval and how many resamples it rests on."""

    statistic: str
    weights: str | None
    estimate: float | None
    low: float | None
    high: float | None
    level: float
    n_resamples: int
    n_resamples_used: int
    n_degenerate: int
    n: int
    n_missing: int
    n_clusters: int | None
    seed: int | None
    status: str
    notes: tuple[str, ...] = ()

    @property
    def interval(self) -> tuple[float | None, float | None]:
        return (self.low, self.high)


@dataclass(frozen=True, repr=False)
class HomogeneityTest(_Record):
    """A chi-square test on the square table (Stuart–Maxwell or Bowker)."""

    test: str
    statistic: float | None
    df: int | None
    p_value: float | None
    status: str
    categories_used: tuple[Any, ...]
    notes: tuple[str, ...] = ()


@dataclass(frozen=True, repr=False)
class GatePowerResult(_Record):
    """Simulated probability that a study of ``n`` pairs passes a kappa gate."""

    power: float
    rule: str
    p_pass_point: float
    p_pass_lower_bound: float
    true_kappa: float
    n: int
    threshold: float
    n_sim: int
    seed: int
    n_degenerate: int
    mean_kappa: float | None
    kappa_max: float
    judge_marginals: tuple[float, ...]
    human_marginals: tuple[float, ...]
    joint: tuple[tuple[float, ...], ...]
