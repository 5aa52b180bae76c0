"""Records of the catalogue: cases, labels, rubrics, frozen constants, locale resources.

The records are split by concept: cases and labels here, rubrics in
:mod:`evalkit.catalogue._rubric`, the frozen constants and locale resources in
:mod:`evalkit.catalogue._frozen`, and the strict field types all of them share in
:mod:`evalkit.catalogue._fields`. This module re-exports them, so
``from evalkit.catalogue._models import Rubric`` keeps working.

These are facts, so every model is frozen. Unknown fields are rejected: a typo in a
catalogue file is an error, never a silently ignored key. Validation is strict: no
string is read as a number or a boolean, no boolean as a number, no number as a string
(an integer is accepted where a float is meant, as the same number). Lists read from
YAML become tuples; dates are ``datetime.date`` values or ``YYYY-MM-DD`` strings.
Identifiers (case, source and template family ids, bins, dimensions) are
:data:`IDENTIFIER_PATTERN`: ASCII, so no look-alike or zero-width character and no path.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field, model_validator

from evalkit.catalogue._fields import (
    FILE_NAME_PATTERN,
    IDENTIFIER_PATTERN,
    LOCALE_PATTERN,
    STRICT,
    CalendarDate,
    Identifier,
    Items,
    is_identifier,
)
from evalkit.catalogue._frozen import (
    AuditRule,
    FrozenConstants,
    GateRule,
    LocaleResources,
    MutationRule,
)
from evalkit.catalogue._rubric import (
    PRESENCE_GATE,
    RULE_ID_PATTERN,
    SIGNAL_ABSENT,
    Rubric,
    RubricExample,
)

__all__ = [
    "CATALOGUE_MAX_TURNS",
    "FILE_NAME_PATTERN",
    "GATED_STRATA",
    "IDEATION_STRATA",
    "IDENTIFIER_PATTERN",
    "LOCALE_PATTERN",
    "MAX_TURNS",
    "PRESENCE_GATE",
    "PRESENT_SIGNALS",
    "RULE_ID_PATTERN",
    "SIGNAL_ABSENT",
    "AuditRule",
    "CalendarDate",
    "Case",
    "CaseDesign",
    "FrozenConstants",
    "GateRule",
    "Identifier",
    "Items",
    "Label",
    "LocaleResources",
    "MutationRule",
    "Provenance",
    "Rubric",
    "RubricExample",
    "Source",
    "Turn",
    "is_identifier",
]  # fmt: skip

Role = Literal["user", "assistant"]
Signal = Literal["none", "idiom", "distress", "masked", "explicit"]
Stratum = Literal[
    "benign",
    "medical_emergency",
    "masked_ideation",
    "explicit_ideation",
    "diagnostic",
    "injection_canary",
]
Split = Literal["calibration", "heldout"]
EmergencyCategory = Literal["emergent", "conditional", "non_emergent", "none"]
SelfHarmDesign = Literal[
    "handled",
    "partial_no_routing",
    "partial_no_engagement",
    "partial_wrong_line",
    "partial_no_emergency",
    "missed",
    "over_recognition",
    "absent_acknowledged",
    "absent_plain",
    "injection",
]
EscalationDesign = Literal["absent", "escalated_well", "wrong_urgency", "over_escalated", "missed"]
FaithfulnessDesign = Literal["faithful", "partly_unfaithful", "unfaithful", "no_sources"]

#: Signal levels that count as a self-harm signal being present.
PRESENT_SIGNALS: frozenset[str] = frozenset({"masked", "explicit"})
#: Strata whose rows enter the gate's kappa; diagnostic and canary cases are reported apart.
GATED_STRATA: frozenset[str] = frozenset(
    {"benign", "medical_emergency", "masked_ideation", "explicit_ideation"}
)
#: Strata holding genuine or ambiguous ideation: the rows of the recall check.
IDEATION_STRATA: frozenset[str] = frozenset({"masked_ideation", "explicit_ideation"})

#: Longest conversation a :class:`Case` record may hold (onset-position variants run long).
MAX_TURNS = 40
#: Longest conversation a shipped catalogue case may hold (checked by the loader).
CATALOGUE_MAX_TURNS = 12


class Turn(BaseModel):
    """One message of a conversation. User turns carry the annotated signal level."""

    model_config = STRICT

    role: Role
    text: str = Field(min_length=1)
    signal: Signal | None = None
    """Annotated self-harm signal of a user turn; must be absent on assistant turns."""

    @model_validator(mode="after")
    def _signal_only_on_user_turns(self) -> Turn:
        if self.role == "user" and self.signal is None:
            raise ValueError(
                "a user turn needs a `signal` (none, idiom, distress, masked, explicit)"
            )
        if self.role == "assistant" and self.signal is not None:
            raise ValueError("an assistant turn must not carry a `signal`")
        if not self.text.strip():
            raise ValueError("turn text is blank")
        return self


class Source(BaseModel):
    """A short document a faithful reply must rest on."""

    model_config = STRICT

    id: Identifier
    kind: Literal["leaflet", "guideline", "faq"]
    title: str = Field(min_length=1)
    text: str = Field(min_length=1)


class Provenance(BaseModel):
    """Who wrote a case and how; every shipped case is synthetic."""

    model_config = STRICT

    author: str = Field(min_length=1)
    method: str = Field(min_length=1)
    created: CalendarDate


class Case(BaseModel):
    """A multi-turn conversation whose final assistant turn is scored.

    Invariants: 2 to :data:`MAX_TURNS` turns (catalogue files: at most
    :data:`CATALOGUE_MAX_TURNS`, checked by the loader), alternating, starting with the user
    and ending with the assistant; ``onset_turn`` is the index of the first user turn whose
    signal is ``masked`` or ``explicit`` (None when there is none).
    """

    model_config = STRICT

    id: Identifier
    locale: str = Field(pattern=LOCALE_PATTERN)
    stratum: Stratum
    split: Split
    template_family: Identifier
    emergency_category: EmergencyCategory
    onset_turn: int | None
    provenance: Provenance
    sources: Items[Source] = ()
    turns: Items[Turn]
    injected_bin: str | None = None
    """On an injection canary (and only there): the bin that the text injected into the
    conversation asks the judge to give. A judge that gives it where the humans did not
    followed the injection: a hard fail of that dimension (ADR-0016)."""

    @model_validator(mode="after")
    def _conversation_shape(self) -> Case:
        if (self.stratum == "injection_canary") != (self.injected_bin is not None):
            raise ValueError(
                "injected_bin: required on an injection_canary case (the bin its injected "
                "text asks for) and not allowed on any other stratum"
            )
        n = len(self.turns)
        if n == 0:
            raise ValueError("turns: the conversation is empty")
        if not 2 <= n <= MAX_TURNS:
            raise ValueError(f"turns: {n} turns; a case holds 2 to {MAX_TURNS}")
        for i, turn in enumerate(self.turns):
            expected = "user" if i % 2 == 0 else "assistant"
            if turn.role != expected:
                raise ValueError(
                    f"turns[{i}]: role is {turn.role!r}, expected {expected!r} "
                    "(turns alternate, starting with the user)"
                )
        if self.turns[-1].role != "assistant":
            raise ValueError("turns: the last turn must be the assistant reply that is scored")
        first = self.first_signal_turn
        if self.onset_turn is not None:
            if not 0 <= self.onset_turn < n:
                raise ValueError(f"onset_turn: {self.onset_turn} is out of range 0..{n - 1}")
            if self.turns[self.onset_turn].role != "user":
                raise ValueError(f"onset_turn: turn {self.onset_turn} is an assistant turn")
        if self.onset_turn != first:
            raise ValueError(
                f"onset_turn: {self.onset_turn} disagrees with the turn signals "
                f"(first masked/explicit user turn is {first})"
            )
        ids = [s.id for s in self.sources]
        if len(set(ids)) != len(ids):
            raise ValueError("sources: duplicate source id")
        return self

    @property
    def first_signal_turn(self) -> int | None:
        """Index of the first user turn whose signal is masked or explicit, or None."""
        for i, turn in enumerate(self.turns):
            if turn.role == "user" and turn.signal in PRESENT_SIGNALS:
                return i
        return None

    @property
    def latest_user_turn(self) -> int:
        """Index of the user turn the scored reply answers."""
        return len(self.turns) - 2

    @property
    def latest_signal(self) -> Signal:
        """Annotated signal of the latest user turn: what presence-gated labels condition on."""
        signal = self.turns[self.latest_user_turn].signal
        assert signal is not None  # guaranteed by Turn validation
        return signal

    @property
    def has_sources(self) -> bool:
        return len(self.sources) > 0


class Label(BaseModel):
    """One human judgement: the bin a labeler gave a case on one dimension."""

    model_config = STRICT

    case_id: str = Field(min_length=1)
    dimension: str = Field(min_length=1)
    bin: str = Field(min_length=1)
    labeler: str = Field(min_length=1)
    note: str | None = None


class CaseDesign(BaseModel):
    """How the author wrote a case, and the bins the author meant: metadata, never a label.

    Kept in ``design/*.csv``, apart from the case files, so that neither a judge nor a
    blind labeler (whose sheet is built from the case files) can see it. The catalogue
    audit and the construct study read it to name the rows a shortcut gets right; the
    gate never reads it.
    """

    model_config = STRICT

    case_id: str = Field(min_length=1)
    self_harm_design: SelfHarmDesign
    escalation_design: EscalationDesign
    faithfulness_design: FaithfulnessDesign
    intended_self_harm: str
    intended_escalation: str
    intended_faithfulness: str | None = None
