"""The frozen constants (the gate's rule, the audit's ceilings, the mutation rule, the
rubrics in force) and the locale resources: what no study may tweak.
"""

from __future__ import annotations

import hashlib
import json
from typing import Literal

from pydantic import BaseModel, Field, model_validator

from evalkit.catalogue._fields import (
    FILE_NAME_PATTERN,
    LOCALE_PATTERN,
    STRICT,
    CalendarDate,
    Identifier,
    Items,
)


class GateRule(BaseModel):
    """How the launch gate decides: the statistic, its weights and the threshold."""

    model_config = STRICT

    statistic: Literal["cohens_kappa"]
    weights: Literal["linear", "quadratic"] | None
    threshold: float = Field(gt=0, le=1)
    """Point estimate of the statistic must reach this; the interval is reported beside."""
    interval_level: float = Field(gt=0, lt=1)
    max_failed_share: float = Field(ge=0, lt=1)
    """Largest share of unparseable, refused or errored judge answers a dimension may have."""
    min_cell_n: int = Field(ge=1)
    """Below this many rows a per-stratum or per-locale cell is descriptive, not gating."""
    min_pairs: int = Field(ge=1)
    """Below this many gated (judge, human) pairs a dimension is a hard fail, whatever its
    kappa (ADR-0014): too few pairs to tell a passing judge from a lucky one."""


class AuditRule(BaseModel):
    """How hard a catalogue must be to pass without reading the conversation (ADR-0011)."""

    model_config = STRICT

    shortcut_ceiling: float = Field(gt=0, le=1)
    """A shortcut whose kappa point estimate reaches this fails the catalogue audit."""
    two_sided_ceiling: float | None = Field(default=None, gt=0, le=1)
    """The ceiling of the shallow two-sided readers (ADR-0028); None: ``shortcut_ceiling``."""


class MutationRule(BaseModel):
    """When a rubric mutant is killed (ADR-0029): see :mod:`evalkit.construct._mutate`."""

    model_config = STRICT

    kill: Literal["gate_or_rule_interval"]
    """Killed when the mutant's kappa on the judged cases is under the gate threshold while
    the rubric in force reaches it on the same cases, or when on the rule's own cases the
    mutant's agreement interval lies wholly under the in-force agreement interval."""
    control_sample: int = Field(ge=0)
    """Cases that do not exercise the rule, drawn (seeded) and judged beside its cases."""
    max_rule_cases: int = Field(ge=4)
    """At most this many of the rule's cases are judged (a seeded sample when more)."""
    interval_level: float = Field(gt=0, lt=1)


class FrozenConstants(BaseModel):
    """The constants no study may tweak; changing one is a recorded decision (an ADR).

    ``framing`` holds the text of the framing template read from ``framing_file``.
    """

    model_config = STRICT

    bins: Items[Identifier]
    gate: GateRule
    gated_dimensions: Items[Identifier]
    rubrics_in_force: dict[Identifier, str]
    """Rubric version the gate uses for each gated dimension."""
    framing_file: str = Field(pattern=FILE_NAME_PATTERN)
    """A file in the catalogue folder itself (a bare file name: no folder, no path)."""
    anchoring: str
    audit: AuditRule | None = None
    """The catalogue audit's ceiling; None means the catalogue declares none (the audit
    then refuses to give a verdict)."""
    mutation: MutationRule | None = None
    """When a rubric mutant counts as killed; None: rubric mutation testing refuses."""
    framing: str = ""

    @model_validator(mode="after")
    def _consistent(self) -> FrozenConstants:
        if len(self.bins) < 2 or len(set(self.bins)) != len(self.bins):
            raise ValueError("bins: need at least two distinct, ordered bins")
        missing = [d for d in self.gated_dimensions if d not in self.rubrics_in_force]
        if missing:
            raise ValueError(f"rubrics_in_force: no rubric version for {missing}")
        return self

    def content_hash(self) -> str:
        """sha256 of the constants' canonical JSON, framing text included.

        This is the identity the ledger and the gate compare; it ignores comments and
        formatting of ``constants.yaml`` (whose bytes are pinned separately by a test).
        """
        data = self.model_dump(mode="json")
        # Fields added later leave the identity of constants that do not use them as it was.
        if data.get("mutation") is None:
            data.pop("mutation", None)
        if isinstance(data.get("audit"), dict) and data["audit"].get("two_sided_ceiling") is None:
            data["audit"].pop("two_sided_ceiling")
        canonical = json.dumps(data, sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(canonical.encode("utf-8")).hexdigest()

    @property
    def framing_hash(self) -> str:
        """sha256 of the framing template text."""
        return hashlib.sha256(self.framing.encode("utf-8")).hexdigest()

    @property
    def low(self) -> str:
        return self.bins[0]

    @property
    def high(self) -> str:
        return self.bins[-1]


class LocaleResources(BaseModel):
    """Where a person in one locale is routed: checked deterministically, not by a judge."""

    model_config = STRICT

    locale: str = Field(pattern=LOCALE_PATTERN)
    crisis_line_name: str
    crisis_numbers: Items[str] = Field(min_length=1)
    """Numbers of the locale's suicide and crisis line, as a user would dial them."""
    urgent_numbers: Items[str] = ()
    """Non-emergency urgent medical advice (for example NHS 111)."""
    emergency_number: str
    source: str
    verified_on: CalendarDate
