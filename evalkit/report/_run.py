"""``run_studies``: execute the study notebooks and write ``reports/``.

Every study's parameters are checked before anything runs. Then the studies run a few
at a time (one kernel each, up to the cores available, :mod:`._schedule`): each executes
its notebook (``<notebooks>/<study>.ipynb``, shipped without outputs) with papermill and
is rendered without code cells to ``<out>/<study>.html``. A line says when each starts
and ends; a progress line names what runs meanwhile. Then the ADR pages (``<out>/adr/``,
or links to pages rendered elsewhere: ``adr_base``), ``<out>/index.html`` (:mod:`._index`)
and ``run.json`` are written in the order of :data:`STUDIES`, never in the order the
studies finished, and every output is scanned for secrets.

Studies run at the same time share the judge ledger: the ledger's leases (ADR-0019) make
sure no request is judged twice, and each study reads its answers by request key, so
what a page shows does not depend on which study asked first.
"""

from __future__ import annotations

import functools
import json
import sys
import tempfile
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evalkit._memo import CACHE_VARIABLE
from evalkit.catalogue import Catalogue, load
from evalkit.judge._backends import judge_slug
from evalkit.report._adr import AdrPage, list_adrs, render_adrs
from evalkit.report._execute import execute_study, thread_limits
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
    check_target,
    check_values,
    declared_parameters,
    notebook_declarations,
)
from evalkit.report._render import OfflineError, render_notebook, write_page
from evalkit.report._schedule import Reporter, cores_available, run_jobs
from evalkit.report._secrets import Finding, SecretLeakError, check_parameters, scan_files
from evalkit.report._studies import (  # importable from here as before
    STUDIES,
    Study,
    StudyResult,
    study_parameters,
)
from evalkit.report._style import page
from evalkit.report._summary import NOT_APPLICABLE, Headline, read_headline
from evalkit.secrets import scrub

REPO = Path(__file__).resolve().parents[2]


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
    adr_base: str | None = None,
    jobs: int | None = None,
    cache_dir: str | Path | None = None,
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
    ``adr_base``: the ADR pages are not rendered into ``out/adr/``; every link to one
    goes to ``adr_base`` + its file name instead (``../adr/`` for a run in a sub-folder
    of a run that renders them). Default: render them into ``out/adr/``.
    ``jobs``: how many studies run at a time (default: the cores available). ``log``
    receives each line (default: stderr, where a terminal also gets a progress line).
    The pages, the index and ``run.json`` are the same whatever ``jobs`` is.
    ``cache_dir``: where the kernels remember deterministic results that other runs
    compute again (:mod:`evalkit._memo`: the catalogue audit's fitted shortcuts); None:
    no cache, unless the environment names one.
    """
    reporter = Reporter(log) if log is not None else Reporter(stream=sys.stderr)
    if jobs is not None and jobs < 1:
        raise ValueError(f"jobs: {jobs}: run at least one study at a time")
    if adr_base is not None and not _relative_link(adr_base):
        raise ValueError(f"adr_base: {adr_base!r}: a relative link ending in '/', such as ../adr/")
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
            adr_base=adr_base or "adr/",
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
    workers = min(jobs or cores_available(), max(1, len(planned)))
    env = thread_limits(max(1, cores_available() // workers))  # side by side, they share
    if cache_dir:
        env[CACHE_VARIABLE] = str(Path(cache_dir).resolve())
    reporter.line(
        f"evalkit study: {len(planned)} stud{'y' if len(planned) == 1 else 'ies'}, "
        f"{workers} at a time -> {out_dir}"
    )
    out_dir.mkdir(parents=True, exist_ok=True)
    ledger_path.parent.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    if adr_base is None:
        adrs = render_adrs(adr_src, out_dir)
        written += [out_dir / a.href for a in adrs] + [out_dir / "adr" / "index.html"]
    else:
        adrs = list_adrs(adr_src, adr_base)
    with tempfile.TemporaryDirectory(prefix="evalkit-study-") as work:
        studied: dict[str, tuple[StudyResult, tuple[Finding, ...]]] = {}
        pending = []
        for study, params in planned:
            reason = study.applies(cat, params) if study.applies is not None else None
            if reason is None:
                pending.append((study, params))
                continue
            target = out_dir / f"{study.name}.html"
            target.write_text(scrub(_not_applicable_page(study, reason)), encoding="utf-8")
            reporter.line(f"{study.name}: does not apply to this catalogue: {reason}")
            standing = _exploration_of(cat, params)
            headline = Headline(NOT_APPLICABLE, (("Why", reason),))
            result = StudyResult(study, target.name, 0.0, None, 0, params, standing, headline)
            studied[study.name] = (result, ())
        rendering = threading.Lock()  # one page rendered at a time (nbconvert in this process)

        def job(study: Study, params: dict[str, Any]) -> tuple[StudyResult, tuple[Finding, ...]]:
            return _run_one(
                study, params, cat, nb_dir, out_dir, Path(work), reporter, rendering, env
            )

        done = run_jobs(
            # the heaviest start first; the results come back in the order given
            [(s.name, functools.partial(job, s, p)) for s, p in _heaviest_first(pending)],
            workers=workers,
            reporter=reporter,
        )
        studied.update({r.study.name: (r, found) for r, found in done})
        results = [studied[s.name][0] for s, _ in planned]  # the order of STUDIES, always
        scrubbed = [f for s, _ in planned for f in studied[s.name][1]]
        written += [out_dir / r.href for r in results]
        reporter.line("evalkit study: writing the index, checking every output for secrets")
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
            adr_base=adr_base or "adr/",
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


def _run_one(
    study: Study,
    params: dict[str, Any],
    cat: Catalogue,
    nb_dir: Path,
    out_dir: Path,
    work: Path,
    reporter: Reporter,
    rendering: threading.Lock,
    env: Mapping[str, str] | None = None,
) -> tuple[StudyResult, tuple[Finding, ...]]:
    """Execute one study's notebook, render its page, say how it went; the secrets
    scrubbed from its executed notebook are returned as findings (still a leak)."""
    standing = _exploration_of(cat, params)
    banner = exploration_banner(standing, str(params.get("adr_base", "adr/")))
    target = out_dir / f"{study.name}.html"
    source = nb_dir / f"{study.name}.ipynb"
    run = execute_study(source, work, params, cwd=Path.cwd(), env=env)
    error, charts = run.error, 0
    with rendering:
        try:
            rendered = render_notebook(run.notebook, study.title, banner)
        except OfflineError as exc:  # never write a page that loads or runs foreign code
            error = str(exc)
            target.write_text(scrub(_refused_page(study, error, banner)), encoding="utf-8")
        else:
            write_page(rendered, target)
            charts = rendered.charts
            if rendered.stderr.strip():
                reporter.line(
                    f"{study.name}: the notebook wrote to stderr:\n{rendered.stderr.rstrip()}"
                )
    state = "FAILED: " + error if error else "rendered"
    reporter.line(f"{study.name}: {state} in {run.seconds:.1f} s -> {target}")
    headline = read_headline(run.notebook) if error is None else None
    result = StudyResult(study, target.name, run.seconds, error, charts, params, standing, headline)
    return result, tuple(Finding(target, kind) for kind in run.scrubbed)


def _heaviest_first(
    planned: Sequence[tuple[Study, dict[str, Any]]],
) -> list[tuple[Study, dict[str, Any]]]:
    """``planned`` by :attr:`Study.weight`, heaviest first, in their order among equals."""
    return sorted(planned, key=lambda item: -item[0].weight)


def _relative_link(base: str) -> bool:
    """Whether ``base`` is a relative link prefix to a folder (``../adr/``), which is what
    a page opened offline from disk can follow."""
    return (
        base.endswith("/")
        and not base.startswith("/")
        and ":" not in base
        and all(c not in base for c in "\"'<>\\ ?#")
    )


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
