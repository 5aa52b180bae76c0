"""What a study parameter may be: the type and range its notebook declares beside it.

A study notebook declares each parameter in its cell tagged ``parameters`` as
``name: TYPE = default  # what it means[, RANGE]``. papermill reads the type
(``inferred_type_name``) and the comment (``help``, what ``papermill --help-notebook``
prints); evalkit reads the range from the end of the comment:

- ``in [1, 100000]``, ``in (0, 1)``, ``in [0, inf)``: the range of a number, a bracket
  closed, a parenthesis open;
- ``items in [2, 2]``: how many items a list holds.

Types checked: ``int`` (a bool is not one), ``float`` (an int is accepted; never
``inf`` or ``nan``), ``bool``, ``str``, ``list``, ``list[str]``, ``dict`` and
``dict[str, str]``. A null (``-p NAME=``) is none of them. A parameter declared without a
type (``n = 3``) is checked by nothing, as papermill checks nothing; a type not in this
list is refused, since a value given for it could not be checked.
"""

from __future__ import annotations

import math
import re
from collections.abc import Container, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evalkit.catalogue import Catalogue
from evalkit.errors import EvalkitError
from evalkit.report._execute import notebook_parameters
from evalkit.report._secrets import check_parameters

#: The types a parameter may be declared with, as papermill reads the annotation.
TYPES: dict[str, str] = {
    "int": "an integer",
    "float": "a number",
    "bool": "true or false",
    "str": "a string",
    "list": "a list",
    "list[str]": "a list of strings",
    "dict": "a mapping",
    "dict[str, str]": "a mapping of strings to strings",
}

_NUMBER = r"[-+]?(?:inf|\d+(?:\.\d*)?(?:e[-+]?\d+)?)"
_RANGE = re.compile(
    rf"(?P<items>items )?in (?P<open>[\[(])\s*(?P<low>{_NUMBER})\s*,\s*(?P<high>{_NUMBER})\s*"
    r"(?P<close>[\])])\s*$",
    re.IGNORECASE,
)


class DeclarationError(ValueError):
    """A notebook declares a parameter with a type or range evalkit cannot check."""


@dataclass(frozen=True)
class Range:
    """An interval of numbers; ``items``: it bounds a list's length, not a value."""

    low: float
    high: float
    low_open: bool = False
    high_open: bool = False
    items: bool = False

    def holds(self, x: float) -> bool:
        above = x > self.low if self.low_open else x >= self.low
        below = x < self.high if self.high_open else x <= self.high
        return above and below

    def __str__(self) -> str:
        def num(v: float) -> str:
            return str(int(v)) if math.isfinite(v) and v == int(v) else str(v)

        left, right = "(" if self.low_open else "[", ")" if self.high_open else "]"
        return f"in {left}{num(self.low)}, {num(self.high)}{right}"


@dataclass(frozen=True)
class Declaration:
    """A parameter as its notebook declares it: name, type (``None``: none declared),
    range (``None``: any value of the type) and meaning (its comment without the range)."""

    name: str
    type_name: str | None
    range: Range | None
    help: str

    @property
    def expected(self) -> str:
        """What a value must be, in words: ``an integer in [1, 100000]``."""
        kind = TYPES.get(self.type_name or "", "anything")
        if self.range is None:
            return kind
        return f"{kind} {'with items ' if self.range.items else ''}{self.range}"


def declaration(name: str, type_name: str, help: str) -> Declaration:
    """The declaration of ``name`` from papermill's reading of it (its
    ``inferred_type_name`` and ``help``).

    Raises :class:`DeclarationError` for a type not in :data:`TYPES`, or a range on a
    type it cannot bound (``in [..]`` on anything but int and float, ``items in [..]``
    on anything but a list).
    """
    declared = None if type_name in ("None", "") else type_name.replace(" ", "").replace(",", ", ")
    if declared is not None and declared not in TYPES:
        raise DeclarationError(
            f"parameter {name!r} is declared as {type_name!r}, which evalkit cannot check; "
            f"declare one of {', '.join(TYPES)}"
        )
    found = _RANGE.search(help)
    bounds = None
    if found:
        bounds = Range(
            float(found["low"]),
            float(found["high"]),
            low_open=found["open"] == "(",
            high_open=found["close"] == ")",
            items=bool(found["items"]),
        )
        numeric = declared in ("int", "float")
        listed = declared is not None and declared.startswith("list")
        if (bounds.items and not listed) or (not bounds.items and not numeric):
            raise DeclarationError(
                f"parameter {name!r} ({declared or 'no type'}) declares the range "
                f"{found.group(0).strip()!r}: a range bounds an int or a float, "
                "'items in [..]' a list"
            )
    meaning = help[: found.start()].rstrip(" ,;") if found else help
    return Declaration(name, declared, bounds, meaning)


def describe(value: Any) -> str:
    """``value`` as a user wrote it in YAML: ``null``, ``true``, ``'abc' (a string)``."""
    if value is None:
        return "null (an empty value)"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f"{value!r} (a string)"
    return repr(value)


def problem(decl: Declaration, value: Any) -> str | None:
    """Why ``value`` does not fit ``decl`` (a sentence), or None when it does."""
    t = decl.type_name
    if t is None:
        return None
    if not _has_type(t, value):
        quote = t == "str" and (value is None or isinstance(value, bool | int | float))
        hint = f"; quote a string: -p '{decl.name}=\"...\"'" if quote else ""
        return f"must be {decl.expected}, got {describe(value)}{hint}"
    if decl.range is not None:
        measured = len(value) if decl.range.items else value
        if not decl.range.holds(measured):
            got = f"{len(value)} item(s)" if decl.range.items else describe(value)
            return f"must be {decl.expected}, got {got}"
    return None


def _has_type(type_name: str, value: Any) -> bool:
    if type_name == "int":
        return isinstance(value, int) and not isinstance(value, bool)
    if type_name == "float":
        number = isinstance(value, int | float) and not isinstance(value, bool)
        return number and math.isfinite(value)
    if type_name == "bool":
        return isinstance(value, bool)
    if type_name == "str":
        return isinstance(value, str)
    if type_name == "list":
        return isinstance(value, list)
    if type_name == "list[str]":
        return isinstance(value, list) and all(isinstance(v, str) for v in value)
    if type_name == "dict":
        return isinstance(value, dict)
    return isinstance(value, dict) and all(
        isinstance(k, str) and isinstance(v, str) for k, v in value.items()
    )


class StudyParameterError(EvalkitError):
    """A study parameter given on the command line that no study to run declares, that
    the run sets itself (use its own option), or whose value its notebook's declaration
    refuses (type or range)."""


#: Parameters every study receives from the run itself, and the option that sets each.
RUN_PARAMETERS: Mapping[str, str] = {
    "catalogue": "--catalogue",
    "judge": "--judge",
    "ledger": "--ledger",
    "seed": "--seed",
    "rubric_versions": "--rubric",
    "explore": "--explore",
    "split": "(each study's own split)",
    "adr_base": "--adr-base",
}


def notebook_declarations(path: Path) -> dict[str, Declaration]:
    """{name: declaration} of the parameters the study notebook at ``path`` declares.

    Raises :class:`StudyParameterError` naming the notebook if one is declared with a
    type or range evalkit cannot check (:func:`declaration`).
    """
    try:
        return {
            name: declaration(name, p["inferred_type_name"], p["help"])
            for name, p in notebook_parameters(path).items()
        }
    except DeclarationError as exc:
        raise StudyParameterError(f"{path}: {exc}") from exc


def check_values(
    study: str,
    declared: Mapping[str, Declaration],
    params: Mapping[str, Any],
    given: Container[str],
    notebooks: Path,
) -> None:
    """Refuse the parameters of ``study`` (its notebook: ``<notebooks>/<study>.ipynb``)
    that its notebook's declarations do not admit.

    Every value is checked, whoever set it (``-p``, an option of the run, the study's
    default); a name the notebook does not declare is not checked. Raises
    :class:`StudyParameterError` listing each parameter, where its value came from
    (``-p NAME``, the run's option) and what it must be.
    """
    problems = []
    for name, value in params.items():
        decl = declared.get(name)
        why = problem(decl, value) if decl is not None else None
        if why is not None:
            origin = f"-p {name}" if name in given else RUN_PARAMETERS.get(name, "its default")
            meaning = f" ({decl.help})" if decl is not None and decl.help else ""
            problems.append(f"parameter {name}{meaning}, set by {origin}, {why}")
    if problems:
        raise StudyParameterError(
            f"{study} ({notebooks / study}.ipynb): " + "; ".join(problems) + "; nothing was run"
        )


def declared_parameters(
    chosen: Sequence[Any], notebooks: Path, given: Mapping[str, Any]
) -> dict[str, frozenset[str]]:
    """{study: the names of ``given`` its notebook declares} (``-p NAME=VALUE``).

    ``chosen`` are the studies to run (anything with a ``name``: the notebook is
    ``<notebooks>/<name>.ipynb``). Raises :class:`StudyParameterError` for a name the
    run sets itself (:data:`RUN_PARAMETERS`) or that no study in ``chosen`` declares,
    and :class:`~evalkit.report._secrets.SecretLeakError` for a secret-looking value.
    Values are checked against the declarations by :func:`check_values`.
    """
    check_parameters(given)
    for name in given:
        if name in RUN_PARAMETERS:
            raise StudyParameterError(
                f"study parameter {name!r} is set by the run: use {RUN_PARAMETERS[name]}"
            )
    declared = {s.name: set(notebook_parameters(notebooks / f"{s.name}.ipynb")) for s in chosen}
    unknown = sorted(set(given) - set().union(*declared.values()))
    if unknown:
        known = sorted(set().union(*declared.values()) - set(RUN_PARAMETERS))
        raise StudyParameterError(
            f"unknown study parameter(s) {unknown} for {sorted(declared)}; known: {known}"
        )
    return {name: frozenset(names & set(given)) for name, names in declared.items()}


def check_pool_ledger(catalogue: Catalogue, params: Mapping[str, Any]) -> None:
    """Refuse the prevalence study's ``pool_ledger`` before anything runs (empty: none).

    The pool is evidence: it is read as the gate reads a ledger, validated against
    ``catalogue`` (a missing file, a file that is no ledger, a frame-rows JSONL or an
    export that does not match the catalogue is refused), and it must hold the answers
    of one judge, the study's ``judge`` (for ``replay``, the judge it replays). The
    notebook compares the rows themselves again, models included
    (:func:`evalkit.prevalence.same_judge`). Raises :class:`StudyParameterError`.
    """
    from evalkit.judge import load_ledger
    from evalkit.prevalence import judges

    path, spec = params.get("pool_ledger"), str(params.get("judge", ""))
    if not path:
        return
    where = f"prevalence: parameter pool_ledger={path!r}"
    try:
        frame = load_ledger(path, catalogue=catalogue)
    except EvalkitError as exc:
        raise StudyParameterError(f"{where}: {exc}") from exc
    who = judges(frame)
    if len(who) != 1:
        found = f"answers of {len(who)} judges ({', '.join(who)})" if who else "no answer"
        raise StudyParameterError(f"{where}: the ledger holds {found}; give one judge's ledger")
    specs = set(map(str, frame["judge"].dropna().unique()))
    expected = _judge_of(spec, str(params.get("ledger", "")))
    if expected is not None and specs != {expected}:
        raise StudyParameterError(
            f"{where}: the pool was judged by {who[0]}, the study's labelled set by "
            f"{expected} (--judge {spec}): the correction is valid only for the judge the "
            "labelled set calibrates; judge the pool with the same judge"
        )


def _judge_of(spec: str, ledger: str) -> str | None:
    """The judge spec the labelled set's rows will carry: ``JUDGE`` of ``replay:JUDGE``,
    the one judge of the study's ledger for a bare ``replay`` (None when it holds none or
    several: the notebook compares the rows), else ``spec`` itself."""
    if spec.startswith("replay:"):
        return spec.split(":", 1)[1]
    if spec != "replay":
        return spec
    from evalkit.judge import load_ledger

    try:
        found = set(map(str, load_ledger(ledger)["judge"].dropna().unique()))
    except EvalkitError:
        return None
    return found.pop() if len(found) == 1 else None


#: Parameters that name dimensions of the catalogue (one, or a list).
DIMENSION_PARAMETERS = ("dimension", "companion", "dimensions")


def check_dimensions(catalogue: Catalogue, given: Mapping[str, Any]) -> None:
    """Refuse a ``-p`` value naming a dimension ``catalogue`` has no rubric for
    (:data:`DIMENSION_PARAMETERS`). Only values given on the command line are checked:
    a study whose own default names a dimension the catalogue lacks says it does not
    apply instead. Raises :class:`StudyParameterError`."""
    known = sorted({d for d, _ in catalogue.rubrics})
    for name in DIMENSION_PARAMETERS:
        if name not in given:
            continue
        value = given[name]
        unknown = [v for v in (value if isinstance(value, list) else [value]) if v not in known]
        if unknown:
            raise StudyParameterError(
                f"parameter {name}, set by -p {name}: no rubric for {', '.join(map(str, unknown))} "
                f"in this catalogue (dimensions: {', '.join(known)}); nothing was run"
            )


#: Conversation targets a study may run (:func:`evalkit.runner.make_target`'s specs).
TARGET_KINDS = ("anthropic", "openai")


def check_target(given: Mapping[str, Any]) -> None:
    """Refuse a ``-p target`` that is no target spec (``replay``, ``anthropic:MODEL`` or
    ``openai:URL:MODEL``), read by shape only: a key or a server is the notebook's
    business. Raises :class:`StudyParameterError`."""
    spec = given.get("target")
    if spec is None or spec == "replay":
        return
    kind, _, rest = str(spec).partition(":")
    if kind not in TARGET_KINDS or not rest.strip():
        raise StudyParameterError(
            f"parameter target, set by -p target: {spec!r} is no target; use replay, "
            "anthropic:MODEL or openai:URL:MODEL; nothing was run"
        )
