"""The catalogue as the gate reads it when a rubric version other than the one in force is
asked for: the ground of an exploratory verdict (ADR-0017), never of a launch verdict.

The gate checks each ledger row's rubric hash against ``catalogue.rubric(dim)``, the
rubric in force, and sets aside rows judged under any other version. To describe a rubric
variant, :func:`gate_view` files the asked rubric under the version in force, so the gate
reads the variant's rows; :func:`variant_reasons` says, in words, why a verdict read that
way is exploratory, and :func:`variant_scope` which dimensions it covers.
``evaluate(..., rubric_versions=...)`` uses them; the study pages too
(``evalkit.report.gate_view``, ``evalkit.report.exploration``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

from evalkit.catalogue import Catalogue, FrozenConstants
from evalkit.errors import CatalogueError, Problem


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


def variant_reasons(catalogue: Catalogue, rubric_versions: Mapping[str, str] | None) -> list[str]:
    """Why reading ``rubric_versions`` is not the gate, one sentence per dimension whose
    asked version differs from the one in force (or that has none in force), in dimension
    order; empty when every asked version is the one in force. Checked as
    :func:`check_rubric_versions`."""
    asked = check_rubric_versions(catalogue, rubric_versions)
    in_force = catalogue.constants.rubrics_in_force
    reasons = []
    for dim, version in sorted(asked.items()):
        now = in_force.get(dim)
        if now is None:
            reasons.append(f"{dim} rubric {version} is studied; no {dim} rubric is in force")
        elif now != version:
            reasons.append(f"{dim} rubric {version} is studied; {now} is in force")
    return reasons


def gate_view(catalogue: Catalogue, rubric_versions: Mapping[str, str] | None) -> Catalogue:
    """The catalogue as the gate sees it when the asked rubric versions are the ones read.

    In this view the asked rubric is filed under the version in force, so the gate reads
    the rows judged under it, and its verdict describes the same pairs as an agreement
    table of those rows. Nothing else changes: the constants, their hash and their
    ratification stay those of the catalogue, as in the rows. The view is for an
    exploratory verdict only, never for gate evidence. Without a differing version the
    catalogue itself is returned. Checked as :func:`check_rubric_versions`.
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


def variant_scope(
    constants: Catalogue | FrozenConstants, rubric_versions: Mapping[str, str] | None
) -> tuple[list[str], list[str]]:
    """Why a verdict under ``rubric_versions`` is exploratory (empty: it is the gate's),
    and the gated dimensions it covers (empty: every one), in the gate's order.

    Raises ``ValueError`` for bare constants (a variant needs the catalogue's rubrics) and
    for a differing request that names a dimension the gate does not read;
    :class:`~evalkit.errors.CatalogueError` for a version without a rubric file."""
    if not rubric_versions:
        return [], []
    if not isinstance(constants, Catalogue):
        raise ValueError("rubric_versions needs the loaded Catalogue, not bare FrozenConstants")
    reasons = variant_reasons(constants, rubric_versions)
    gated = constants.constants.gated_dimensions
    if not reasons:
        return [], []
    stray = sorted(set(rubric_versions) - set(gated))
    if stray:
        raise ValueError(
            f"rubric_versions names {', '.join(stray)}, not gated; the gate reads "
            f"{', '.join(gated)}"
        )
    return reasons, [d for d in gated if d in rubric_versions]
