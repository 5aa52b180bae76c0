"""The human ceiling: each labeler's Cohen's kappa against the consensus of the others,
the judge placed on the same scale, and every pairwise kappa.

(About 460 lines, one concept: the human ceiling and the judge on its scale; the
estimator, its bootstrap and the pairwise table share one set of definitions.)

Leave-one-labeler-out.  For human ``j``, the reference on unit ``u`` is the consensus of the
*other* humans who labelled ``u``::

    C_{-j}(u) = the most frequent label among {h_k(u) : k != j}
                (a tie goes to the lowest category in ``categories`` order when
                tie="lower", the recall-favouring rule; tie="drop" leaves the unit out)

    U_j       = units j labelled that at least one other human labelled (minus dropped ties)
    kappa_j   = Cohen's kappa(h_j, C_{-j}) over U_j, on the frozen ordered ``categories``
    judge_j   = Cohen's kappa(judge, C_{-j}) over U_j ∩ {units the judge labelled}
    judge row = mean_j judge_j   (over the humans j whose reference is usable)

Kappa is ``(p_o - p_e) / (1 - p_e)`` of :func:`evalkit.agreement.cohens_kappa`, with its
statuses: a constant rater gives 0.0 with ``"single_rater_constant"``, both constant gives
None with ``"both_raters_constant"``, fewer than 2 units ``"too_few_pairs"``, none
``"no_pairs"`` (a single labeler, or units each labelled once).  A reference ``j`` is
*usable* for the judge when ``C_{-j}`` on the judge's units covers at least 2 units and 2
categories; a constant reference makes every kappa 0 or undefined by construction.

Intervals are percentile bootstraps over units (Efron & Tibshirani 1993, ch. 13): the
units of the comparison are resampled with replacement, jointly for every rater, so each
rater keeps its own units with the resampled multiplicities and paired quantities stay
paired.  ``n_boot`` resamples, ``numpy.random.default_rng(seed)``; the same seed gives the
same intervals.  Resamples on which a statistic is undefined (p_e = 1) are dropped and
counted; no interval is given for a point estimate whose status is not ``"ok"``.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from evalkit.agreement._alt_test import frame_dict, judge_labels, rater_labels
from evalkit.agreement._inputs import FloatArray, IntArray, check_categories
from evalkit.agreement._kappa import kappa_from_table, kappa_parts
from evalkit.agreement._results import (
    NO_PAIRS,
    NO_VARIATION,
    OK,
    TOO_FEW_PAIRS,
    AgreementResult,
    _Record,
)

TIES = ("lower", "drop")
CEILING_COLUMNS = ("rater", "kind", "kappa", "ci_low", "ci_high", "n", "status")
PAIRWISE_COLUMNS = ("rater_a", "rater_b", "kappa", "ci_low", "ci_high", "n", "status")
REFERENCE_COLUMNS = (
    "reference", "n", "human_kappa", "human_status", "judge_kappa", "judge_status", "used"
)  # fmt: skip
_DTYPES = {"n": "Int64", "used": "boolean"} | {
    c: "Float64" for c in ("kappa", "ci_low", "ci_high", "human_kappa", "judge_kappa")
}
_CHUNK_CELLS = 4_000_000


@dataclass(frozen=True, eq=False, repr=False)
class JudgeVsHumansResult(_Record):
    """Paired comparison of judge-vs-rest and human-vs-rest kappa (:func:`judge_vs_humans`).

    ``judge_kappa`` = mean_j kappa(judge, C_{-j}), ``human_kappa`` = mean_j kappa(h_j,
    C_{-j}), each pair on the same units P_j = U_j ∩ judge's units, over the ``n_humans``
    usable references; ``difference`` = judge - human, with its percentile bootstrap
    interval ``ci_low``/``ci_high`` (units resampled jointly).  ``non_inferior`` is
    ``ci_low > -margin``.  ``per_reference`` has one row per human j: ``reference``, ``n``,
    ``human_kappa``, ``human_status``, ``judge_kappa``, ``judge_status``, ``used``.
    Numbers that do not exist are None and ``status`` says why.  Records compare by
    identity (they hold a DataFrame); compare ``to_dict()`` outputs instead.
    """

    judge_kappa: float | None
    human_kappa: float | None
    difference: float | None
    ci_low: float | None
    ci_high: float | None
    level: float
    margin: float
    non_inferior: bool | None
    n_humans: int
    n_units: int
    n_boot: int
    n_boot_used: int
    n_degenerate: int
    seed: int | None
    tie: str
    per_reference: pd.DataFrame
    status: str
    notes: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {**super().to_dict(), "per_reference": frame_dict(self.per_reference)}


@dataclass(frozen=True)
class _Ref:
    """Human j against the consensus of the others: unit positions and category codes."""

    rater: Hashable
    idx: IntArray
    own: IntArray
    cons: IntArray


@dataclass(frozen=True)
class _Data:
    cats: tuple[Any, ...]
    raters: list[Hashable]
    codes: IntArray  # units × raters, -1 = not labelled
    judge: IntArray | None  # per unit, -1 = not labelled
    notes: tuple[str, ...]


def _encode(labels: Any, judge: Any, categories: Any) -> _Data:
    cats = check_categories(categories)
    index = {c: i for i, c in enumerate(cats)}
    h = rater_labels(labels, "labels")
    if not h:
        raise ValueError("labels holds no rater")
    pos = {u: i for i, u in enumerate(dict.fromkeys(u for d in h.values() for u in d))}
    codes = np.full((len(pos), len(h)), -1, dtype=np.int64)
    for r_i, (r, d) in enumerate(h.items()):
        for u, v in d.items():
            codes[pos[u], r_i] = _code(index, v, f"labels[{r!r}]", u, cats)
    notes: list[str] = []
    jcodes = None
    if judge is not None:
        jcodes = np.full(len(pos), -1, dtype=np.int64)
        extra = 0
        for u, v in judge_labels(judge).items():
            c = _code(index, v, "judge", u, cats)
            if u in pos:
                jcodes[pos[u]] = c
            extra += u not in pos
        if extra:
            notes.append(f"{extra} judge label(s) on units no human labelled are ignored")
    return _Data(cats, list(h), codes, jcodes, tuple(notes))


def _code(index: dict[Any, int], v: Any, who: str, u: Any, cats: tuple[Any, ...]) -> int:
    try:
        return index[v]
    except (KeyError, TypeError):
        raise ValueError(
            f"{who} has {v!r} for unit {u!r}, not one of the categories {list(cats)!r}"
        ) from None


def _references(data: _Data, tie: str) -> tuple[list[_Ref], list[str]]:
    q = len(data.cats)
    codes = data.codes
    counts = np.zeros((codes.shape[0], q), dtype=np.int64)
    for r in range(codes.shape[1]):
        has = codes[:, r] >= 0
        np.add.at(counts, (np.flatnonzero(has), codes[has, r]), 1)
    refs: list[_Ref] = []
    notes: list[str] = []
    for j, rater in enumerate(data.raters):
        have = codes[:, j] >= 0
        others = counts.copy()
        others[np.flatnonzero(have), codes[have, j]] -= 1
        ok = have & (others.sum(axis=1) > 0)
        tied = ok & ((others == others.max(axis=1, keepdims=True)).sum(axis=1) > 1)
        n_tied = int(tied.sum())
        if n_tied and tie == "drop":
            ok &= ~tied
            notes.append(f"reference {rater!r}: {n_tied} unit(s) with a tied consensus dropped")
        elif n_tied:
            notes.append(
                f"reference {rater!r}: {n_tied} tied consensus(es) broken to the lower bin"
            )
        idx = np.flatnonzero(ok)
        refs.append(_Ref(rater, idx, codes[idx, j], np.argmax(others[idx], axis=1)))
    return refs, notes


def _kappa(a: IntArray, b: IntArray, cats: tuple[Any, ...]) -> AgreementResult:
    q = len(cats)
    table = np.bincount(a * q + b, minlength=q * q).reshape(q, q).astype(np.float64)
    return kappa_from_table(table, None, categories=cats)


def _check(tie: Any, n_boot: Any, level: Any, seed: Any) -> None:
    if tie not in TIES:
        raise ValueError(f"unknown tie {tie!r}: use 'lower' or 'drop'")
    if isinstance(n_boot, bool) or not isinstance(n_boot, int | np.integer) or n_boot < 1:
        raise ValueError(f"n_boot must be a positive integer, got {n_boot!r}")
    if isinstance(level, bool) or not isinstance(level, int | float) or not 0.0 < level < 1.0:
        raise ValueError(f"level must be between 0 and 1, got {level!r}")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int | np.integer)):
        raise ValueError(f"seed must be an integer or None, got {seed!r}")


def _boot(
    columns: list[tuple[IntArray, IntArray]], n_units: int, q: int, n_boot: int, seed: int | None
) -> FloatArray:
    """Kappa of every column (unit positions, cells a·q + b) on ``n_boot`` joint resamples
    of the ``n_units`` units; shape ``(n_boot, len(columns))``, NaN where undefined."""
    rng = np.random.default_rng(seed)
    cells_of = []  # per column: each unit's cell, q·q where the column does not use the unit
    for idx, cells in columns:
        cell = np.full(n_units, q * q, dtype=np.int64)
        cell[idx] = cells
        cells_of.append(cell)
    out = np.empty((n_boot, len(columns)), dtype=np.float64)
    w = np.eye(q)
    block = max(1, _CHUNK_CELLS // max(n_units, 1))
    for start in range(0, n_boot, block):
        b = min(block, n_boot - start)
        draw = rng.integers(0, n_units, size=(b, n_units))
        offset = (np.arange(b) * (q * q + 1))[:, None]
        for c, cell in enumerate(cells_of):
            # Each resample's table counts the drawn units by cell (exact integer counts,
            # the same as weighting one-hot cells by the draw multiplicities).
            counts = np.bincount((cell[draw] + offset).ravel(), minlength=b * (q * q + 1))
            tables = counts.reshape(b, q * q + 1)[:, : q * q].astype(np.float64)
            out[start : start + b, c] = kappa_parts(tables.reshape(b, q, q), w)[0]
    return out


def _interval(values: FloatArray, level: float) -> tuple[float | None, float | None, int]:
    ok = values[np.isfinite(values)]
    if ok.size == 0:
        return None, None, 0
    alpha = 1.0 - level
    lo, hi = np.quantile(ok, [alpha / 2.0, 1.0 - alpha / 2.0])
    return float(lo), float(hi), int(ok.size)


def _universe(index_sets: list[IntArray]) -> tuple[IntArray, list[IntArray]]:
    """All units used, and each index set as positions into that universe."""
    universe = np.unique(np.concatenate(index_sets)) if index_sets else np.zeros(0, np.int64)
    return universe, [np.searchsorted(universe, s) for s in index_sets]


def _value(res: AgreementResult) -> float:
    """The value of a kappa on a usable reference (it always exists there)."""
    assert res.value is not None, res.status
    return res.value


def _usable(cons: IntArray) -> bool:
    return cons.size >= 2 and np.unique(cons).size >= 2


def _no_reference_status(refs: list[tuple[IntArray, IntArray]]) -> tuple[str, str]:
    """Status when no reference is usable: why the comparison does not exist."""
    if all(own.size == 0 for own, _ in refs):
        return NO_PAIRS, "no unit has both a rating and a consensus of other humans"
    if all(own.size < 2 for own, _ in refs):
        return TOO_FEW_PAIRS, "fewer than 2 units per reference"
    return NO_VARIATION, "the consensus reference is constant on every reference's units"


def _frame(rows: list[tuple[Any, ...]], columns: tuple[str, ...]) -> pd.DataFrame:
    """A frame of ``rows`` with nullable numeric dtypes, so a missing number is ``<NA>``."""
    values = list(zip(*rows, strict=True)) if rows else [() for _ in columns]
    pairs = zip(columns, values, strict=True)
    return pd.DataFrame({c: pd.Series(list(v), dtype=_DTYPES.get(c, object)) for c, v in pairs})


def human_ceiling(
    labels: Any,
    judge: Any,
    categories: Any,
    *,
    tie: str = "lower",
    n_boot: int = 2000,
    level: float = 0.95,
    seed: int | None = 0,
) -> pd.DataFrame:
    """Each human's kappa against the consensus of the other humans, and the judge's.

    ``labels``: mapping rater → {unit → label}, a long DataFrame (``unit``, ``rater``,
    ``label``) or a wide units × raters DataFrame with NaN gaps.  ``judge``: mapping unit →
    label or a Series indexed by unit (None: human rows only).  ``categories``: the frozen
    ordered category list (its order breaks ties when ``tie="lower"``).

    One row per human (``kind="human"``), then the judge (``rater="judge"``,
    ``kind="judge"``): ``kappa``, the percentile bootstrap ``ci_low``/``ci_high`` at
    ``level``, ``n`` (units compared; for the judge, distinct units over all references),
    ``status``.  The judge's kappa is the **mean over humans j** of kappa(judge, C_{-j}) on
    U_j ∩ judge's units (usable references only, see the module docstring); its status is
    ``"ok"`` when every one of those kappas is, else the first other status (then no
    interval).  The per-j judge values are in ``frame.attrs["judge_by_reference"]``, a dict
    j → {"kappa", "n", "status"}; ``frame.attrs["notes"]`` lists ties broken or dropped and
    ignored labels (pandas may drop ``attrs`` on later operations; the paired per-j frame
    is also :func:`judge_vs_humans` ``(...).per_reference``).

    Raises ``ValueError`` for malformed inputs, a label outside ``categories`` (naming the
    rater and unit), an unknown ``tie``, ``n_boot < 1``, ``level`` outside (0, 1).
    """
    _check(tie, n_boot, level, seed)
    data = _encode(labels, judge, categories)
    refs, notes = _references(data, tie)
    cats, q = data.cats, len(data.cats)
    human_res = [_kappa(r.own, r.cons, cats) for r in refs]
    columns = [(r.idx, r.own * q + r.cons) for r in refs]
    judge_res: list[AgreementResult] = []
    by_ref: dict[Any, dict[str, Any]] = {}
    if data.judge is not None:
        for r in refs:
            has = data.judge[r.idx] >= 0
            res = _kappa(data.judge[r.idx[has]], r.cons[has], cats)
            by_ref[r.rater] = {"kappa": res.value, "n": res.n, "status": res.status}
            if _usable(r.cons[has]):
                judge_res.append(res)
                columns.append((r.idx[has], data.judge[r.idx[has]] * q + r.cons[has]))
        missing = int((data.judge[np.unique(np.concatenate([r.idx for r in refs]))] < 0).sum())
        if missing:
            notes.append(f"the judge did not label {missing} compared unit(s)")
    universe, positions = _universe([idx for idx, _ in columns])
    cols = [(p, cells) for p, (_, cells) in zip(positions, columns, strict=True)]
    boot = _boot(cols, int(universe.size), q, n_boot, seed) if universe.size else None
    rows: list[tuple[Any, ...]] = []
    for i, (r, res) in enumerate(zip(refs, human_res, strict=True)):
        lo = hi = None
        if res.status == OK and boot is not None:
            lo, hi, _ = _interval(boot[:, i], level)
        rows.append((r.rater, "human", res.value, lo, hi, res.n, res.status))
    if data.judge is not None and not judge_res:
        status, _ = _no_reference_status([(r.own, r.cons) for r in refs])
        rows.append(("judge", "judge", None, None, None, 0, status))
    elif data.judge is not None:
        status = next((res.status for res in judge_res if res.status != OK), OK)
        lo = hi = None
        if status == OK and boot is not None:
            lo, hi, _ = _interval(boot[:, len(refs) :].mean(axis=1), level)
        n = int(np.unique(np.concatenate([idx for idx, _ in columns[len(refs) :]])).size)
        kappa = float(np.mean([_value(res) for res in judge_res]))
        rows.append(("judge", "judge", kappa, lo, hi, n, status))
    frame = _frame(rows, CEILING_COLUMNS)
    frame.attrs["judge_by_reference"] = by_ref
    frame.attrs["notes"] = [*data.notes, *notes]
    return frame


def pairwise_kappa(labels: Any, categories: Any) -> pd.DataFrame:
    """Cohen's kappa for every pair of labelers on the units both labelled.

    One row per pair (``rater_a`` before ``rater_b`` in rater order): ``kappa``, the 95%
    Wald ``ci_low``/``ci_high`` of :func:`evalkit.agreement.cohens_kappa` (Fleiss–Cohen–
    Everitt large-sample SE), ``n`` (units both labelled) and its ``status``.  Rows of
    ``a`` are ``rater_a``.  A single labeler gives an empty frame.  Inputs as for
    :func:`human_ceiling`; raises ``ValueError`` for a label outside ``categories``.
    """
    data = _encode(labels, None, categories)
    rows: list[tuple[Any, ...]] = []
    for i, a in enumerate(data.raters):
        for k in range(i + 1, len(data.raters)):
            both = (data.codes[:, i] >= 0) & (data.codes[:, k] >= 0)
            res = _kappa(data.codes[both, i], data.codes[both, k], data.cats)
            b = data.raters[k]
            rows.append((a, b, res.value, res.ci_low, res.ci_high, res.n, res.status))
    return _frame(rows, PAIRWISE_COLUMNS)


def judge_vs_humans(
    labels: Any,
    judge: Any,
    categories: Any,
    *,
    margin: float = 0.10,
    tie: str = "lower",
    n_boot: int = 2000,
    level: float = 0.95,
    seed: int | None = 0,
) -> JudgeVsHumansResult:
    """Is the judge's kappa against the human consensus non-inferior to a human's?

    For every human j with a usable reference, on the units P_j that j and the judge both
    labelled (and the others did too): ``d_j = kappa(judge, C_{-j}) - kappa(h_j, C_{-j})``,
    same units, same reference.  ``difference = mean_j d_j``; its percentile bootstrap
    interval resamples the units of all P_j jointly (one draw for every rater, so each
    pair stays paired); ``non_inferior = ci_low > -margin``.  A resample on which any
    kappa is undefined is dropped (``n_degenerate``).

    Status ``"ok"``; ``"no_pairs"`` with a single human (there is no consensus of the
    others: the comparison does not exist) or no unit with a reference; ``"too_few_pairs"``
    with fewer than 2 units per reference; ``"no_variation"`` when every reference is
    constant: then the numbers are None.  ``"no_variation"`` also when every resample is
    degenerate: then only the interval and ``non_inferior`` are None.  Raises
    ``ValueError`` as :func:`human_ceiling` does, and for ``judge=None`` or a ``margin``
    outside [0, 2).
    """
    _check(tie, n_boot, level, seed)
    if isinstance(margin, bool) or not isinstance(margin, int | float) or not 0 <= margin < 2:
        raise ValueError(f"margin must be a number in [0, 2), got {margin!r}")
    if judge is None:
        raise ValueError("judge is required: a mapping unit → label or a Series")
    data = _encode(labels, judge, categories)
    assert data.judge is not None
    refs, ref_notes = _references(data, tie)
    notes = [*data.notes, *ref_notes]
    cats, q = data.cats, len(data.cats)
    rows: list[tuple[Any, ...]] = []
    columns: list[tuple[IntArray, IntArray]] = []  # (judge, human) cells per usable j
    values: list[tuple[float, float]] = []  # (judge, human) kappa per usable j
    judged: list[tuple[IntArray, IntArray]] = []
    for r in refs:
        has = data.judge[r.idx] >= 0
        idx, own, cons, jc = r.idx[has], r.own[has], r.cons[has], data.judge[r.idx[has]]
        hres, jres = _kappa(own, cons, cats), _kappa(jc, cons, cats)
        used = _usable(cons)
        judged.append((own, cons))
        if used:
            columns += [(idx, jc * q + cons), (idx, own * q + cons)]
            values.append((_value(jres), _value(hres)))
        rows.append((r.rater, hres.n, hres.value, hres.status, jres.value, jres.status, used))
    per_reference = _frame(rows, REFERENCE_COLUMNS)
    fields: dict[str, Any] = dict(
        level=float(level), margin=float(margin), n_boot=int(n_boot), seed=seed, tie=tie
    )
    status = OK
    if len(data.raters) < 2:
        status = NO_PAIRS
        notes.append(
            "only one human labeler: there is no consensus of the others, so the "
            "comparison does not exist"
        )
    elif not values:
        status, why = _no_reference_status(judged)
        notes.append(f"no usable reference: {why}")
    if status != OK:
        return JudgeVsHumansResult(
            None, None, None, None, None, non_inferior=None, n_humans=0, n_units=0,
            n_boot_used=0, n_degenerate=0, per_reference=per_reference, status=status,
            notes=tuple(notes), **fields,
        )  # fmt: skip
    universe, positions = _universe([idx for idx, _ in columns])
    cols = [(p, cells) for p, (_, cells) in zip(positions, columns, strict=True)]
    boot = _boot(cols, int(universe.size), q, int(n_boot), seed)
    diffs = (boot[:, 0::2] - boot[:, 1::2]).mean(axis=1)
    lo, hi, used_n = _interval(diffs, float(level))
    degenerate = int(n_boot) - used_n
    if degenerate:
        notes.append(f"{degenerate} degenerate resample(s) (a kappa undefined) dropped")
    if used_n == 0:
        status = NO_VARIATION
        notes.append("every resample was degenerate: no interval")
    judge_k, human_k = (float(v) for v in np.mean(values, axis=0))
    return JudgeVsHumansResult(
        judge_kappa=judge_k,
        human_kappa=human_k,
        difference=judge_k - human_k,
        ci_low=lo,
        ci_high=hi,
        non_inferior=None if lo is None else lo > -float(margin),
        n_humans=len(values),
        n_units=int(universe.size),
        n_boot_used=used_n,
        n_degenerate=degenerate,
        per_reference=per_reference,
        status=status,
        notes=tuple(notes),
        **fields,
    )
