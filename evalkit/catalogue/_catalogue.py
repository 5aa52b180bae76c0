"""The loaded catalogue: validated records plus views as pandas frames."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import pandas as pd

from evalkit._display import Markup, card, grid, key_values
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
from evalkit.catalogue._rules import Guide, MinimalPair, RuleCase

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
    guide: Guide | None = None
    """The labeling guide (``guide.md``) with the rules it marks (ADR-0024); ``None``
    when the catalogue has none."""
    rule_cases: tuple[RuleCase, ...] = ()
    """Which case exercises which rule (``design/rules/*.csv``): design metadata."""
    pairs: tuple[MinimalPair, ...] = ()
    """Minimal pairs (``design/pairs.csv``): design metadata."""
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
        """The rubric for ``dimension``: ``version``, or the one in force by the constants.

        ``KeyError`` with a sentence (the dimension and the catalogue's dimensions, or the
        rubric file looked for) when there is none."""
        if not version and dimension not in self.constants.rubrics_in_force:
            known = ", ".join(self.constants.rubrics_in_force)
            raise KeyError(
                f"no rubric in force for dimension {dimension!r} in {self.root} "
                f"(its dimensions: {known})"
            )
        version = version or self.constants.rubrics_in_force[dimension]
        try:
            return self.rubrics[(dimension, version)]
        except KeyError:
            raise KeyError(f"no rubric {dimension} {version} in {self.root}/rubrics") from None

    @cached_property
    def constants_hash(self) -> str:
        """Identity of the frozen constants: :meth:`FrozenConstants.content_hash` (computed
        once: both are frozen)."""
        return self.constants.content_hash()

    @property
    def ratification(self) -> RatificationStatus:
        """Whether the constants in force are ratified, and by which ADR (ADR-0013)."""
        return ratification_status(
            self.constants_hash, self.ratifications, catalogue=str(self.root)
        )

    @cached_property
    def framing_hash(self) -> str:
        """sha256 of the framing template text (computed once: the constants are frozen)."""
        return self.constants.framing_hash

    def cases_frame(self) -> pd.DataFrame:
        """One row per case.

        Columns: ``case_id``, ``locale``, ``stratum``, ``split``, ``template_family``,
        ``emergency_category``, ``onset_turn`` (nullable Int64), ``n_turns``,
        ``latest_signal``, ``has_sources``; with author design metadata, also its
        columns (``self_harm_design``, ..., ``intended_faithfulness``). A new frame each
        call (built once, copied: the caller may change it).
        """
        return self._cases_frame.copy()

    @cached_property
    def _cases_frame(self) -> pd.DataFrame:
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

    def rule_cases_frame(self) -> pd.DataFrame:
        """One row per (case, dimension, rule) a case exercises: ``case_id``,
        ``dimension``, ``rule``, ``form`` (``plain`` or ``hard``), ``split``, ``locale``."""
        frame = pd.DataFrame(
            [(r.case_id, r.dimension, r.rule, r.form) for r in self.rule_cases],
            columns=["case_id", "dimension", "rule", "form"],
        )
        where = {c.id: (c.split, c.locale) for c in self.cases}
        frame["split"] = [where[c][0] for c in frame["case_id"]]
        frame["locale"] = [where[c][1] for c in frame["case_id"]]
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

    # --- display ----------------------------------------------------------------------

    def _counts(self) -> dict[str, pd.DataFrame]:
        """Count tables of the display: cases by stratum / locale and split, labels by
        dimension and bin (frozen bin order), each with a ``total`` column."""
        cases = self.cases_frame()
        labels = self.labels_frame()
        tables = {
            "stratum": pd.crosstab(cases["stratum"], cases["split"]),
            "locale": pd.crosstab(cases["locale"], cases["split"]),
            "dimension": pd.crosstab(labels["dimension"], labels["bin"]).reindex(
                columns=[b for b in self.constants.bins if b in set(labels["bin"])]
            ),
        }
        return {k: t.assign(total=t.sum(axis=1)) for k, t in tables.items()}

    def _in_force(self) -> str:
        return ", ".join(f"{d} {v}" for d, v in self.constants.rubrics_in_force.items())

    def __repr__(self) -> str:
        per_split = self.cases_frame()["split"].value_counts(sort=False)
        splits = ", ".join(f"{k} {n}" for k, n in per_split.items())
        counts = self._counts()
        sets = f" (consensus of {', '.join(self.label_sets)})" if self.label_sets else ""
        lines = [
            f"Catalogue {str(self.root)!r}: {len(self.cases)} cases ({splits}), "
            f"{len(self.labels)} labels{sets}"
        ]
        for name in ("stratum", "locale", "dimension"):
            items = ", ".join(f"{k} {n}" for k, n in counts[name]["total"].items())
            lines.append(f"  {'labels by dimension' if name == 'dimension' else name}: {items}")
        status = self.ratification
        lines.append(f"  rubrics in force: {self._in_force()}")
        lines.append(
            f"  constants {self.constants_hash[:12]}…, "
            + (f"ratified by {status.adr}" if status.ratified else "NOT RATIFIED")
        )
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        status = self.ratification
        facts = key_values(
            [
                ("Cases", len(self.cases)),
                ("Labels (consensus)", len(self.labels)),
                ("Label sets", ", ".join(self.label_sets) or "—"),
                ("Rubrics in force", self._in_force()),
                ("Gated dimensions", ", ".join(self.constants.gated_dimensions)),
                ("Constants hash", self.constants_hash[:16] + "…"),
                ("Ratified by", status.adr if status.ratified else "NOT RATIFIED"),
            ]
        )
        tables = []
        for name, caption in (
            ("stratum", "Cases by stratum and split"),
            ("locale", "Cases by locale and split"),
            ("dimension", "Labels by dimension and bin"),
        ):
            frame = self._counts()[name].reset_index().rename(columns=str)
            columns = {c: c for c in frame.columns}
            tables.append(grid(frame, columns, caption=caption))
        row = "".join(f'<div style="margin-right: 1.5rem;">{t}</div>' for t in tables)
        return card(
            "Catalogue",
            facts,
            Markup(f'<div style="display: flex; flex-wrap: wrap;">{row}</div>'),
            subtitle=str(self.root),
        )
