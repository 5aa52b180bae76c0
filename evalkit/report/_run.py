"""``run_studies``: execute the study notebooks and write ``reports/``.

For each study: check its parameters for secrets, execute its notebook
(``<notebooks>/<study>.ipynb``, shipped without outputs) with papermill (in this
process, one kernel after another), render it without code cells to
``<out>/<study>.html``. Then write the ADR pages (``<out>/adr/``) and
``<out>/index.html`` (:mod:`._index`), and scan every output for secrets.
"""

from __future__ import annotations

import json
import sys
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evalkit.catalogue import Catalogue, load
from evalkit.judge._backends import judge_slug
from evalkit.report._adr import AdrPage, render_adrs
from evalkit.report._execute import execute_study
from evalkit.report._exploration import (
    Exploration,
    check_rubric_versions,
    exploration,
    exploration_banner,
)
from evalkit.report._html import Html, esc
from evalkit.report._index import RUN_FILE, write_index
from evalkit.report._parameters import (  # the first two stay importable from here
    RUN_PARAMETERS,  # noqa: F401
    StudyParameterError,  # noqa: F401
    check_dimensions,
    check_pool_ledger,
    check_target,
    check_values,
    declared_parameters,
    notebook_declarations,
)
from evalkit.report._render import OfflineError, render_notebook, write_page
from evalkit.report._secrets import Finding, SecretLeakError, check_parameters, scan_files
from evalkit.report._style import page
from evalkit.report._summary import NOT_APPLICABLE, Headline, read_headline
from evalkit.secrets import scrub

REPO = Path(__file__).resolve().parents[2]


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


STUDIES: tuple[Study, ...] = (
    Study(
        "calibration_study",
        "Calibration study: does the judge agree with the human labels?",
        "Per gated dimension: agreement with intervals, marginals, confusion heatmap, "
        "kappa-paradox diagnostics, the gate verdict with its reasons, per-locale and "
        "per-stratum tables, the recall check and a sample-size / power panel.",
        {"n_resamples": 2000, "max_examples": 3},
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


@dataclass(frozen=True)
class RunSummary:
    """What :func:`run_studies` wrote."""

    out: Path
    index: Path
    results: tuple[StudyResult, ...]
    adrs: tuple[AdrPage, ...]

    @property
    def ok(self) -> bool:
        return all(r.ok for r in self.results)


def _default_dir(relative: str) -> Path:
    here = Path(relative)
    return here if here.is_dir() else REPO / relative


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


def run_studies(
    *,
    catalogue: str | Path = "catalogues",
    judge: str = "baseline",
    out: str | Path = "reports",
    ledger_dir: str | Path = "ledgers",
    ledger: str | Path | None = None,
    seed: int = 0,
    notebooks: str | Path | None = None,
    adr_dir: str | Path | None = None,
    studies: Sequence[str] | None = None,
    overrides: Mapping[str, Mapping[str, Any]] | None = None,
    parameters: Mapping[str, Any] | None = None,
    rubric_versions: Mapping[str, str] | None = None,
    explore: bool = False,
    log: Callable[[str], None] | None = None,
) -> RunSummary:
    """Execute the studies and write ``out``: one page per study, ADR pages, the index.

    Paths are used as given (relative to the working directory, which is also the
    kernels'), so the pages show ``catalogues`` rather than a machine's absolute path.
    ``overrides`` maps a study name to parameter values that replace its defaults (e.g.
    fewer bootstrap resamples in tests); under ``"*"``, values for every study that has
    the parameter.
    ``parameters`` are the command line's ``-p NAME=VALUE``: each replaces the value of
    every study whose notebook declares it (checked by :func:`declared_parameters`
    before anything runs). Every study's parameters, whoever set them, are then checked
    against the type and range its notebook declares (:mod:`._parameters`); a value
    refused raises :class:`StudyParameterError` before any notebook runs or any file is
    written.
    ``rubric_versions`` and ``explore`` make the run exploratory (ADR-0017) when a version
    differs from the one in force or ``explore`` is set (as do unratified constants): every
    page then opens with the banner "Exploratory — not gate evidence". A dimension or
    version the catalogue has no rubric for raises :class:`~evalkit.errors.CatalogueError`
    before anything runs.
    Raises :class:`~evalkit.report._secrets.SecretLeakError` (after deleting the
    offending files) if any output holds a secret; a study that fails is rendered with
    its error and reported in the summary, and the others still run.
    """
    say = log or (lambda msg: print(msg, file=sys.stderr))
    check_parameters({"judge": judge, "catalogue": str(catalogue), "ledger": str(ledger or "")})
    out_dir = Path(out)
    nb_dir = Path(notebooks) if notebooks is not None else _default_dir("notebooks")
    adr_src = Path(adr_dir) if adr_dir is not None else _default_dir("docs/adr")
    ledger_path = (
        Path(ledger) if ledger is not None else Path(ledger_dir) / f"{judge_slug(judge)}.sqlite"
    )
    chosen = [s for s in STUDIES if studies is None or s.name in studies]
    unknown = set(studies or ()) - {s.name for s in STUDIES}
    if unknown:
        raise ValueError(f"unknown studies {sorted(unknown)}; known: {[s.name for s in STUDIES]}")
    given = dict(parameters or {})
    takes = declared_parameters(chosen, nb_dir, given) if given else {}
    declared = {s.name: notebook_declarations(nb_dir / f"{s.name}.ipynb") for s in chosen}
    options = {"catalogue": str(catalogue), "judge": judge, "ledger": str(ledger_path),
               "seed": seed, "explore": explore}  # fmt: skip
    for study in chosen:  # what the command line gave, checked before the catalogue is read
        early = {**options, **{k: given[k] for k in takes.get(study.name, ())}}
        check_values(study.name, declared[study.name], early, given, nb_dir)
    check_target(given)
    cat = load(catalogue)
    asked = check_rubric_versions(cat, rubric_versions)
    check_dimensions(cat, given)
    planned = []
    for study in chosen:  # every study's parameters are checked before any notebook runs
        params = study_parameters(
            study,
            catalogue=cat,
            catalogue_path=str(catalogue),
            judge=judge,
            ledger=str(ledger_path),
            seed=seed,
            rubric_versions=asked,
            explore=explore,
        )
        shared = (overrides or {}).get("*", {})
        params.update({k: v for k, v in shared.items() if k in params})
        params.update((overrides or {}).get(study.name, {}))
        params.update({k: given[k] for k in takes.get(study.name, ())})
        check_values(study.name, declared[study.name], params, given, nb_dir)
        if study.inputs is not None:
            study.inputs(cat, params)
        planned.append((study, params))
    out_dir.mkdir(parents=True, exist_ok=True)
    ledger_path.parent.mkdir(parents=True, exist_ok=True)
    adrs = render_adrs(adr_src, out_dir)
    results: list[StudyResult] = []
    scrubbed: list[Finding] = []  # secrets scrubbed from executed notebooks: still a leak
    written: list[Path] = [out_dir / "adr" / Path(a.href).name for a in adrs]
    written.append(out_dir / "adr" / "index.html")
    with tempfile.TemporaryDirectory(prefix="evalkit-study-") as work:
        for study, params in planned:
            standing = _exploration_of(cat, params)
            banner = exploration_banner(standing, str(params.get("adr_base", "adr/")))
            target = out_dir / f"{study.name}.html"
            reason = study.applies(cat, params) if study.applies is not None else None
            if reason is not None:
                target.write_text(scrub(_not_applicable_page(study, reason)), encoding="utf-8")
                written.append(target)
                say(f"{study.name}: does not apply to this catalogue: {reason}")
                results.append(
                    StudyResult(
                        study,
                        target.name,
                        0.0,
                        None,
                        0,
                        params,
                        standing,
                        Headline(NOT_APPLICABLE, (("Why", reason),)),
                    )
                )
                continue
            source = nb_dir / f"{study.name}.ipynb"
            run = execute_study(source, Path(work), params, cwd=Path.cwd())
            error, charts = run.error, 0
            try:
                rendered = render_notebook(run.notebook, study.title, banner)
            except OfflineError as exc:  # never write a page that loads or runs foreign code
                error = str(exc)
                target.write_text(scrub(_refused_page(study, error, banner)), encoding="utf-8")
            else:
                write_page(rendered, target)
                charts = rendered.charts
                if rendered.stderr.strip():
                    say(f"{study.name}: the notebook wrote to stderr:\n{rendered.stderr.rstrip()}")
            written.append(target)
            scrubbed += [Finding(target, kind) for kind in run.scrubbed]
            state = "FAILED: " + error if error else "rendered"
            say(f"{study.name}: {state} in {run.seconds:.1f} s -> {target}")
            headline = read_headline(run.notebook) if error is None else None
            results.append(
                StudyResult(
                    study, target.name, run.seconds, error, charts, params, standing, headline
                )
            )
        index = write_index(
            out_dir,
            cat,
            judge=judge,
            catalogue_path=str(catalogue),
            ledger=str(ledger_path),
            seed=seed,
            results=results,
            adrs=adrs,
            exploration=exploration(cat, asked, explore=explore),
        )
        written.append(index)
        run_file = out_dir / RUN_FILE
        run_file.write_text(
            json.dumps(
                {"judge": judge, "title": f"Studies with {judge}",
                 "studies": [r.study.name for r in results]},
                indent=1,
            ) + "\n",
            encoding="utf-8",
        )  # fmt: skip
        written.append(run_file)
        executed = sorted(Path(work).glob("*.ipynb"))
        findings = scrubbed + scan_files([*written, *executed, ledger_path])
    if findings:
        for f in findings:
            if f.path in written:
                f.path.unlink(missing_ok=True)
        listing = "; ".join(sorted({f"{f.path}: {f.what}" for f in findings}))
        raise SecretLeakError(f"secret found in output(s), report files deleted: {listing}")
    return RunSummary(out_dir, index, tuple(results), tuple(adrs))


def _exploration_of(catalogue: Catalogue, params: Mapping[str, Any]) -> Exploration:
    """The standing of one study's page, from the parameters it ran with."""
    return exploration(
        catalogue,
        params.get("rubric_versions") or None,
        explore=bool(params.get("explore")),
        dimensions=params.get("dimensions"),
    )


def _not_applicable_page(study: Study, reason: str) -> str:
    body = (
        '<p class="ek-nav"><a href="index.html">All studies</a></p>'
        f"<h1>{esc(study.title)}</h1>"
        '<div class="ek-callout"><p class="ek-callout-title">This study does not apply to '
        f"this catalogue</p><p>{esc(reason)}</p></div>"
    )
    return page(study.title, body)


def _refused_page(study: Study, error: str, banner: Html | None = None) -> str:
    body = (
        (banner.html if banner is not None else "")
        + '<p class="ek-nav"><a href="index.html">All studies</a></p>'
        f"<h1>{esc(study.title)}</h1>"
        '<div class="ek-callout ek-refusal"><p class="ek-callout-title">This study was not '
        f"rendered</p><p>{esc(error)}</p></div>"
    )
    return page(study.title, body)
