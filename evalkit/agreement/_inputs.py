"""Input checking shared by the agreement statistics: categories, missing values, pairs,
the q × q table, and the agreement-weight matrices.

Conventions
-----------
* ``categories`` is the frozen, ordered list of category values.  The table is always
  q × q over that list; an unused category keeps its zero row and column.
* A rating is missing when it is ``None``, ``pandas.NA``/``NaT`` or a float NaN.  A pair
  with either rating missing is dropped (jointly) and counted.
* Bad input raises ``ValueError`` that says which argument and, for a stray value, which
  position holds it.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]

WEIGHT_NAMES = (None, "linear", "quadratic")


def is_missing(value: Any) -> bool:
    """True for None, pandas.NA/NaT and float NaN (Python or numpy)."""
    if value is None or value is pd.NA or value is pd.NaT:
        return True
    if isinstance(value, float | np.floating):
        return math.isnan(value)
    return False


def check_categories(categories: Any) -> tuple[Any, ...]:
    """Validate the ordered category list and return it as a tuple."""
    if categories is None or isinstance(categories, str | bytes):
        raise ValueError("categories must be a sequence of at least 2 category values")
    try:
        cats = tuple(c.item() if isinstance(c, np.generic) else c for c in categories)
    except TypeError as exc:
        raise ValueError("categories must be a sequence of at least 2 category values") from exc
    if len(cats) < 2:
        raise ValueError(f"categories must list at least 2 values, got {list(cats)!r}")
    for i, c in enumerate(cats):
        if is_missing(c):
            raise ValueError(f"categories[{i}] is missing ({c!r}); categories cannot be missing")
        if not isinstance(c, Hashable):
            raise ValueError(f"categories[{i}] = {c!r} is not hashable")
    if len(set(cats)) != len(cats):
        seen: list[Any] = []
        for c in cats:
            if c in seen:
                raise ValueError(f"categories contain a duplicate value: {c!r}")
            seen.append(c)
    return cats


def check_weights(weights: str | None) -> str | None:
    """Validate a weights name: None, "linear" or "quadratic"."""
    if weights is None:
        return None
    if isinstance(weights, str) and weights in ("linear", "quadratic"):
        return weights
    raise ValueError(f"unknown weights {weights!r}: use None, 'linear' or 'quadratic'")


def agreement_weights(q: int, weights: str | None) -> FloatArray:
    """q × q agreement-weight matrix from category ranks.

    None: identity.  "linear" (Cicchetti & Allison 1971): ``1 - |i - j| / (q - 1)``.
    "quadratic" (Fleiss & Cohen 1973): ``1 - (i - j)^2 / (q - 1)^2``.  These are one minus the
    disagreement weights, so weighted kappa is the same in either formulation.
    """
    idx = np.arange(q, dtype=np.float64)
    dist = np.abs(idx[:, None] - idx[None, :]) / (q - 1)
    if weights is None:
        return np.eye(q, dtype=np.float64)
    if weights == "linear":
        return 1.0 - dist
    if weights == "quadratic":
        return 1.0 - dist**2
    raise ValueError(f"unknown weights {weights!r}: use None, 'linear' or 'quadratic'")


def as_list(values: Any, name: str) -> list[Any]:
    """A rater's ratings as a list (accepts list, tuple, numpy 1-D array, pandas Series)."""
    if values is None or isinstance(values, str | bytes | dict):
        raise ValueError(f"{name} must be a sequence of category values, got {type(values)!r}")
    if isinstance(values, pd.Series | pd.Index):
        return list(values.to_numpy(dtype=object))
    if isinstance(values, np.ndarray):
        if values.ndim != 1:
            raise ValueError(f"{name} must be one-dimensional, got shape {values.shape}")
        return list(values.tolist())
    if isinstance(values, Sequence):
        return list(values)
    try:
        return list(values)
    except TypeError as exc:
        raise ValueError(f"{name} must be a sequence of category values") from exc


def encode(values: list[Any], cats: tuple[Any, ...], name: str) -> IntArray:
    """Category codes 0..q-1, and -1 for a missing rating."""
    index = {c: i for i, c in enumerate(cats)}
    codes = np.empty(len(values), dtype=np.int64)
    for pos, v in enumerate(values):
        if is_missing(v):
            codes[pos] = -1
            continue
        try:
            codes[pos] = index[v]
        except (KeyError, TypeError):
            raise ValueError(
                f"{name}[{pos}] = {v!r} is not one of the categories {list(cats)!r}"
            ) from None
    return codes


@dataclass(frozen=True)
class Pairs:
    """Complete pairs as category codes, with the count of pairs dropped for missingness."""

    a: IntArray
    b: IntArray
    categories: tuple[Any, ...]
    n_missing: int
    keep: npt.NDArray[np.bool_]

    @property
    def n(self) -> int:
        return int(self.a.shape[0])

    @property
    def q(self) -> int:
        return len(self.categories)

    def table(self) -> FloatArray:
        """q × q counts: rows are rater a, columns rater b."""
        q = self.q
        flat = np.bincount(self.a * q + self.b, minlength=q * q)
        return flat.reshape(q, q).astype(np.float64)


def make_pairs(a: Any, b: Any, categories: Any) -> Pairs:
    """Validate two raters' ratings and keep the complete pairs."""
    cats = check_categories(categories)
    la = as_list(a, "a")
    lb = as_list(b, "b")
    if len(la) != len(lb):
        raise ValueError(f"a and b must have equal lengths, got {len(la)} and {len(lb)}")
    ca = encode(la, cats, "a")
    cb = encode(lb, cats, "b")
    keep = (ca >= 0) & (cb >= 0)
    n_missing = int(keep.size - int(keep.sum()))
    return Pairs(a=ca[keep], b=cb[keep], categories=cats, n_missing=n_missing, keep=keep)


def square_table(
    table: Any, agreement_w: Any, categories: tuple[Any, ...] | None, *, min_q: int = 1
) -> tuple[FloatArray, FloatArray, tuple[Any, ...], int]:
    """Validate a q × q count table and its agreement weights (identity by default).

    Returns ``(table, weights, categories, n)``; ``categories`` defaults to ``0..q-1``.
    Raises ``ValueError`` naming the problem: not square, fewer than ``min_q`` categories,
    weights of another shape, negative counts.
    """
    t = np.asarray(table, dtype=np.float64)
    if t.ndim != 2 or t.shape[0] != t.shape[1] or t.shape[0] < min_q:
        raise ValueError(f"table must be square with q >= {min_q}, got shape {t.shape}")
    q = t.shape[0]
    w = np.eye(q) if agreement_w is None else np.asarray(agreement_w, dtype=np.float64)
    if w.shape != (q, q):
        raise ValueError(f"weight matrix must be {q} × {q}, got shape {w.shape}")
    if np.any(t < 0):
        raise ValueError("table counts must be non-negative")
    cats = tuple(range(q)) if categories is None else categories
    return t, w, cats, round(float(t.sum()))


def missing_note(n_missing: int) -> tuple[str, ...]:
    if n_missing == 0:
        return ()
    noun = "pair" if n_missing == 1 else "pairs"
    return (f"{n_missing} {noun} dropped jointly (missing)",)


def constant_raters(table: FloatArray) -> tuple[bool, bool]:
    """Whether rater a (rows) and rater b (columns) each used a single category."""
    rows = int(np.count_nonzero(table.sum(axis=1)))
    cols = int(np.count_nonzero(table.sum(axis=0)))
    return rows == 1, cols == 1


def finite_or_none(x: float) -> float | None:
    x = float(x)
    return x if math.isfinite(x) else None
