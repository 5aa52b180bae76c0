"""``run_studies``: execute the four study notebooks and write ``reports/``.

For each study: check its parameters for secrets, execute its ``py:percent`` notebook
with papermill (in this process, one kernel after another), render it without code
cells to ``<out>/<study>.html``. Then write the ADR pages (``<out>/adr/``) and
``<out>/index.html``, and scan every output for secrets.
"""

from __future__ import annotations

import re
import sys
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pandas as pd

from evalkit.catalogue import Catalogue, load
from evalkit.report._adr import AdrPage, render_adrs
from evalkit.report._execute import execute_study
from evalkit.report._exploration import (
    EXPLORATORY,
    Exploration,
    check_rubric_versions,
    exploration,
    exploration_banner,
)
from evalkit.report._html import Html, code, esc, join, link, table
from evalkit.report._provenance import (
    judge_kind,
    judge_label,
    judge_note,
    judges_in_ledger,
    judges_table,
    ledger_frame,
)
from evalkit.report._render import OfflineError, render_notebook, write_page
from evalkit.report._secrets import Finding, SecretLeakError, check_parameters, scan_files
from evalkit.report._style import page
from evalkit.secrets import scrub

REPO = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Study:
    """A study notebook: its file stem, title, one-line summary and own parameters."""

    name: str
    title: str
    summary: str
    extra: Mapping[str, Any] = field(default_factory=dict)


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
            "max_examples": 3,
        },
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


def judge_slug(judge: str) -> str:
    """A file-name-safe form of a judge spec (``anthropic:claude-x`` → ``anthropic_claude-x``)."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", judge).strip("_") or "judge"


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
    cat = load(catalogue)
    asked = check_rubric_versions(cat, rubric_versions)
    out_dir = Path(out)
    out_dir.mkdir(parents=True, exist_ok=True)
    nb_dir = Path(notebooks) if notebooks is not None else _default_dir("notebooks")
    adr_src = Path(adr_dir) if adr_dir is not None else _default_dir("docs/adr")
    ledger_path = (
        Path(ledger) if ledger is not None else Path(ledger_dir) / f"{judge_slug(judge)}.sqlite"
    )
    ledger_path.parent.mkdir(parents=True, exist_ok=True)
    chosen = [s for s in STUDIES if studies is None or s.name in studies]
    unknown = set(studies or ()) - {s.name for s in STUDIES}
    if unknown:
        raise ValueError(f"unknown studies {sorted(unknown)}; known: {[s.name for s in STUDIES]}")
    adrs = render_adrs(adr_src, out_dir)
    results: list[StudyResult] = []
    scrubbed: list[Finding] = []  # secrets scrubbed from executed notebooks: still a leak
    written: list[Path] = [out_dir / "adr" / Path(a.href).name for a in adrs]
    written.append(out_dir / "adr" / "index.html")
    with tempfile.TemporaryDirectory(prefix="evalkit-study-") as work:
        for study in chosen:
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
            standing = _exploration_of(cat, params)
            banner = exploration_banner(standing, str(params.get("adr_base", "adr/")))
            source = nb_dir / f"{study.name}.py"
            run = execute_study(source, Path(work), params, cwd=Path.cwd())
            target = out_dir / f"{study.name}.html"
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
            results.append(
                StudyResult(study, target.name, run.seconds, error, charts, params, standing)
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
        executed = sorted(Path(work).glob("*.ipynb"))
        findings = scrubbed + scan_files([*written, *executed, ledger_path])
    if findings:
        for f in findings:
            if f.path in written:
                f.path.unlink(missing_ok=True)
        listing = "; ".join(sorted({f"{f.path}: {f.what}" for f in findings}))
        raise SecretLeakError(f"secret found in output(s), report files deleted: {listing}")
    return RunSummary(out_dir, index, tuple(results), tuple(adrs))


def write_index(
    out: Path,
    catalogue: Catalogue,
    *,
    judge: str,
    catalogue_path: str,
    ledger: str,
    seed: int,
    results: Sequence[StudyResult],
    adrs: Sequence[AdrPage],
    exploration: Exploration | None = None,
) -> Path:
    """Write ``out/index.html``: the run's parameters, every judge recorded in the ledger
    (read from ``ledger``), a link to every study, and the exploratory banner when the run
    (or any of its studies) is exploratory."""
    now = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    judges = judges_in_ledger(ledger_frame(ledger))
    rows = []
    for r in results:
        status = "rendered" if r.ok else f"failed: {r.error}"
        if r.exploration.exploratory:
            status += f" ({EXPLORATORY.lower()})"
        rows.append(
            {
                "study": link(r.href, r.study.title),
                "what": r.study.summary,
                "status": status,
                "seconds": f"{r.seconds:.1f} s",
                "parameters": Html(
                    "<br>".join(
                        f"{esc(k)}: {esc(_short(v))}"
                        for k, v in r.parameters.items()
                        if k not in ("catalogue", "judge", "ledger", "seed", "adr_base")
                    )
                ),
            }
        )
    studies = table(
        pd.DataFrame(rows, columns=["study", "what", "status", "seconds", "parameters"]),
        {
            "study": "Study",
            "what": "What it shows",
            "status": "Status",
            "seconds": "Run time",
            "parameters": "Study parameters",
        },
        caption="Studies",
        empty="No study was run.",
    )
    standing = exploration or Exploration()
    if not standing.exploratory:
        standing = next((r.exploration for r in results if r.exploration.exploratory), standing)
    banner = exploration_banner(standing).html + judge_note(judge, "adr/", judges).html
    answers = (
        [{"k": "Answers", "v": join("replayed from the ledger (judge spec ", code(judge), ")")}]
        if judge_kind(judge) == "replay"
        else []
    )
    asked = dict(standing.rubric_versions)
    run = table(
        pd.DataFrame(
            [
                {"k": "Judge", "v": code(judge_label(judge, judges))},
                *answers,
                {
                    "k": "Rubrics",
                    "v": ", ".join(f"{d} {v}" for d, v in asked.items()) or "in force",
                },
                {
                    "k": "Kind of run",
                    "v": EXPLORATORY
                    if standing.exploratory
                    else "gate run (the rubrics in force, ratified constants)",
                },
                {"k": "Catalogue", "v": code(catalogue_path)},
                {
                    "k": "Cases",
                    "v": f"{len(catalogue.cases)} ({len(catalogue.split('calibration'))} "
                    f"calibration, {len(catalogue.split('heldout'))} held-out)",
                },
                {"k": "Ledger", "v": code(ledger)},
                {"k": "Seed", "v": str(seed)},
                {"k": "Constants hash", "v": code(catalogue.constants_hash)},
                {"k": "Framing hash", "v": code(catalogue.framing_hash)},
                {"k": "Rendered", "v": now},
            ]
        ),
        {"k": "Run", "v": "Value"},
        caption="This run",
    )
    adr_items = (
        "".join(f'<li><a href="{esc(a.href)}">{esc(a.title)}</a></li>' for a in adrs)
        or "<li>No decision records were found.</li>"
    )
    failed = [r for r in results if not r.ok]
    status_note = (
        f'<div class="ek-callout ek-refusal"><p class="ek-callout-title">{len(failed)} study(ies) '
        "failed</p><p>Their pages show where they stopped.</p></div>"
        if failed
        else ""
    )
    body = (
        "<h1>evalkit studies</h1>"
        '<p class="ek-lede">Can an LLM judge stand in for human experts on safety-critical '
        "dimensions of a health chat agent? These studies compare the judge with human labels "
        "and decide, with a gate that cannot be gamed, whether it may gate a launch. Each page "
        "below opens offline; the decision records behind every verdict are linked from them."
        f"</p>{banner}{status_note}{studies.html}{run.html}{judges_table(judges, catalogue).html}"
        "<h2>Decision records (ADRs)</h2><p>The rules the verdicts cite.</p>"
        f"<ul>{adr_items}</ul>"
    )
    path = out / "index.html"
    path.write_text(scrub(page("evalkit studies", body)), encoding="utf-8")
    return path


def _exploration_of(catalogue: Catalogue, params: Mapping[str, Any]) -> Exploration:
    """The standing of one study's page, from the parameters it ran with."""
    return exploration(
        catalogue,
        params.get("rubric_versions") or None,
        explore=bool(params.get("explore")),
        dimensions=params.get("dimensions"),
    )


def _refused_page(study: Study, error: str, banner: Html | None = None) -> str:
    body = (
        (banner.html if banner is not None else "")
        + '<p class="ek-nav"><a href="index.html">All studies</a></p>'
        f"<h1>{esc(study.title)}</h1>"
        '<div class="ek-callout ek-refusal"><p class="ek-callout-title">This study was not '
        f"rendered</p><p>{esc(error)}</p></div>"
    )
    return page(study.title, body)


def _short(value: Any) -> str:
    if isinstance(value, list | tuple):
        return ", ".join(str(v) for v in value) or "—"
    if isinstance(value, dict):
        return ", ".join(f"{k}={v}" for k, v in value.items()) or "in force"
    return str(value)
