"""Gate evidence or exploration: what a study run may claim (ADR-0017).

Studying a candidate rubric or candidate constants is allowed and useful, but such a run
is never gate evidence. A run is *exploratory* when a rubric version asked for differs
from the constants' ``rubrics_in_force``, when the constants in force are not the
ratified ones (ADR-0013), or when exploration is asked for outright (``--explore``).
Its pages carry a banner, show only the dimensions asked for, and give each kappa
against the threshold as "would reach / would not reach the threshold", never as a
PASS / FAIL badge. ``gate_view`` and ``check_rubric_versions`` are the gate's
(:mod:`evalkit.gate._view`), which ``evaluate(..., rubric_versions=...)`` reads too.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from evalkit.catalogue import Catalogue
from evalkit.gate._view import check_rubric_versions, gate_view, variant_reasons
from evalkit.report._frames import adr_href
from evalkit.report._html import Html, bullets, callout, link, paragraph
from evalkit.report._links import adr_link

__all__ = [
    "ADR_FILE",
    "EXPLORATORY",
    "Exploration",
    "check_rubric_versions",
    "exploration",
    "exploration_banner",
    "exploration_of",
    "exploration_text",
    "gate_view",
    "threshold_reading",
]

#: The banner's title, on every page of an exploratory run.
EXPLORATORY = "Exploratory — not gate evidence"

#: Where the rule is recorded.
ADR_FILE = "0017-exploratory-studies.html"


@dataclass(frozen=True)
class Exploration:
    """Whether a run is gate evidence, and if not, why.

    ``reasons`` is empty for a gate run. ``dimensions`` are the dimensions asked for (an
    exploratory page shows only those); ``rubric_versions`` the versions asked for,
    checked against the catalogue.
    """

    reasons: tuple[str, ...] = ()
    dimensions: tuple[str, ...] = ()
    rubric_versions: Mapping[str, str] = field(default_factory=dict)

    @property
    def exploratory(self) -> bool:
        return bool(self.reasons)


def exploration(
    catalogue: Catalogue,
    rubric_versions: Mapping[str, str] | None = None,
    *,
    explore: bool = False,
    dimensions: Sequence[str] | None = None,
) -> Exploration:
    """Whether a run of ``catalogue`` with these parameters is exploratory, and why.

    A rubric version asked for that equals the one in force is no reason; one that differs
    (or a dimension with no rubric in force) is. Unratified constants are a reason, and so
    is ``explore``. ``dimensions`` default to the gated dimensions. Raises
    :class:`~evalkit.errors.CatalogueError` for a rubric the catalogue does not hold.
    """
    asked = check_rubric_versions(catalogue, rubric_versions)
    reasons = ["exploration was asked for (--explore)"] if explore else []
    reasons += variant_reasons(catalogue, asked)
    status = catalogue.ratification
    if not status.ratified:
        reasons.append(f"the constants are not the ratified ones: {status.reason()}")
    chosen = tuple(dimensions) if dimensions else tuple(catalogue.constants.gated_dimensions)
    return Exploration(tuple(reasons), chosen, asked)


def exploration_of(catalogue: Catalogue, parameters: Mapping[str, Any]) -> Exploration:
    """The standing of a study run with ``parameters`` (its ``rubric_versions``,
    ``explore`` and ``dimensions``, each optional): :func:`exploration` of them."""
    versions = parameters.get("rubric_versions") or None
    return exploration(
        catalogue,
        versions if isinstance(versions, Mapping) else None,
        explore=bool(parameters.get("explore")),
        dimensions=parameters.get("dimensions") or None,
    )


def exploration_text(found: Exploration) -> str:
    """A run's standing in a few words, for the table of its parameters: ``no (gate
    evidence)``, or ``yes: `` and why (the page's banner says the same at length)."""
    if not found.exploratory:
        return "no (gate evidence)"
    return "yes: " + "; ".join(found.reasons)


def threshold_reading(kappa: float | None, threshold: float, status: str = "ok") -> str:
    """An exploratory kappa against the gate's threshold (``kappa >= threshold``, the
    gate's rule on the point estimate), in words, never PASS / FAIL. A kappa that is not
    meaningful (None) is said so with its ``status``."""
    if kappa is None:
        return f"kappa not meaningful ({status})"
    return "would reach the threshold" if kappa >= threshold else "would not reach the threshold"


def exploration_banner(found: Exploration, adr_base: str = "adr/") -> Html:
    """The banner of every page of an exploratory run (empty for a gate run)."""
    if not found.exploratory:
        return Html("")
    rule = link(adr_link(ADR_FILE.removesuffix(".html") + ".md", adr_base), "ADR-0017")
    return callout(
        EXPLORATORY,
        paragraph(
            "This run studies something other than what the gate reads, so no number on this "
            "page is a gate verdict and none may gate a launch. Each kappa is shown against "
            "the threshold as what the gate would find, never as a pass or a fail (",
            rule,
            "; the gate rules themselves: ",
            link(adr_href("adr-0005", adr_base), "ADR-0005"),
            ").",
        ),
        paragraph("Why this run is exploratory:"),
        bullets(found.reasons),
        kind="warning",
    )
