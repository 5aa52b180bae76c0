"""Rate-limit headers, read strictly: what the provider says its limits are, right now.

Two families are read, whichever a response carries:

* Anthropic: ``anthropic-ratelimit-{requests,input-tokens,output-tokens,tokens}-
  {limit,remaining,reset}``; ``reset`` is an RFC 3339 time (``2026-12-01T10:00:03Z``).
* OpenAI-style: ``x-ratelimit-{limit,remaining,reset}-{requests,tokens}``; ``reset``
  is a duration (``1s``, ``6m0s``, ``20ms``, ``1h2m3.5s``).

Limits are per minute in both families (requests per minute, tokens per minute).

Strict means: ``limit`` is a whole number >= 1, ``remaining`` a whole number in
``[0, limit]``, ``reset`` an RFC 3339 time *with* a time zone or a duration of the
grammar above. Anything else (``"12.5"``, ``"-3"``, ``"soon"``, a naive time, a
remaining above the limit) is ignored, with a note saying which header and why; a
resource whose ``limit`` is unusable is ignored whole. A reset in the past is a reset
of 0 s (the bucket is full), never a negative wait. Nothing here raises.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime

#: The resources a controller paces: requests, and tokens counted three ways.
RESOURCES = ("requests", "input_tokens", "output_tokens", "tokens")

_ANTHROPIC = {
    "requests": "requests",
    "input_tokens": "input-tokens",
    "output_tokens": "output-tokens",
    "tokens": "tokens",
}
_OPENAI = {"requests": "requests", "tokens": "tokens"}
_DURATION = re.compile(
    r"^(?:(?P<h>\d+(?:\.\d+)?)h)?(?:(?P<m>\d+(?:\.\d+)?)m(?!s))?"
    r"(?:(?P<s>\d+(?:\.\d+)?)s)?(?:(?P<ms>\d+(?:\.\d+)?)ms)?$"
)
_WHOLE = re.compile(r"^\d{1,15}$")


@dataclass(frozen=True)
class Reading:
    """One resource as a response reported it: a per-minute ``limit``, what is
    ``remaining`` of it (None if not sent or unusable) and seconds to ``reset_s``
    (full again; None if not sent or unusable)."""

    limit: int
    remaining: int | None = None
    reset_s: float | None = None


@dataclass(frozen=True)
class Report:
    """The rate-limit readings of one response, by resource, and notes on the headers
    that were ignored (one line each, naming the header and the value)."""

    readings: dict[str, Reading] = field(default_factory=dict)
    notes: tuple[str, ...] = ()


def parse_duration(text: str) -> float | None:
    """Seconds of an OpenAI-style duration (``1s``, ``6m0s``, ``20ms``, ``1h2m3.5s``);
    None if ``text`` is not one (empty, negative, a bare number, a unit out of order)."""
    text = text.strip()
    m = _DURATION.match(text)
    if not text or m is None:
        return None
    h, mi, s, ms = (float(m.group(k) or 0) for k in ("h", "m", "s", "ms"))
    return h * 3600 + mi * 60 + s + ms / 1000


def parse_rfc3339(text: str, now_wall: float) -> float | None:
    """Seconds from ``now_wall`` (Unix time) to the RFC 3339 time ``text``, at least 0;
    None if ``text`` is not an RFC 3339 time with a zone."""
    text = text.strip()
    if not re.match(r"^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}", text):
        return None
    try:
        when = datetime.fromisoformat(text.replace("z", "Z"))
    except ValueError:
        return None
    if when.tzinfo is None:
        return None
    return max(0.0, when.timestamp() - now_wall)


def _whole(value: str | None) -> int | None:
    if value is None or not _WHOLE.match(value.strip()):
        return None
    return int(value.strip())


def read_headers(headers: Mapping[str, str] | None, now_wall: float) -> Report:
    """The :class:`Report` of a response's ``headers`` (any case), at Unix time
    ``now_wall`` (for RFC 3339 resets). Empty when there are no rate-limit headers."""
    if not headers:
        return Report()
    lower = {str(k).lower(): str(v) for k, v in headers.items()}
    readings: dict[str, Reading] = {}
    notes: list[str] = []
    families = (
        (_ANTHROPIC, lambda r, part: f"anthropic-ratelimit-{r}-{part}"),
        (_OPENAI, lambda r, part: f"x-ratelimit-{part}-{r}"),
    )
    for names, header in families:
        for resource, name in names.items():
            if resource in readings:
                continue
            limit_h, remaining_h, reset_h = (
                header(name, p) for p in ("limit", "remaining", "reset")
            )
            if limit_h not in lower:
                continue
            limit = _whole(lower[limit_h])
            if limit is None or limit < 1:
                notes.append(f"{limit_h}: {lower[limit_h]!r} is not a whole number >= 1")
                continue
            remaining = _whole(lower.get(remaining_h))
            if remaining_h in lower and (remaining is None or remaining > limit):
                notes.append(
                    f"{remaining_h}: {lower[remaining_h]!r} is not a whole number in [0, {limit}]"
                )
                remaining = None
            reset: float | None = None
            if reset_h in lower:
                raw = lower[reset_h]
                is_anthropic = reset_h.startswith("anthropic-")
                reset = parse_rfc3339(raw, now_wall) if is_anthropic else parse_duration(raw)
                if reset is None:
                    kind = "an RFC 3339 time with a zone" if is_anthropic else "a duration"
                    notes.append(f"{reset_h}: {raw!r} is not {kind}")
            readings[resource] = Reading(limit, remaining, reset)
    return Report(readings, tuple(notes))
