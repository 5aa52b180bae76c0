"""A rubric as data: construct, rules with ids, anchors, worked examples, and the exact
text the judge reads (ADR-0024). Validated as strictly as every catalogue record.
"""

from __future__ import annotations

import hashlib
import re
from typing import Annotated

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, model_validator

from evalkit.catalogue._fields import (
    STRICT,
    Identifier,
    Items,
)


class RubricExample(BaseModel):
    """A worked example written from the construct (never taken from catalogue cases)."""

    model_config = STRICT

    text: str = Field(min_length=1)
    bin: str


#: A rule id: lower-case ASCII letters, digits and ``_``, starting with a letter.
RULE_ID_PATTERN = r"^[a-z][a-z0-9_]{0,47}$"
_RULE_ID = re.compile(RULE_ID_PATTERN)
#: The rule a presence-gated rubric states with its ``presence_gate`` text.
PRESENCE_GATE = "presence_gate"
#: The rule a presence-gated rubric states with its ``signal_absent_anchor``.
SIGNAL_ABSENT = "signal_absent"


def _rule_ids(value: dict[str, str]) -> dict[str, str]:
    for key, text in value.items():
        if not _RULE_ID.fullmatch(key):
            raise ValueError(
                f"rule id {key!a}: lower-case ASCII letters, digits and '_', starting with a letter"
            )
        if key == SIGNAL_ABSENT:
            raise ValueError(
                f"rule {SIGNAL_ABSENT!r} is stated by signal_absent_anchor, not under rules"
            )
        if not text.strip():
            raise ValueError(f"rule {key!r} has no text")
    return value


class Rubric(BaseModel):
    """A rubric: construct, rules and anchors for one dimension, as data the judge reads.

    ``rules`` maps rule ids (stable across versions, the same ids the labeling guide marks,
    ADR-0024) to this rubric's own text for each rule, in the order they are rendered. A
    presence-gated rubric with rules states ``presence_gate`` among them; its
    ``signal_absent_anchor`` states the rule ``signal_absent``. A rubric without rules
    (an older or a user's own file) renders as before, so its hash does not move.

    Its identity is :meth:`content_hash`, the sha256 of :meth:`render`, the exact
    string the judge sees. Two rubric files that render the same string are the same.
    """

    dimension: Identifier
    version: str = Field(pattern=r"^v[0-9]+(-[a-z0-9_]+)*$")
    """``v3``; a derived version (a mutant) adds what it lacks: ``v3-without-look_back``."""
    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True, strict=True)

    presence_gated: bool
    construct_text: str = Field(min_length=1, alias="construct")
    """The construct in prose (``construct`` in the file)."""
    rules: Annotated[dict[str, str], AfterValidator(_rule_ids)] = Field(default_factory=dict)
    """Rule id -> this rubric's text for the rule, in rendering order."""
    signal_absent_anchor: str | None = None
    anchors: dict[str, str]
    examples: Items[RubricExample] = ()

    @model_validator(mode="after")
    def _gate_has_absent_anchor(self) -> Rubric:
        if self.presence_gated and not (self.signal_absent_anchor or "").strip():
            raise ValueError("signal_absent_anchor: a presence-gated rubric needs one")
        if not self.presence_gated and self.signal_absent_anchor is not None:
            raise ValueError("signal_absent_anchor: only presence-gated rubrics carry one")
        if self.rules and self.presence_gated and PRESENCE_GATE not in self.rules:
            raise ValueError(
                f"rules: a presence-gated rubric with rules states {PRESENCE_GATE!r} among them"
            )
        if PRESENCE_GATE in self.rules and not self.presence_gated:
            raise ValueError(f"rules: {PRESENCE_GATE!r} needs presence_gated: true")
        return self

    def rule_ids(self) -> tuple[str, ...]:
        """Every rule this rubric states, in rendering order: its ``rules`` keys, with
        ``signal_absent`` after ``presence_gate`` when the rubric carries that anchor (or
        first, for a presence-gated rubric written without rules)."""
        ids = list(self.rules)
        if self.signal_absent_anchor is not None:
            at = ids.index(PRESENCE_GATE) + 1 if PRESENCE_GATE in ids else 0
            ids.insert(at, SIGNAL_ABSENT)
        return tuple(ids)

    def rule_text(self, rule: str) -> str:
        """This rubric's text for ``rule``; ``KeyError`` naming the rule if it states none."""
        if rule == SIGNAL_ABSENT and self.signal_absent_anchor is not None:
            return self.signal_absent_anchor.strip()
        if rule in self.rules:
            return self.rules[rule].strip()
        raise KeyError(f"rubric {self.dimension} {self.version} states no rule {rule!r}")

    def without(self, rule: str) -> Rubric:
        """This rubric without ``rule``'s text: the mutant of rubric mutation testing.

        Its version says what it lacks (``v3-without-look_back``). Losing the presence
        gate (or the signal-absent anchor) loses both, and the rubric is then not
        presence-gated. ``KeyError`` if the rubric does not state the rule.
        """
        self.rule_text(rule)
        data = self.model_dump(by_alias=True)
        data["version"] = f"{self.version}-without-{rule}"
        if rule in (PRESENCE_GATE, SIGNAL_ABSENT):
            data["rules"] = {k: v for k, v in self.rules.items() if k != PRESENCE_GATE}
            data["signal_absent_anchor"] = None
            data["presence_gated"] = False
        else:
            data["rules"] = {k: v for k, v in self.rules.items() if k != rule}
        return Rubric.model_validate(data, strict=False)

    def render(self, bins: tuple[str, ...] | list[str]) -> str:
        """Render the rubric to the exact string the judge reads.

        Construct, then (with rules) each rule as ``- `id`: text`` in the file's order and
        the signal-absent anchor, then the anchors in bin order. Without rules the older
        form (a generated presence-gate paragraph) is kept byte for byte.
        Deterministic: the same rubric and bins give the same bytes on every machine.
        Raises ``ValueError`` if an anchor is missing for one of ``bins``.
        """
        missing = [b for b in bins if b not in self.anchors]
        if missing:
            raise ValueError(f"rubric {self.dimension} {self.version}: no anchor for {missing}")
        # A derived version (a mutant) is shown under its base version: the judge is not
        # told what the rubric lacks.
        shown = self.version.split("-", 1)[0]
        lines = [f"## Dimension `{self.dimension}` (rubric {shown})", ""]
        lines += ["### Construct", self.construct_text.strip(), ""]
        if self.rules:
            lines.append("### Rules")
            for rule, text in self.rules.items():
                lines.append(f"- `{rule}`: {' '.join(text.split())}")
            lines.append("")
            if self.presence_gated:
                lines += [
                    f"### Signal-absent anchor (`{SIGNAL_ABSENT}`)",
                    " ".join((self.signal_absent_anchor or "").split()),
                    "",
                ]
        elif self.presence_gated:
            lines += [
                "### Presence gate",
                "Decide first whether the signal is present. If it is absent, the score "
                "is the signal-absent anchor, whatever the quality of the reply:",
                (self.signal_absent_anchor or "").strip(),
                "",
            ]
        lines.append("### Anchors")
        for b in bins:
            lines.append(f"- `{b}`: {' '.join(self.anchors[b].split())}")
        if self.examples:
            lines += ["", "### Examples"]
            for ex in self.examples:
                lines.append(f"- ({ex.bin}) {' '.join(ex.text.split())}")
        return "\n".join(lines) + "\n"

    def content_hash(self, bins: tuple[str, ...] | list[str]) -> str:
        """sha256 hex digest of :meth:`render` for ``bins``: the rubric's identity."""
        return hashlib.sha256(self.render(bins).encode("utf-8")).hexdigest()
