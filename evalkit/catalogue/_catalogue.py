"""The loaded catalogue: validated records plus views as pandas frames."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from evalkit.catalogue._consensus import ConsensusRule, disagreements, label_sets_frame
from evalkit.catalogue._models import (
    Case,
    CaseDesign,
    FrozenConstants,
    Label,
    LocaleResources,
    Rubric,
)
from evalkit.catalogue._ratify import Ratification, RatificationStatus, ratification_status

CASE_COLUMNS = (
    "case_id",
    "locale",
    "stratum",
    "split",
    "template_family",
    "emergency_category",
    "onset_turn",
    "n_turns",
    "latest_signal",
    "has_sources",
)


@dataclass(frozen=True)
class Catalogue:
    """A whole, valid catalogue. Build it with :func:`evalkit.catalogue.load`.

    ``labels`` is the set the gate and the studies read: the consensus of
    ``label_sets`` (each labeler's own set, by name) built by ``consensus_rule``.
    ``design`` is author metadata (how each case was written); no judge, labeler or gate
    reads it.
    """

    root: Path
    cases: tuple[Case, ...]
    labels: tuple[Label, ...]
    rubrics: dict[tuple[str, str], Rubric]
    constants: FrozenConstants
    resources: dict[str, LocaleResources]
    label_sets: dict[str, tuple[Label, ...]] = field(default_factory=dict)
    consensus_rule: ConsensusRule = field(default_factory=ConsensusRule)
    design: tuple[CaseDesign, ...] = ()
    case_files: dict[str, str] = field(default_factory=dict)
    """The file each case was read from (the audit's ``file`` surface feature)."""
    ratifications: tuple[Ratification, ...] = ()
    """The record of ratified constants (``ratified.yaml``, ADR-0013)."""
    _by_id: dict[str, Case] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_by_id", {c.id: c for c in self.cases})

    def case(self, case_id: str) -> Case:
        """The case with this id; ``KeyError`` naming the id if there is none."""
        try:
            return self._by_id[case_id]
        except KeyError:
            raise KeyError(f"no case {case_id!r} in catalogue {self.root}") from None

    def split(self, split: str) -> list[Case]:
        """Cases of one split (``calibration`` or ``heldout``), in catalogue order."""
        return [c for c in self.cases if c.split == split]

    def rubric(self, dimension: str, version: str | None = None) -> Rubric:
        """The rubric for ``dimension``: ``version``, or the one in force by the constants."""
        version = version or self.constants.rubrics_in_force[dimension]
        try:
            return self.rubrics[(dimension, version)]
        except KeyError:
            raise KeyError(f"no rubric {dimension} {version} in {self.root}/rubrics") from None

    @property
    def constants_hash(self) -> str:
        """Identity of the frozen constants: :meth:`FrozenConstants.content_hash`."""
        return self.constants.content_hash()

    @property
    def ratification(self) -> RatificationStatus:
        """Whether the constants in force are ratified, and by which ADR (ADR-0013)."""
        return ratification_status(self.constants_hash, self.ratifications)

    @property
    def framing_hash(self) -> str:
        """sha256 of the framing template text."""
        return self.constants.framing_hash

    def cases_frame(self) -> pd.DataFrame:
        """One row per case.

        Columns: ``case_id``, ``locale``, ``stratum``, ``split``, ``template_family``,
        ``emergency_category``, ``onset_turn`` (nullable Int64), ``n_turns``,
        ``latest_signal``, ``has_sources``; with author design metadata, also its
        columns (``self_harm_design``, ..., ``intended_faithfulness``).
        """
        rows = [
            {
                "case_id": c.id,
                "locale": c.locale,
                "stratum": c.stratum,
                "split": c.split,
                "template_family": c.template_family,
                "emergency_category": c.emergency_category,
                "onset_turn": c.onset_turn,
                "n_turns": len(c.turns),
                "latest_signal": c.latest_signal,
                "has_sources": c.has_sources,
            }
            for c in self.cases
        ]
        frame = pd.DataFrame(rows, columns=list(CASE_COLUMNS))
        frame["onset_turn"] = frame["onset_turn"].astype("Int64")
        if self.design:
            design = pd.DataFrame([d.model_dump() for d in self.design])
            frame = frame.merge(design, on="case_id", how="left")
        return frame

    def labels_frame(self) -> pd.DataFrame:
        """One row per label: ``case_id``, ``dimension``, ``bin``, ``labeler``, ``note``."""
        return pd.DataFrame(
            [lab.model_dump() for lab in self.labels],
            columns=["case_id", "dimension", "bin", "labeler", "note"],
        )

    def label_sets_frame(self) -> pd.DataFrame:
        """Every labeler's labels: ``label_set``, ``case_id``, ``dimension``, ``bin``,
        ``labeler``, ``note``."""
        return label_sets_frame(self.label_sets)

    def disagreements(self) -> pd.DataFrame:
        """(case, dimension) pairs on which the label sets differ, one column per set."""
        return disagreements(self.label_sets)
