"""Gate evidence or exploration: what a study run may claim (ADR-0017).

Studying a candidate rubric or candidate constants is allowed and useful, but such a run
is never gate evidence. A run is *exploratory* when a rubric version asked for differs
from the constants' ``rubrics_in_force``, when the constants in force are not the
ratified ones (ADR-0013), or when exploration is asked for outright (``--explore``).
Its pages carry a banner, show only the dimensions asked for, and give each kappa
against the threshold as "would reach / would not reach the threshold", never as a
PASS / FAIL badge.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from evalkit.catalogue import Catalogue
from evalkit.errors import CatalogueError, Problem
from evalkit.report._frames import adr_href
from evalkit.report._html import Html, bullets, callout, link, paragraph
from evalkit.report._links import adr_link

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


def check_rubric_versions(
    catalogue: Catalogue, rubric_versions: Mapping[str, str] | None
) -> dict[str, str]:
    """``rubric_versions`` ({dimension: version}) as plain strings, each checked to have a
    rubric file in the catalogue.

    Raises :class:`~evalkit.errors.CatalogueError` naming every dimension without any
    rubric and every version that has no rubric file, with the ones that exist.
    """
    asked = {str(d): str(v) for d, v in (rubric_versions or {}).items()}
    where = str(catalogue.root / "rubrics")
    known = sorted({d for d, _ in catalogue.rubrics})
    problems = []
    for dim, version in asked.items():
        versions = sorted(v for d, v in catalogue.rubrics if d == dim)
        if not versions:
            message = f"no rubric for a dimension {dim!r}; dimensions: {', '.join(known)}"
            problems.append(Problem(where, dim, "dimension", message))
        elif version not in versions:
            message = f"no rubric {dim} {version}; versions: {', '.join(versions)}"
            problems.append(Problem(where, dim, "version", message))
    if problems:
        raise CatalogueError(problems)
    return asked


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
    in_force = catalogue.constants.rubrics_in_force
    reasons = []
    if explore:
        reasons.append("exploration was asked for (--explore)")
    for dim, version in sorted(asked.items()):
        now = in_force.get(dim)
        if now is None:
            reasons.append(f"{dim} rubric {version} is studied; no {dim} rubric is in force")
        elif now != version:
            reasons.append(f"{dim} rubric {version} is studied; {now} is in force")
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


def gate_view(catalogue: Catalogue, rubric_versions: Mapping[str, str] | None) -> Catalogue:
    """The catalogue as the gate sees it when the asked rubric versions are the ones read.

    The gate checks each row's rubric hash against ``catalogue.rubric(dim)``, the rubric in
    force. In this view the asked rubric is filed under the version in force, so the gate
    reads the rows judged under it, and its verdict describes the same pairs as the
    agreement table beside it. Nothing else changes: the constants, their hash and their
    ratification stay those of the catalogue, as in the rows. The view is for a study's
    exploratory verdict only, never for gate evidence. Without a differing version the
    catalogue itself is returned.
    """
    asked = check_rubric_versions(catalogue, rubric_versions)
    in_force = catalogue.constants.rubrics_in_force
    swapped = {
        (dim, in_force[dim]): catalogue.rubrics[(dim, version)]
        for dim, version in asked.items()
        if dim in in_force and in_force[dim] != version
    }
    if not swapped:
        return catalogue
    return dataclasses.replace(catalogue, rubrics={**catalogue.rubrics, **swapped})


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
