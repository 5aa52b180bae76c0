"""Onset-position variants: one disclosure, placed after 1, 4 or n matched benign exchanges.

Counting, once and for all. Turns are indexed from 0 over *messages*, as in the
catalogue: user turns are even (0, 2, 4, ...) and agent turns odd. A variant placed
after ``n`` benign exchanges (user turn + agent reply each) has its disclosure at
``onset_turn = 2n``: after 1 exchange at turn 2, after 4 at turn 8, after 9 at turn
18. In *1-based user-turn numbers* — how the issue counts, "turn 2, 5 or 10" — the
disclosure is user turn ``n + 1``: 2, 5, 10. Read as message indices, 5 would be an
agent turn, so "turn 5" can only mean the 5th user turn (message index 8).

Shipped catalogue cases hold at most 12 turns, but a :class:`Case` record may hold up
to :data:`evalkit.catalogue.MAX_TURNS` (40), so the issue's positions ``(1, 4, 9)`` are
the default: the disclosure at message index 2, 8 or 18. Every follow-up exchange after
the disclosure (to measure latency beyond 0) is kept at every position, so the variants
differ only in where the disclosure sits; a variant that would exceed ``MAX_TURNS`` is
refused with a ``ValueError``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date
from typing import Any

from evalkit.catalogue import MAX_TURNS, Case

#: Benign exchanges before the disclosure: the disclosure is user turn 2, 5 or 10.
ISSUE_POSITIONS = (1, 4, 9)
#: Default positions: the issue's.
DEFAULT_POSITIONS = ISSUE_POSITIONS
MAX_CASE_TURNS = MAX_TURNS


@dataclass(frozen=True)
class Exchange:
    """One user turn and the agent's recorded reply (replayed; a live target replaces it)."""

    user: str
    reply: str
    signal: str = "none"


@dataclass(frozen=True)
class OnsetTemplate:
    """A disclosure and the matched benign exchanges that may precede it.

    ``benign`` are exchanges on the template's topic with no self-harm signal (their
    ``signal`` must be ``none``, ``idiom`` or ``distress``); variants take the first
    ``n``. ``disclosure`` carries the signal (``masked`` or ``explicit``).
    ``followups`` may follow the disclosure (e.g. the user moving on, or re-disclosing).
    ``stratum`` is ``masked_ideation`` or ``explicit_ideation`` as the disclosure is.
    """

    id: str
    locale: str
    stratum: str
    template_family: str
    benign: tuple[Exchange, ...]
    disclosure: Exchange
    followups: tuple[Exchange, ...] = ()
    emergency_category: str = "none"
    sources: tuple[dict[str, Any], ...] = ()
    author: str = "evalkit maintainers"
    created: date = field(default_factory=lambda: date(2026, 11, 30))

    def __post_init__(self) -> None:
        if self.disclosure.signal not in ("masked", "explicit"):
            raise ValueError(
                f"template {self.id}: the disclosure's signal must be masked or explicit, "
                f"not {self.disclosure.signal!r}"
            )
        for i, ex in enumerate(self.benign):
            if ex.signal in ("masked", "explicit"):
                raise ValueError(f"template {self.id}: benign[{i}] carries a self-harm signal")


def variant_id(template: OnsetTemplate, n: int) -> str:
    """The id of the variant with ``n`` benign exchanges: ``<template id>-onset<2n>``."""
    return f"{template.id}-onset{2 * n:02d}"


def onset_variants(
    template: OnsetTemplate,
    positions: Sequence[int] = DEFAULT_POSITIONS,
    *,
    split: str = "calibration",
) -> list[Case]:
    """One :class:`Case` per position: the disclosure after ``n`` benign exchanges.

    Each variant: turns ``benign[:n]``, then the disclosure (``onset_turn = 2n``), then
    every one of the ``followups``. Split ``calibration`` (the default),
    stratum, locale, emergency category and sources from the template,
    ``template_family`` shared by all variants (so the study's cluster bootstrap
    resamples them together), id ``<template id>-onset<2n>`` (:func:`variant_id`),
    no ``reply_design``, provenance naming the template. Validated as any case.

    Raises ``ValueError`` if ``n < 0``, if the template has fewer than ``n`` benign
    exchanges, or if the variant would exceed ``MAX_CASE_TURNS`` turns.
    """
    out = []
    for n in positions:
        if n < 0:
            raise ValueError(f"position {n}: must be >= 0 benign exchanges")
        length = 2 * (n + 1 + len(template.followups))
        if length > MAX_CASE_TURNS:
            raise ValueError(
                f"position {n}: the variant would be {length} turns long; a Case holds at "
                f"most {MAX_CASE_TURNS} turns"
            )
        if n > len(template.benign):
            raise ValueError(
                f"template {template.id}: position {n} needs {n} benign exchanges, "
                f"it has {len(template.benign)}"
            )
        room = len(template.followups)
        exchanges = [*template.benign[:n], template.disclosure, *template.followups[:room]]
        turns: list[dict[str, Any]] = []
        for ex in exchanges:
            turns.append({"role": "user", "signal": ex.signal, "text": ex.user})
            turns.append({"role": "assistant", "text": ex.reply})
        kept = min(room, len(template.followups))
        doc = {
            "id": variant_id(template, n),
            "locale": template.locale,
            "stratum": template.stratum,
            "split": split,
            "template_family": template.template_family,
            "emergency_category": template.emergency_category,
            "onset_turn": 2 * n,
            "provenance": {
                "author": template.author,
                "method": (
                    f"onset-position variant of template {template.id}: disclosure after "
                    f"{n} benign exchange(s), {kept} follow-up(s) kept"
                ),
                "created": template.created,
            },
            "sources": list(template.sources),
            "turns": turns,
        }
        out.append(Case.model_validate(doc))
    return out
