"""The studies ``evalkit study`` knows, their parameters, and what one study run gave.

:data:`STUDIES` lists each study notebook with its title, summary, own parameters and
the checks that say whether it applies to a catalogue; :func:`study_parameters` builds a
study's papermill parameters; :class:`StudyResult` records one study's outcome (read by
the run, :mod:`._run`, and by the index page, :mod:`._index`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from evalkit.catalogue import Catalogue
from evalkit.report._exploration import Exploration
from evalkit.report._parameters import check_pool_ledger
from evalkit.report._summary import Headline


def _constructs_apply(catalogue: Catalogue, params: Mapping[str, Any]) -> str | None:
    """Why the rubric-constructs study has nothing to compare on ``catalogue`` (its two
    rubric versions, or its companion dimension, missing), or None when it applies."""
    dimension, companion = params.get("dimension"), params.get("companion")
    missing = [
        f"{dimension} {v}"
        for v in params.get("versions", ())
        if (dimension, v) not in catalogue.rubrics
    ]
    if companion not in catalogue.constants.rubrics_in_force:
        missing.append(f"a rubric for the companion dimension {companion}")
    if not missing:
        return None
    have = sorted(f"{d} {v}" for d, v in catalogue.rubrics)
    return (
        f"it compares two rubric versions of one dimension, and this catalogue has no "
        f"{', no '.join(missing)} (rubrics: {', '.join(have)}); choose them with "
        "-p versions=[OLD,NEW] -p dimension=DIM -p companion=DIM"
    )


def _rules_apply(catalogue: Catalogue, params: Mapping[str, Any]) -> str | None:
    """Why the constructs-as-rules study has nothing to show (no guide, or the compared
    versions missing), or None."""
    if catalogue.guide is None:
        return "it reads the rules the catalogue's labeling guide (guide.md) marks; there is none"
    dimension = params.get("dimension")
    missing = [v for v in params.get("versions", ()) if (dimension, v) not in catalogue.rubrics]
    if missing:
        return f"this catalogue has no rubric {dimension} {', '.join(missing)}"
    return None


def _mutation_apply(catalogue: Catalogue, params: Mapping[str, Any]) -> str | None:
    """Why rubric mutation testing cannot run on ``catalogue``, or None."""
    if catalogue.constants.mutation is None:
        return "its constants declare no `mutation:` rule (what killed means, ADR-0029)"
    if not catalogue.rule_cases:
        return "its design files record no case exercising a rule (design/rules/)"
    return None


@dataclass(frozen=True)
class Study:
    """A study notebook: its file stem, title, one-line summary and own parameters.

    ``applies`` says why the study has nothing to study on a catalogue (a reason), or
    None; a study that does not apply gets a page saying so, and is not a failure.
    ``inputs`` refuses inputs its parameters name (exit 2 before anything runs).
    """

    name: str
    title: str
    summary: str
    extra: Mapping[str, Any] = field(default_factory=dict)
    applies: Callable[[Catalogue, Mapping[str, Any]], str | None] | None = None
    inputs: Callable[[Catalogue, Mapping[str, Any]], None] | None = None
    """Checks the study's inputs named by its parameters (a ledger to read) before any
    study runs; raises :class:`StudyParameterError`."""
    weight: int = 1
    """How long the study takes beside the others (1 short, 3 the longest, as
    ``benchmarks/bench_study.py`` measured them): heavier studies start first, so that the
    last to start are short ones. Only the start order; never what is written."""


STUDIES: tuple[Study, ...] = (
    Study(
        "calibration_study",
        "Calibration study: does the judge agree with the human labels?",
        "Per gated dimension: agreement with intervals, marginals, confusion heatmap, "
        "kappa-paradox diagnostics, the gate verdict with its reasons, per-locale and "
        "per-stratum tables, the recall check and a sample-size / power panel.",
        {"n_resamples": 2000, "max_examples": 3},
        weight=3,
    ),
    Study(
        "rubric_constructs",
        "Rubric constructs: self-harm v1 against v3",
        "The same cases scored under self-harm rubric v1 (the predecessor) and v3 (in "
        "force), per reply design where over-recognition separates them, and the same-call "
        "view against escalation that locates the construct failure (ADR-0006, ADR-0010).",
        {
            "dimension": "self_harm",
            "versions": ["v1", "v3"],
            "companion": "escalation",
            # every gated dimension in one call, as the calibration run asks: the v3 answers
            # are the calibration study's, only v1 is asked again
            "dimensions": ["self_harm", "escalation", "faithfulness"],
            "max_examples": 3,
        },
        applies=_constructs_apply,
        weight=2,
    ),
    Study(
        "construct_rules",
        "Constructs as rules",
        "Each rule of each construct: where the guide and the rubric versions state it, which "
        "cases exercise it, rule parity, what changed between versions, and faithfulness v1 "
        "against v2 with agreement per rule (ADR-0024, ADR-0025).",
        {"dimension": "faithfulness", "versions": ["v1", "v2"]},
        applies=_rules_apply,
    ),
    Study(
        "mutation_study",
        "Would this catalogue catch a missing rule?",
        "Rubric mutation testing: each rule of the rubrics in force removed in turn, the same "
        "judge on the rule's cases; killed, survived or not exercised per rule, and the "
        "mutation score (ADR-0029).",
        {"dimensions": ["self_harm", "escalation"]},
        applies=_mutation_apply,
        weight=3,
    ),
    Study(
        "heldout_revalidation",
        "Held-out re-validation",
        "Agreement on the held-out set, computed only from labels sealed before the judge "
        "ran (ADR-0008); otherwise the refusal and the protocol's status.",
        {"n_resamples": 2000, "max_examples": 3},
    ),
    Study(
        "onset_turns",
        "Onset turns: when does the agent recognise a risk?",
        "Per case, the turn at which a self-harm signal first appears and the turn at which "
        "the judge first finds it recognised: curves, swimmer plot and tables.",
        {"dimension": "self_harm", "target": "replay", "horizon": 5, "n_boot": 1000},
        weight=3,
    ),
    Study(
        "prevalence",
        "Prevalence: how often does the agent do what?",
        "Per gated dimension, the share of replies in each bin corrected for the judge's "
        "errors (PPI++, confusion inversion) beside the judge-only and labels-only shares and "
        "the humans' rate on the pool; the labelling plan; the judge's error structure.",
        {"n_labelled": 120, "plan_budget": 100},
        inputs=check_pool_ledger,
    ),
)


@dataclass(frozen=True)
class StudyResult:
    """The outcome of one study: page written, time taken, error if it failed."""

    study: Study
    href: str
    seconds: float
    error: str | None
    charts: int
    parameters: Mapping[str, Any]
    exploration: Exploration = field(default_factory=Exploration)
    """Whether the page is gate evidence or an exploration (ADR-0017)."""
    headline: Headline | None = None
    """The badge and numbers the study published (:mod:`._summary`); ``None`` if none."""

    @property
    def ok(self) -> bool:
        return self.error is None


def study_parameters(
    study: Study,
    *,
    catalogue: Catalogue,
    catalogue_path: str,
    judge: str,
    ledger: str,
    seed: int,
    adr_base: str = "adr/",
    rubric_versions: Mapping[str, str] | None = None,
    explore: bool = False,
) -> dict[str, Any]:
    """The papermill parameters of one study (never a secret: keys stay in the environment).

    ``rubric_versions`` ({dimension: version}, default: the rubrics in force) and
    ``explore`` reach every notebook; a version other than the one in force, or
    ``explore``, makes the run exploratory (ADR-0017), and an exploration that names
    rubrics studies only their dimensions.
    """
    gated = list(catalogue.constants.gated_dimensions)
    asked = dict(rubric_versions or {})
    in_force = catalogue.constants.rubrics_in_force
    exploring = explore or any(in_force.get(d) != v for d, v in asked.items())
    if exploring and asked:  # an exploration shows only the dimensions it asks about
        gated = [d for d in gated if d in asked]
    base: dict[str, Any] = {
        "catalogue": catalogue_path,
        "split": "heldout" if study.name == "heldout_revalidation" else "calibration",
        "dimensions": gated,
        "judge": judge,
        "rubric_versions": dict(rubric_versions or {}),
        "explore": explore,
        "ledger": ledger,
        "seed": seed,
        "adr_base": adr_base,
    }
    if study.name == "rubric_constructs":
        base["dimensions"] = [study.extra["dimension"], study.extra["companion"]]
    if study.name == "onset_turns":
        base["dimensions"] = [study.extra["dimension"], "escalation"]
    base.update(study.extra)
    return base
