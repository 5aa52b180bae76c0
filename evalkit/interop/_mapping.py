"""The mapping file: how another tool's score values become evalkit's frozen bins.

A mapping (YAML, documented in ``docs/interop.md``) declares, per dimension, the scorer
whose value it reads, the rubric text a labeler and a live judge would read (construct and
one anchor per frozen bin), and exactly one rule:

* ``thresholds``: for a numeric value, the lowest value of each bin, one per frozen bin and
  strictly increasing in bin order; a bin covers ``[its threshold, the next one's)``, the
  last bin up to ``max`` (inclusive) when given, without bound otherwise;
* ``values``: a value → bin table; a key matches a value of the same kind only (a string
  key a string, a number key an integer or a float, a boolean key a boolean), so ``1``
  never matches ``True`` nor ``"1"``.

:func:`bin_for` never guesses: a value below the lowest threshold or above ``max``, a
string or boolean under a threshold rule, NaN or an infinity, a value missing from the
table, a list, or a dict without the declared ``key`` gives ``None`` (the caller records
an ``unparseable`` answer carrying the value).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from evalkit.catalogue import Collector
from evalkit.catalogue._collect import read_yaml, validate
from evalkit.catalogue._models import Stratum, is_identifier
from evalkit.errors import Problem
from evalkit.interop._problems import ImportProblems

_STRICT = ConfigDict(frozen=True, extra="forbid", strict=True)


class DimensionMapping(BaseModel):
    """How one dimension is read from one scorer."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True, populate_by_name=True)

    scorer: str = Field(min_length=1)
    """The scorer's name in the log (the key of ``sample.scores``)."""
    key: str | None = None
    """For a scorer whose value is a dict: the key holding this dimension's value."""
    construct_text: str = Field(min_length=1, alias="construct")
    """What the dimension rates, in prose: the rubric's construct (``construct``)."""
    anchors: dict[str, str]
    """One anchor text per frozen bin."""
    thresholds: dict[str, float] | None = None
    max: float | None = None
    """Largest value the threshold rule accepts (inclusive); None: no upper bound."""
    values: dict[Any, str] | None = None

    @model_validator(mode="after")
    def _one_rule(self) -> DimensionMapping:
        if (self.thresholds is None) == (self.values is None):
            raise ValueError("declare exactly one of `thresholds` or `values`")
        if self.max is not None and self.thresholds is None:
            raise ValueError("max: only a `thresholds` rule takes one")
        for key in self.values or {}:
            if not isinstance(key, str | int | float) or (
                isinstance(key, float) and not math.isfinite(key)
            ):
                raise ValueError(f"values: key {key!r} is not a string, number or boolean")
        return self


class Defaults(BaseModel):
    """What a case gets when the sample's metadata does not say."""

    model_config = _STRICT

    locale: str = "en-US"
    stratum: Stratum = "benign"


class ScoreMapping(BaseModel):
    """A whole mapping file: dimensions in gate order, and the defaults of the cases."""

    model_config = _STRICT

    dimensions: dict[str, DimensionMapping] = Field(min_length=1)
    defaults: Defaults = Defaults()

    def scorers(self) -> dict[str, list[str]]:
        """Scorer name → the dimensions it answers, in mapping order."""
        out: dict[str, list[str]] = {}
        for dim, rule in self.dimensions.items():
            out.setdefault(rule.scorer, []).append(dim)
        return out


def check_mapping(mapping: ScoreMapping, bins: Sequence[str], file: str) -> list[Problem]:
    """Problems of ``mapping`` against the frozen ``bins`` (file, dimension, field)."""
    out: list[Problem] = []
    for dim, rule in mapping.dimensions.items():
        if not is_identifier(dim):
            out.append(Problem(file, dim, None, "a dimension name is an identifier"))
        missing = [b for b in bins if b not in rule.anchors]
        extra = [b for b in rule.anchors if b not in bins]
        if missing:
            out.append(Problem(file, dim, "anchors", f"no anchor for bin(s) {missing}"))
        if extra:
            out.append(Problem(file, dim, "anchors", f"anchor(s) for unknown bin(s) {extra}"))
        if rule.thresholds is not None:
            if list(rule.thresholds) != list(bins):
                out.append(
                    Problem(
                        file,
                        dim,
                        "thresholds",
                        f"one threshold per bin, in bin order {list(bins)}; "
                        f"got {list(rule.thresholds)}",
                    )
                )
            levels = list(rule.thresholds.values())
            if any(not math.isfinite(v) for v in levels) or any(
                a >= b for a, b in itertools.pairwise(levels)
            ):
                message = f"not finite and strictly increasing: {levels}"
                out.append(Problem(file, dim, "thresholds", message))
            if rule.max is not None and levels and rule.max < levels[-1]:
                out.append(Problem(file, dim, "max", f"{rule.max} is below the last threshold"))
        for key, bin_ in (rule.values or {}).items():
            if bin_ not in bins:
                out.append(
                    Problem(file, dim, f"values.{key}", f"{bin_!r} is not one of {list(bins)}")
                )
    return out


def load_mapping(path: str | Path, bins: Sequence[str]) -> ScoreMapping:
    """The mapping file at ``path``, validated strictly against the frozen ``bins``.

    Read with the catalogue's strict YAML reader (no duplicate key, no coerced type).
    Raises :class:`ImportProblems` listing every problem (file, dimension, field).
    """
    p = Path(path)
    col = Collector(p.parent)
    data = None
    if p.is_file():
        data = read_yaml(p, col)
    else:
        col.add(p, None, None, "no such mapping file")
    mapping = validate(ScoreMapping, data, p, None, col) if data is not None else None
    if mapping is not None:
        col.problems += check_mapping(mapping, bins, col.rel(p))
    if col.problems or mapping is None:
        raise ImportProblems(f"mapping {p}", col.problems)
    return mapping


def _kind(value: Any) -> str | None:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "str"
    return None


def dimension_value(rule: DimensionMapping, value: Any) -> Any:
    """The value this dimension reads from a scorer's value (``value[key]`` with a key)."""
    if rule.key is None:
        return value
    if isinstance(value, dict) and rule.key in value:
        return value[rule.key]
    return None


def bin_for(rule: DimensionMapping, value: Any) -> str | None:
    """The bin ``value`` maps to under ``rule``, or None when it is not mapped (see the
    module docstring: never a guess)."""
    if value is None:
        return None
    if rule.thresholds is not None:
        if _kind(value) != "number" or not math.isfinite(value):
            return None
        if rule.max is not None and value > rule.max:
            return None
        found = None
        for bin_, lowest in rule.thresholds.items():
            if value >= lowest:
                found = bin_
        return found
    kind = _kind(value)
    if kind is None:
        return None
    for key, bin_ in (rule.values or {}).items():
        if _kind(key) == kind and key == value:
            return bin_
    return None
