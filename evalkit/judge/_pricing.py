"""Anthropic model prices and the pinned-model rule (see :mod:`evalkit.judge.anthropic`).

Prices are USD per million tokens as published on
platform.claude.com/docs/en/about-claude/pricing, checked on :data:`PRICES_CHECKED`.
They change: re-check before relying on a figure. Cache writes use the 5-minute rate.
Batch results cost half (:data:`BATCH_DISCOUNT`). An unknown model gets cost None and a
warning; a run with ``max_cost`` then refuses to start.

Pinned models (:func:`is_pinned`): a Claude model id is pinned when it ends in a
snapshot date ``-YYYYMMDD`` (models before the 4.6 generation, e.g.
``claude-sonnet-4-5-20250929``), or when it is a dateless id of the 4.6 generation or
later, ``claude-{name}-{major}[-{minor}]`` with version >= 4.6 (e.g.
``claude-sonnet-4-6``, ``claude-opus-5``), which Anthropic documents as pinned.
Floating aliases (``claude-sonnet-4-5``, ``claude-3-7-sonnet-latest``, ``*-latest``) and
anything else are refused when running for the gate.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date

PRICES_CHECKED = "2026-10-24"
BATCH_DISCOUNT = 0.5


@dataclass(frozen=True)
class Price:
    """USD per million tokens."""

    input: float
    output: float
    cache_write: float
    cache_read: float


_OPUS_45 = Price(5.0, 25.0, 6.25, 0.50)
_SONNET_4 = Price(3.0, 15.0, 3.75, 0.30)
#: Prices per model id (see the module docstring for source and date).
PRICES: dict[str, Price] = {
    "claude-opus-5-5": Price(4.0, 20.0, 5.0, 0.20),
    "claude-opus-5": _OPUS_45,
    "claude-opus-4-8": _OPUS_45,
    "claude-opus-4-7": _OPUS_45,
    "claude-opus-4-6": _OPUS_45,
    "claude-opus-4-5-20251101": _OPUS_45,
    "claude-sonnet-5-5": Price(2.0, 10.0, 2.50, 0.10),
    "claude-sonnet-5": Price(2.0, 10.0, 2.50, 0.20),
    "claude-sonnet-4-6": _SONNET_4,
    "claude-sonnet-4-5-20250929": _SONNET_4,
    "claude-haiku-5-5": Price(0.10, 0.50, 0.125, 0.01),  # prompts up to 100k tokens
    "claude-haiku-4-5-20251001": Price(1.0, 5.0, 1.25, 0.10),
}

_DATED = re.compile(r"^claude-[a-z0-9-]+-(\d{8})$")
_DATELESS = re.compile(r"^claude-([a-z]+)-(\d+)(?:-(\d{1,2}))?$")


def is_pinned(model: str) -> bool:
    """Whether ``model`` names a fixed snapshot (rule in :mod:`evalkit.judge.anthropic`)."""
    m = _DATED.match(model)
    if m:
        try:
            date(int(m.group(1)[:4]), int(m.group(1)[4:6]), int(m.group(1)[6:]))
        except ValueError:
            return False
        return True
    m = _DATELESS.match(model)
    if m is None:
        return False
    major, minor = int(m.group(2)), int(m.group(3) or 0)
    return (major, minor) >= (4, 6)


def price_for(model: str) -> Price | None:
    return PRICES.get(model)
