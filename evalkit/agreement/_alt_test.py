"""The alternative-annotator test (alt-test) of Calderon, Reichart & Dror (ACL 2025).

Can the judge (an LLM) replace the human annotators?  Each human annotator ``h_j`` is left
out in turn.  On every instance ``i`` that ``h_j`` labelled (and that is kept, see below),
the judge's label ``f(i)`` and ``h_j``'s label are each scored against the labels of the
*remaining* annotators ``H_{-j}[i]`` with an alignment score ``S``::

    accuracy:  S(x, H) = share of labels in H equal to x
    neg_rmse:  S(x, H) = -sqrt(mean_{y in H} (x - y)^2)
    callable:  S(x, H) = scoring(x, H)          (H passed as a list)

    W_f(i) = [S(f(i), H_{-j}[i]) >= S(h_j(i), H_{-j}[i])]     the judge wins or ties
    W_h(i) = [S(h_j(i), H_{-j}[i]) >= S(f(i), H_{-j}[i])]     the human wins or ties

A tie counts as a win for both.  ``rho_j = mean_i W_f(i)`` is the judge's advantage
probability against ``h_j``.  The null hypothesis for ``h_j`` is
``H0: mean(W_h - W_f) >= epsilon`` (the human is better by at least the cost-benefit margin
``epsilon``), tested against ``mean(W_h - W_f) < epsilon`` by a one-sample t-test of the
per-instance differences ``W_h(i) - W_f(i)`` against ``epsilon`` (Student, n - 1 degrees of
freedom; ``scipy.stats.ttest_1samp(..., alternative="less")``).  The p-values of all tested
annotators go through the Benjamini–Yekutieli step-up procedure at level ``q``: sort them,
``p_(1) <= ... <= p_(m)``, find the largest ``k`` with ``p_(k) <= k q / (m H_m)``,
``H_m = 1 + 1/2 + ... + 1/m``, and reject the ``k`` smallest.  Then::

    winning rate          omega = (number of rejected annotators) / m
    advantage probability rho   = mean_j rho_j
    passed                      = omega >= 0.5

Kept instances (as in the authors' code): an instance is used only if at least
``min_humans_per_instance`` humans labelled it (the left-out annotator included, so at
least ``min_humans_per_instance - 1`` remain) and the judge labelled it.  An annotator with
fewer than ``min_instances_per_human`` kept instances is not tested (a note says so) and
does not count in ``m``.  A t-test whose differences have zero variance gives scipy's
answer (p = 0 when the mean is below ``epsilon``, NaN when it equals it); a NaN p-value is
never rejected but still counts in ``m``, exactly as in the reference code.

Reference: N. Calderon, R. Reichart, R. Dror (2025), "The Alternative Annotator Test for
LLM-as-a-Judge: How to Statistically Justify Replacing Human Annotators with LLMs", ACL 2025,
pp. 16051–16081 (arXiv 2501.10970); the procedure follows the authors' implementation
(``alt_test`` in ``alt_test_example.ipynb`` of github.com/nitaytech/AltTest).
Benjamini & Yekutieli (2001), Ann. Statist. 29:1165–1188.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Hashable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from evalkit.agreement._distributions import t_test_less
from evalkit.agreement._inputs import is_missing
from evalkit.agreement._results import NO_PAIRS, OK, TOO_FEW_PAIRS, _Record, jsonable

Labels = dict[Hashable, dict[Hashable, Any]]
Scoring = Callable[[Any, list[Any]], float]
SCORINGS = ("accuracy", "neg_rmse")
LONG_COLUMNS = ("unit", "rater", "label")


@dataclass(frozen=True, eq=False, repr=False)
class AltTestResult(_Record):
    """The outcome of :func:`alt_test` (see the module docstring for the formulas).

    ``per_labeler`` has one row per tested human annotator: ``labeler``, ``n`` (instances
    used), ``advantage`` (rho_j, share of those instances the judge wins or ties),
    ``p_value`` (one-sided t-test, ``<NA>`` when scipy gives NaN) and ``rejected`` (by the
    Benjamini–Yekutieli procedure at ``q``).  ``labelers_left_out`` are annotators with fewer
    than ``min_instances_per_human`` kept instances.  ``winning_rate``,
    ``advantage_probability`` and ``passed`` are None when no annotator could be tested
    (``status`` says why).  Records compare by identity (they hold a DataFrame); compare
    ``to_dict()`` outputs instead.
    """

    winning_rate: float | None
    advantage_probability: float | None
    passed: bool | None
    epsilon: float
    q: float
    scoring: str
    n_labelers: int
    n_instances: int
    n_instances_dropped: int
    labelers_left_out: tuple[Any, ...]
    per_labeler: pd.DataFrame
    status: str
    notes: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {**super().to_dict(), "per_labeler": frame_dict(self.per_labeler)}


def frame_dict(frame: pd.DataFrame) -> Any:
    """JSON-safe ``frame``, with pandas' missing markers (``<NA>``) as None."""
    return jsonable(frame.astype(object).where(frame.notna(), None))


def _plain(value: Any) -> Any:
    return value.item() if isinstance(value, np.generic) else value


def rater_labels(labels: Any, name: str = "labels") -> Labels:
    """Normalise rater labels to ``{rater: {unit: label}}``, dropping missing labels.

    Accepted forms: a mapping rater → {unit → label} (the alt-test paper's format); a long
    DataFrame with columns ``unit``, ``rater``, ``label`` (other columns ignored); or a wide
    DataFrame, index = units, one column per rater, NaN/None where a rater did not label.
    Rater order is the mapping's order, the order of first appearance (long) or the column
    order (wide).  Raises ``ValueError`` (naming ``name``) for anything else, a duplicated
    (unit, rater) pair, duplicated wide columns or index entries, or missing unit/rater ids.
    """
    out: Labels = {}
    if isinstance(labels, pd.DataFrame):
        if all(c in labels.columns for c in LONG_COLUMNS):
            for col in ("unit", "rater"):
                if labels[col].isna().any():
                    raise ValueError(f"{name} has missing values in its {col!r} column")
            for u, r, v in zip(labels["unit"], labels["rater"], labels["label"], strict=True):
                u, r, v = _plain(u), _plain(r), _plain(v)
                inner = out.setdefault(r, {})
                if u in inner:
                    raise ValueError(f"{name} labels unit {u!r} twice for rater {r!r}")
                if not is_missing(v):
                    inner[u] = v
            return out
        if labels.columns.has_duplicates or labels.index.has_duplicates:
            raise ValueError(f"{name} (wide: units × raters) has duplicated raters or units")
        if labels.index.hasnans:
            raise ValueError(f"{name} (wide: units × raters) has a missing unit id")
        units = [_plain(u) for u in labels.index]
        for col in labels.columns:
            values = labels[col].to_numpy(dtype=object)
            out[_plain(col)] = {
                u: _plain(v) for u, v in zip(units, values, strict=True) if not is_missing(v)
            }
        return out
    if isinstance(labels, Mapping):
        for r, inner in labels.items():
            if not isinstance(inner, Mapping):
                raise ValueError(
                    f"{name}[{r!r}] must be a mapping unit → label, got {type(inner).__name__}"
                )
            out[_plain(r)] = {_plain(u): _plain(v) for u, v in inner.items() if not is_missing(v)}
        return out
    raise ValueError(
        f"{name} must be a mapping rater → {{unit → label}}, a long DataFrame with columns "
        f"{list(LONG_COLUMNS)} or a wide units × raters DataFrame; got {type(labels).__name__}"
    )


def judge_labels(judge: Any, name: str = "judge") -> dict[Hashable, Any]:
    """Normalise the judge's labels (mapping unit → label, or a Series indexed by unit)."""
    items: Iterable[tuple[Any, Any]]
    if isinstance(judge, pd.Series):
        if judge.index.has_duplicates:
            raise ValueError(f"{name} (a Series) has duplicated units in its index")
        items = zip(judge.index, judge.to_numpy(dtype=object), strict=True)
    elif isinstance(judge, Mapping):
        items = judge.items()
    else:
        raise ValueError(
            f"{name} must be a mapping unit → label or a pandas Series indexed by unit, "
            f"got {type(judge).__name__}"
        )
    return {_plain(u): _plain(v) for u, v in items if not is_missing(v)}


def _accuracy(pred: Any, annotations: list[Any]) -> float:
    return sum(1 for a in annotations if pred == a) / len(annotations)


def _neg_rmse(pred: Any, annotations: list[Any]) -> float:
    return -1.0 * float(np.sqrt(np.mean([(pred - a) ** 2 for a in annotations])))


def _is_number(v: Any) -> bool:
    return isinstance(v, int | float | np.integer | np.floating) and not isinstance(v, bool)


def _scoring(scoring: Any, humans: Labels, judge: dict[Hashable, Any]) -> tuple[Scoring, str]:
    if callable(scoring):
        return scoring, getattr(scoring, "__name__", "callable")
    if scoring == "accuracy":
        return _accuracy, "accuracy"
    if scoring == "neg_rmse":
        for who, values in [("judge", judge), *((f"humans[{r!r}]", d) for r, d in humans.items())]:
            for u, v in values.items():
                if not _is_number(v):
                    raise ValueError(
                        f"scoring='neg_rmse' needs numeric labels: {who} has {v!r} for unit {u!r}"
                    )
        return _neg_rmse, "neg_rmse"
    raise ValueError(f"unknown scoring {scoring!r}: use 'accuracy', 'neg_rmse' or a callable")


def _check_args(epsilon: Any, q: Any, min_humans: Any, min_instances: Any) -> None:
    if not _is_number(epsilon) or not 0.0 <= float(epsilon) <= 1.0:
        raise ValueError(f"epsilon must be a number in [0, 1], got {epsilon!r}")
    if not _is_number(q) or not 0.0 < float(q) < 1.0:
        raise ValueError(f"q must be a number strictly between 0 and 1, got {q!r}")
    for arg, value, low in (
        ("min_humans_per_instance", min_humans, 2),
        ("min_instances_per_human", min_instances, 2),
    ):
        if not isinstance(value, int | np.integer) or isinstance(value, bool) or value < low:
            raise ValueError(f"{arg} must be an integer >= {low}, got {value!r}")


def by_rejections(p_values: list[float], q: float) -> list[int]:
    """Positions of the p-values rejected by Benjamini–Yekutieli at level ``q``.

    Step-up: with the p-values sorted ascending, the largest rank ``k`` (1-based) with
    ``p_(k) <= k q / (m H_m)`` is found and the ``k`` smallest are rejected (NaN never
    satisfies the inequality and sorts last).  Returned in ascending p-value order.
    """
    p = np.asarray(p_values, dtype=np.float64)
    m = p.size
    if m == 0:
        return []
    order = np.argsort(p, kind="quicksort")
    harmonic = float(np.sum(1.0 / np.arange(1, m + 1)))
    thresholds = np.arange(1, m + 1) / m * (q / harmonic)
    passing = np.flatnonzero(p[order] <= thresholds)
    if passing.size == 0:
        return []
    return [int(i) for i in order[: int(passing[-1]) + 1]]


def _score(fn: Scoring, label: Any, rest: list[Any], name: str) -> float:
    value = fn(label, rest)
    if not _is_number(value) or not math.isfinite(float(value)):
        raise ValueError(f"scoring must return a finite number; {name} returned {value!r}")
    return float(value)


def alt_test(
    judge: Any,
    humans: Any,
    scoring: str | Scoring = "accuracy",
    epsilon: float = 0.2,
    q: float = 0.05,
    min_humans_per_instance: int = 2,
    min_instances_per_human: int = 30,
) -> AltTestResult:
    """The alternative-annotator test of the judge against the human annotators.

    ``judge``: mapping instance → label, or a Series indexed by instance.  ``humans``: the
    paper's mapping annotator → {instance → label}, a long DataFrame (``unit``, ``rater``,
    ``label``) or a wide instances × annotators DataFrame with NaN gaps.  ``scoring`` is
    ``"accuracy"`` (categorical labels), ``"neg_rmse"`` (numeric labels) or a callable
    ``scoring(label, other_labels: list) -> float`` (higher = better aligned).  ``epsilon``
    is the cost-benefit margin (the authors suggest 0.2 for expert annotators, 0.15 for
    skilled ones, 0.1 for crowd workers); ``q`` the Benjamini–Yekutieli FDR level.

    Returns an :class:`AltTestResult` with the winning rate omega, the advantage
    probability rho, ``passed`` (omega >= 0.5) and the per-annotator rows.  Status
    ``"no_pairs"`` when no instance is kept; ``"too_few_pairs"`` when no annotator has
    ``min_instances_per_human`` kept instances; both leave the numbers None.

    Raises ``ValueError`` for malformed ``judge``/``humans``, an unknown ``scoring``,
    non-numeric labels with ``"neg_rmse"``, a scoring callable returning a non-finite or
    non-numeric value, ``epsilon`` outside [0, 1], ``q`` outside (0, 1), or minimums below 2.
    Formulas, tie handling and reference: see the module docstring.
    """
    _check_args(epsilon, q, min_humans_per_instance, min_instances_per_human)
    epsilon, q = float(epsilon), float(q)
    h = rater_labels(humans, "humans")
    f = judge_labels(judge)
    if not h:
        raise ValueError("humans holds no annotator")
    score_fn, score_name = _scoring(scoring, h, f)
    notes: list[str] = []

    raters_of: dict[Hashable, list[Hashable]] = {}
    for r, d in h.items():
        for u in d:
            raters_of.setdefault(u, []).append(r)
    few = [u for u, rs in raters_of.items() if len(rs) < min_humans_per_instance]
    unjudged = [
        u for u, rs in raters_of.items() if len(rs) >= min_humans_per_instance and u not in f
    ]
    kept = {u for u, rs in raters_of.items() if len(rs) >= min_humans_per_instance and u in f}
    if few:
        notes.append(
            f"{len(few)} instance(s) left out: fewer than {min_humans_per_instance} human labels"
        )
    if unjudged:
        notes.append(f"{len(unjudged)} instance(s) left out: no judge label")

    rows: list[dict[str, Any]] = []
    left_out: list[Any] = []
    for j, labels_j in h.items():
        instances = [u for u in labels_j if u in kept]
        if len(instances) < min_instances_per_human:
            left_out.append(j)
            notes.append(
                f"labeler {j!r} left out: {len(instances)} usable instance(s) "
                f"< min_instances_per_human={min_instances_per_human}"
            )
            continue
        w_f = np.empty(len(instances), dtype=np.int64)
        w_h = np.empty(len(instances), dtype=np.int64)
        for k, u in enumerate(instances):
            rest = [h[r][u] for r in raters_of[u] if r != j]
            s_h = _score(score_fn, labels_j[u], rest, f"humans[{j!r}] on {u!r}")
            s_f = _score(score_fn, f[u], rest, f"the judge on {u!r}")
            w_f[k] = 1 if s_f >= s_h else 0
            w_h[k] = 1 if s_h >= s_f else 0
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            p = t_test_less(w_h - w_f, epsilon)
        if math.isnan(p):
            notes.append(f"labeler {j!r}: the t-test is undefined (zero variance at epsilon)")
        rows.append({"labeler": j, "n": len(instances), "advantage": float(w_f.mean()), "p": p})

    rejected = set(by_rejections([r["p"] for r in rows], q))
    per_labeler = pd.DataFrame(
        {
            "labeler": pd.Series([r["labeler"] for r in rows], dtype=object),
            "n": pd.array([r["n"] for r in rows], dtype=pd.Int64Dtype()),
            "advantage": pd.array([r["advantage"] for r in rows], dtype=pd.Float64Dtype()),
            "p_value": pd.array(
                [None if math.isnan(r["p"]) else r["p"] for r in rows], dtype=pd.Float64Dtype()
            ),
            "rejected": pd.array([i in rejected for i in range(len(rows))], dtype=bool),
        }
    )
    if not kept:
        status = NO_PAIRS
        notes.append("no instance has enough human labels and a judge label: no test")
    elif not rows:
        status = TOO_FEW_PAIRS
        notes.append("no labeler has enough instances: no test")
    else:
        status = OK
    winning = len(rejected) / len(rows) if rows else None
    advantage = float(np.mean([r["advantage"] for r in rows])) if rows else None
    return AltTestResult(
        winning_rate=winning,
        advantage_probability=advantage,
        passed=None if winning is None else winning >= 0.5,
        epsilon=epsilon,
        q=q,
        scoring=score_name,
        n_labelers=len(rows),
        n_instances=len(kept),
        n_instances_dropped=len(few) + len(unjudged),
        labelers_left_out=tuple(left_out),
        per_labeler=per_labeler,
        status=status,
        notes=tuple(notes),
    )
