"""Input checking shared by the agreement statistics: categories, missing values, pairs,
the q × q table, and the agreement-weight matrices.

Conventions
-----------
* ``categories`` is the frozen, ordered list of category values.  The table is always
  q × q over that list; an unused category keeps its zero row and column.
* A rating is missing when it is ``None``, ``pandas.NA``/``NaT`` or a float NaN.  A pair
  with either rating missing is dropped (jointly) and counted.
* Bad input raises ``ValueError`` that says which argument and, for a stray value, which
  position holds it.  Values are matched to categories with Python equality (``1 == 1.0``),
  except that a boolean never matches a number: ``True == 1`` in Python, so a boolean
  rating against numeric categories (or the reverse) is an error, not a silent match.
* A rater's ratings must be ordered: a ``set``/``frozenset`` (or any mapping) is rejected.
* Encoding is vectorised (one ``pandas.isna`` pass, one ``pandas.factorize`` hash pass and
  a dict lookup per *distinct* value; no per-value Python calls), so 100,000 ratings
  encode in a few milliseconds.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Hashable, Mapping, Sequence, Set
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
    check_no_bool_number_mix(cats, "categories")
    return cats


def _is_bool(value: Any) -> bool:
    return isinstance(value, bool | np.bool_)


def _is_plain_number(value: Any) -> bool:
    return isinstance(value, int | float | np.integer | np.floating) and not _is_bool(value)


def check_no_bool_number_mix(values: Sequence[Any], name: str) -> None:
    """Reject a category list holding both booleans and numbers (``True == 1`` in Python)."""
    first_bool = next((v for v in values if _is_bool(v)), None)
    first_num = next((v for v in values if _is_plain_number(v)), None)
    if first_bool is not None and first_num is not None:
        raise ValueError(
            f"{name} mix booleans and numbers ({first_bool!r} and {first_num!r}); "
            "True == 1 and False == 0 in Python, so use one or the other"
        )


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


#: numpy dtype kinds encoded without converting to Python objects
_TYPED = "iufb"


def _unordered(values: Any) -> bool:
    return isinstance(values, Set | Mapping)


def as_array(values: Any, name: str) -> npt.NDArray[Any]:
    """A rater's ratings as a 1-D array (list, tuple, numpy 1-D array, Series, Index).

    Numeric, boolean and string numpy arrays keep their dtype (they hold no missing
    markers but NaN, and no mixed types); everything else becomes an object array.
    Raises ``ValueError`` for None, a string, a mapping or a ``set``/``frozenset`` (a set
    has no order, so its ratings cannot be paired with anything), a multi-dimensional
    array, or anything that is not iterable.
    """
    if values is None or isinstance(values, str | bytes):
        raise ValueError(f"{name} must be a sequence of category values, got {type(values)!r}")
    if _unordered(values):
        raise ValueError(
            f"{name} must be an ordered sequence of category values, got a "
            f"{type(values).__name__} (a set or mapping has no order to pair ratings by)"
        )
    if isinstance(values, pd.Series | pd.Index):
        return values.to_numpy(dtype=object)
    if isinstance(values, np.ndarray):
        if values.ndim != 1:
            raise ValueError(f"{name} must be one-dimensional, got shape {values.shape}")
        return values if values.dtype.kind in _TYPED + "US" else values.astype(object)
    try:
        items = list(values)
    except TypeError as exc:
        raise ValueError(f"{name} must be a sequence of category values") from exc
    return np.fromiter(items, dtype=object, count=len(items))


def as_list(values: Any, name: str) -> list[Any]:
    """A rater's ratings as a list (accepts list, tuple, numpy 1-D array, pandas Series)."""
    return list(as_array(values, name).tolist())


def missing_mask(values: npt.NDArray[Any]) -> npt.NDArray[np.bool_]:
    """Vectorised :func:`is_missing` (None, pandas.NA/NaT, NaN) over an array."""
    if values.dtype.kind in "iub":
        return np.zeros(values.shape, dtype=bool)
    if values.dtype.kind == "f":
        return np.isnan(values)
    return np.asarray(pd.isna(values), dtype=bool)


def _plain(value: Any) -> Any:
    return value.item() if isinstance(value, np.generic) else value


def encode_values(
    values: npt.NDArray[Any], cats: tuple[Any, ...], where: Callable[[int], str]
) -> IntArray:
    """Category codes 0..q-1 (-1 for a missing rating) for an array of ratings.

    Each distinct value is hashed once (``pandas.factorize``) and looked up in a dict of the
    categories, so matching is Python equality (``1 == 1.0``) at C speed.  A value outside
    ``cats`` raises ``ValueError`` naming ``where(position)`` of the first such value, e.g.
    ``"b[2] = 'maybe' is not one of the categories [...]"``; so does a boolean matched to a
    numeric category, or a number to a boolean one (``True == 1`` in Python).
    """
    arr = np.asarray(values)
    text = arr.dtype.kind in "US"  # numpy strings: never missing, never booleans
    flat = arr.ravel() if arr.dtype.kind in _TYPED else arr.astype(object, copy=False).ravel()
    index = {c: i for i, c in enumerate(cats)}
    get = index.get
    missing = np.zeros(flat.size, dtype=bool) if text else missing_mask(flat)
    try:
        inverse, uniques = pd.factorize(flat, use_na_sentinel=True)
        lut = np.fromiter((get(u, -1) for u in uniques), dtype=np.int64, count=len(uniques))
        lut = np.append(lut, -1)  # inverse == -1 (missing) picks the trailing -1
        codes = lut[inverse]
    except TypeError:  # an unhashable value: find it the slow way
        codes = np.full(flat.size, -1, dtype=np.int64)
        for pos, v in enumerate(flat):
            if missing[pos]:
                continue
            try:
                codes[pos] = index[v]
            except (KeyError, TypeError):
                break
    codes[missing] = -1
    bad = np.flatnonzero((codes < 0) & ~missing)
    if bad.size:
        pos = int(bad[0])
        raise ValueError(
            f"{where(pos)} = {_plain(flat[pos])!r} is not one of the categories {list(cats)!r}"
        )
    if not text:
        _check_bool_matches(flat, codes, cats, where)
    return codes


def _check_bool_matches(
    flat: npt.NDArray[Any], codes: IntArray, cats: tuple[Any, ...], where: Callable[[int], str]
) -> None:
    cat_bool = np.array([_is_bool(c) for c in cats], dtype=bool)
    if flat.dtype.kind == "b":
        value_bool = np.ones(flat.size, dtype=bool)
    elif flat.dtype.kind in _TYPED:
        value_bool = np.zeros(flat.size, dtype=bool)
    else:
        kinds = set(map(type, flat))
        if not cat_bool.any() and bool not in kinds and np.bool_ not in kinds:
            return
        value_bool = np.fromiter(map(_is_bool, flat), dtype=bool, count=flat.size)
    matched = codes >= 0
    clash = np.flatnonzero(matched & (value_bool != cat_bool[np.where(matched, codes, 0)]))
    if clash.size:
        pos = int(clash[0])
        v, c = _plain(flat[pos]), cats[int(codes[pos])]
        raise ValueError(
            f"{where(pos)} = {v!r} matches category {c!r} only because True == 1 and "
            "False == 0 in Python; booleans and numbers cannot be mixed"
        )


def encode(values: Any, cats: tuple[Any, ...], name: str) -> IntArray:
    """Category codes 0..q-1, and -1 for a missing rating."""
    arr = values if isinstance(values, np.ndarray) else as_array(values, name)
    return encode_values(arr, cats, lambda pos: f"{name}[{pos}]")


def as_matrix(data: Any, layout: str, ragged: str) -> npt.NDArray[Any]:
    """A 2-D array from a DataFrame, a 2-D numpy array or a list of rows.

    ``layout`` names the axes for messages (e.g. ``"units × raters"``); ``ragged`` is the
    message for rows of unequal length.  A 1-D input (a flat list or a 1-D array), a row
    that is a string, a set or a scalar, None and a mapping all raise ``ValueError``.
    """
    if isinstance(data, pd.DataFrame):
        return data.to_numpy(dtype=object)
    if isinstance(data, np.ndarray):
        if data.ndim != 2:
            raise ValueError(f"data must be 2-dimensional ({layout}), got shape {data.shape}")
        return data if data.dtype.kind in _TYPED + "US" else data.astype(object)
    if data is None or isinstance(data, str | bytes) or _unordered(data):
        raise ValueError(f"data must be a {layout} matrix, got {type(data).__name__}")
    try:
        rows = list(data)
    except TypeError as exc:
        raise ValueError(f"data must be a {layout} matrix, got {type(data).__name__}") from exc
    out_rows: list[Any] = []
    for i, row in enumerate(rows):
        if isinstance(row, str | bytes):
            raise ValueError(f"data must be a {layout} matrix, not a list of strings")
        if _unordered(row) or not isinstance(row, Sequence | np.ndarray | pd.Series):
            raise ValueError(
                f"data must be 2-dimensional ({layout}): data[{i}] = {row!r} is not an "
                "ordered row of ratings"
            )
        out_rows.append(row.tolist() if isinstance(row, np.ndarray | pd.Series) else row)
    widths = {len(r) for r in out_rows}
    if len(widths) > 1:
        raise ValueError(ragged)
    width = widths.pop() if widths else 0
    flat = np.fromiter(
        itertools.chain.from_iterable(out_rows), dtype=object, count=len(out_rows) * width
    )
    return flat.reshape(len(out_rows), width)


def encode_matrix(matrix: npt.NDArray[Any], cats: tuple[Any, ...]) -> IntArray:
    """Codes (-1 missing) for a 2-D object array; errors name ``data[row][col]``."""
    n_cols = matrix.shape[1] if matrix.ndim == 2 else 0

    def where(pos: int) -> str:
        i, j = divmod(pos, n_cols)
        return f"data[{i}][{j}]"

    return encode_values(matrix, cats, where).reshape(matrix.shape)


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
    la = as_array(a, "a")
    lb = as_array(b, "b")
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
