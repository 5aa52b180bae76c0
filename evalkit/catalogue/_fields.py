"""The strict field types every catalogue record shares (see :mod:`evalkit.catalogue._models`
for what strict means): the model configuration, identifiers, dates and YAML lists.
"""

from __future__ import annotations

import re
from datetime import date, datetime
from typing import Annotated, TypeVar

from pydantic import AfterValidator, BeforeValidator, ConfigDict

STRICT = ConfigDict(frozen=True, extra="forbid", str_strip_whitespace=False, strict=True)

#: What an identifier (case id, source id, template family, bin, dimension, label set
#: name) may be: 1 to 64 ASCII letters, digits, ``_``, ``.`` and ``-``, not starting
#: with a punctuation mark.
IDENTIFIER_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$"
_IDENTIFIER = re.compile(IDENTIFIER_PATTERN)
#: A file name in the catalogue folder itself (no folder part), e.g. ``framing.txt``.
FILE_NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$"
LOCALE_PATTERN = r"^[a-z]{2,3}(-[A-Z]{2})?$"


def is_identifier(value: str) -> bool:
    """Whether ``value`` matches :data:`IDENTIFIER_PATTERN` (no trailing newline either)."""
    return _IDENTIFIER.fullmatch(value) is not None


def _identifier(value: str) -> str:
    if not is_identifier(value):
        raise ValueError(
            f"{value!a} is not an identifier: 1 to 64 ASCII letters, digits, '_', '.' "
            "or '-', starting with a letter or digit"
        )
    return value


def _calendar_date(value: object) -> object:
    if isinstance(value, datetime):
        raise ValueError(f"expected a date (YYYY-MM-DD), got a date and time {value}")
    if isinstance(value, str):
        if not re.fullmatch(r"[0-9]{4}-[0-9]{2}-[0-9]{2}", value):
            raise ValueError(f"expected a date (YYYY-MM-DD), got {value!r}")
        return date.fromisoformat(value)
    return value


def _tuple_from_list(value: object) -> object:
    return tuple(value) if isinstance(value, list) else value


T = TypeVar("T")
#: An identifier (:data:`IDENTIFIER_PATTERN`).
Identifier = Annotated[str, AfterValidator(_identifier)]
#: A calendar date: a ``date`` (as YAML reads ``2026-11-30``) or a ``YYYY-MM-DD`` string;
#: never a datetime or a number.
CalendarDate = Annotated[date, BeforeValidator(_calendar_date)]
#: A sequence read from a YAML list, kept as a tuple (strict mode takes no list otherwise).
Items = Annotated[tuple[T, ...], BeforeValidator(_tuple_from_list)]
