"""Anthropic model prices and the pinned-model rule (see :mod:`evalkit.judge.anthropic`).

Prices are USD per million tokens as published on
platform.claude.com/docs/en/about-claude/pricing, checked on :data:`PRICES_CHECKED`.
They change: re-check before relying on a figure. Cache writes use the 5-minute rate.
Batch results cost half (:data:`BATCH_DISCOUNT`). An unknown model gets cost None and a
warning; a run with ``max_cost`` then refuses to start.

The pinned-model rule (:func:`is_pinned`) is defined once, in :mod:`evalkit.model_ids`,
and re-exported here for the judge's callers.
"""

from __future__ import annotations

from dataclasses import dataclass

from evalkit.model_ids import is_pinned

__all__ = ["BATCH_DISCOUNT", "PRICES", "PRICES_CHECKED", "Price", "is_pinned", "price_for"]

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


def price_for(model: str) -> Price | None:
    return PRICES.get(model)
