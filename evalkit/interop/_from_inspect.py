"""``from_inspect``: Inspect AI logs → an imported catalogue and an imported judge's ledger.

:func:`from_inspect` is pure apart from reading the logs: it scrubs every sample of its
secrets (:mod:`evalkit.interop._redaction`; what was redacted where is in
``InspectImport.redactions``) and returns the catalogue (in memory, with no labels yet),
the ledger records of each scorer of the mapping and what was set apart.
:func:`write_import` writes them: the catalogue folder, the ledger (validated line by line
by :func:`evalkit.judge.import_jsonl` against the catalogue, as any JSONL import) and the
blind labeling kit beside the catalogue (Label Studio tasks and config, a blank long CSV),
since an Inspect log holds no human labels.

Before it writes anything, :func:`write_import` refuses (:class:`EvalkitError`, exit 2):

* paths that overlap (:func:`check_paths`): the kit or the ledger inside the catalogue
  folder (the catalogue would no longer load), the ledger or the catalogue inside the
  blind kit (labelers would see the judge's answers, or the sample metadata the
  provenance keeps), anything written inside the template catalogue;
* an existing labeling kit whose files differ from the import's (:func:`kit_files`),
  unless ``replace_kit`` (``--replace-kit``); an identical one is left alone;
* a re-import that would change what the ledger records (:func:`check_ledger`): a ledger
  records one answer per request, so a corrected log goes into a new ledger. A re-import
  of the same answers is a no-op. The check is made inside the ledger's write
  transaction, so no other process can write between the check and the write.

The write is all or nothing (:func:`write_import`; :mod:`evalkit._files`): a
full disk at any stage leaves every file, and the ledger's rows, as they were.
"""

from __future__ import annotations

import json
import tempfile
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evalkit._files import Staging, disk_problem
from evalkit.catalogue import Catalogue, load
from evalkit.errors import EvalkitError, LedgerError
from evalkit.interop._inspect import InspectSamples, read_logs, sample_cases
from evalkit.interop._judged import judge_name, scorer_records
from evalkit.interop._labelstudio import labelstudio_files
from evalkit.interop._long_csv import long_csv_template
from evalkit.interop._mapping import ScoreMapping, load_mapping
from evalkit.interop._redaction import Redaction, scrub_samples
from evalkit.interop._scaffold import catalogue_files, imported_catalogue
from evalkit.ledger._records import FINAL_STATUSES
from evalkit.ledger._schema import scrub_record
from evalkit.ledger._store import Ledger
from evalkit.ledger._validate import read_jsonl
from evalkit.secrets import scrubber


@dataclass(frozen=True)
class InspectImport:
    """The result of :func:`from_inspect`."""

    catalogue: Catalogue
    records: list[dict[str, Any]]
    """Ledger records, one per (case, scorer)."""
    samples: InspectSamples
    mapping: ScoreMapping
    redactions: tuple[Redaction, ...] = ()
    """Where secrets were removed from the logs, and which kinds (never the secret)."""
    template: Path | None = None
    """The template catalogue's folder (nothing is written inside it)."""

    def counts(self) -> dict[str, dict[str, int]]:
        """Judge → status → number of records (``unparseable`` never holds a bin)."""
        out: dict[str, Counter[str]] = {}
        for rec in self.records:
            out.setdefault(rec["judge"], Counter())[rec["status"]] += 1
        return {judge: dict(c) for judge, c in out.items()}


def from_inspect(
    logs: Sequence[str | Path],
    mapping: ScoreMapping | str | Path,
    *,
    like: Catalogue | str | Path = "catalogues",
    out: str | Path = "imported",
    scorers: Sequence[str] | None = None,
    epoch: int = 1,
) -> InspectImport:
    """Read Inspect logs into an imported catalogue and ledger records (nothing written).

    ``mapping``: a :class:`ScoreMapping` or the path of a mapping file. ``like``: the
    template catalogue whose frozen constants, framing and resources are kept.
    ``out``: the folder the catalogue will live in (its ``root``). ``scorers``: keep only
    the mapping's dimensions read from these scorers (default: all of them); a scorer
    named here that the mapping does not read is an error. ``epoch``: the epoch imported.
    Every text read from the logs is scrubbed of secrets first (module docstring).
    """
    template = like if isinstance(like, Catalogue) else load(like)
    bins = template.constants.bins
    rules = mapping if isinstance(mapping, ScoreMapping) else load_mapping(mapping, bins)
    if scorers:
        unknown = sorted(set(scorers) - set(rules.scorers()))
        if unknown:
            raise EvalkitError(
                f"--scorer {', '.join(unknown)}: the mapping reads no such scorer "
                f"(it reads {', '.join(rules.scorers())})"
            )
        kept = {d: r for d, r in rules.dimensions.items() if r.scorer in scorers}
        rules = rules.model_copy(update={"dimensions": kept})
    scrubbed, redactions = scrub_samples(read_logs(logs), scrubber())
    samples = sample_cases(scrubbed, rules.defaults, template.resources, epoch=epoch)
    if not samples.cases:
        raise EvalkitError("the logs hold no sample with a reply to score: nothing to import")
    catalogue = imported_catalogue(template, rules, list(samples.cases.values()), Path(out))
    records = scorer_records(catalogue, samples.samples, rules)
    return InspectImport(catalogue, records, samples, rules, tuple(redactions), template.root)


def default_ledger(mapping: ScoreMapping) -> Path:
    """``ledgers/<judge>.sqlite`` for a single scorer, ``ledgers/imported-inspect.sqlite``
    for several."""
    names = list(mapping.scorers())
    if len(names) == 1:
        slug = judge_name(names[0]).replace(":", "_").replace("/", "_")
        return Path("ledgers") / f"{slug}.sqlite"
    return Path("ledgers") / "imported-inspect.sqlite"


def _jsonl(records: Sequence[dict[str, Any]]) -> str:
    return "".join(json.dumps(r, sort_keys=True, ensure_ascii=False) + "\n" for r in records)


def _inside(path: Path, folder: Path) -> bool:
    """Whether ``path`` is ``folder`` or lies under it (both resolved, symlinks followed)."""
    p, f = path.resolve(), folder.resolve()
    return p == f or p.is_relative_to(f)


def check_paths(root: Path, kit: Path, ledger: Path, template: Path | None = None) -> None:
    """Refuse paths that overlap (module docstring), or a kit or ledger of the wrong kind.

    Raises :class:`EvalkitError` listing every problem; nothing is written either way.
    """
    problems: list[str] = []
    if _inside(kit, root):
        problems.append(
            f"--labeling {kit} is inside --out {root}: the catalogue folder holds only the "
            "catalogue (it would not load); put the kit beside it (the default is "
            f"{root.name}-labeling)"
        )
    if _inside(ledger, root):
        problems.append(
            f"--ledger {ledger} is inside --out {root}: the catalogue folder holds only the "
            "catalogue (it would not load); put the ledger beside it (e.g. ledgers/)"
        )
    if _inside(ledger, kit):
        problems.append(
            f"--ledger {ledger} is inside --labeling {kit}: the labeling kit is blind, and the "
            "ledger holds the scorer's answers; put the ledger elsewhere"
        )
    if _inside(root, kit) and root.resolve() != kit.resolve():
        problems.append(
            f"--out {root} is inside --labeling {kit}: the labeling kit is blind, and the "
            "catalogue's provenance holds the sample metadata; put the catalogue beside it"
        )
    if template is not None:
        for flag, path in (("--out", root), ("--labeling", kit), ("--ledger", ledger)):
            if _inside(path, template):
                problems.append(
                    f"{flag} {path} is inside the template catalogue --like {template} "
                    "(it would no longer load); write the import outside it"
                )
    if kit.exists() and not kit.is_dir():
        problems.append(f"--labeling {kit}: exists and is not a folder")
    if ledger.is_dir():
        problems.append(f"--ledger {ledger}: is a folder; name a ledger file")
    if problems:
        raise EvalkitError("nothing was written:\n" + "\n".join(f"  - {p}" for p in problems))


def _answer(rec: dict[str, Any]) -> tuple[Any, ...]:
    """What a record answers: status, problem and results (not where it came from)."""
    results = sorted(json.dumps(r, sort_keys=True) for r in rec.get("results") or [])
    return (rec["status"], rec.get("problem"), tuple(results))


def _bins(rec: dict[str, Any]) -> tuple[Any, ...]:
    bins = sorted((r["dimension"], r["bin"]) for r in rec.get("results") or [])
    return (rec["status"], tuple(bins))


def _check_export(ledger: Path, text: str, n: int) -> dict[str, int]:
    """A JSONL export is written whole: an existing one must already hold ``text``."""
    if not ledger.exists():
        return {}
    if ledger.read_bytes() == text.encode("utf-8"):
        return {"identical": n}
    raise EvalkitError(
        f"{ledger}: exists and holds other records; a JSONL export is written whole, "
        "never merged or overwritten: choose a new --ledger (nothing was written)"
    )


def _refuse_changed(ledger: Path, clean: Sequence[dict[str, Any]]) -> Callable[..., None]:
    """The re-import check of :func:`check_ledger`, given the rows the ledger holds."""

    def check(old: dict[str, dict[str, Any]]) -> None:
        held = [(old[r["request_key"]], r) for r in clean if r["request_key"] in old]
        differ = [(o, r) for o, r in held if o["status"] in FINAL_STATUSES]
        differ = [(o, r) for o, r in differ if _answer(o) != _answer(r)]
        if not differ:
            return
        bins = sum(_bins(o) != _bins(r) for o, r in differ)
        first = differ[0][1]
        raise EvalkitError(
            f"{ledger}: already records other answers to {len(differ)} of the {len(clean)} "
            f"requests of this import ({bins} of them with other bins or status; the first: case "
            f"{first['case_id']}, judge {first['judge']}). A ledger keeps the answer it "
            "recorded first, so this import would keep the old ones. Import the corrected "
            "log into a new ledger (--ledger NEW.sqlite); nothing was written"
        )

    return check


def check_ledger(ledger: Path, records: Sequence[dict[str, Any]]) -> None:
    """Refuse a re-import that would change what the SQLite ``ledger`` records (module
    docstring).

    ``records``: the validated records of the import. A ledger that holds a final answer
    to one of their requests must hold the same answer: status, problem and results
    (bins and rationales, which quote the value), as stored, scrubbed; otherwise
    :class:`EvalkitError` names the ledger, how many requests differ (how many of them in
    their bins or status) and what to do. The same answers from another copy or run of
    the log (another path, eval id or date) pass: the ledger keeps its first record of
    them. A missing ledger passes; a file that is not a ledger is a
    :class:`~evalkit.errors.LedgerError`. :func:`write_import` makes this same check
    inside the transaction that writes the ledger.
    """
    if not ledger.exists():
        return
    s = scrubber()
    clean = [scrub_record(r, s) for r in records]
    with Ledger(ledger, create=False) as led:
        old = {r["request_key"]: r for r in led.records([r["request_key"] for r in clean])}
    _refuse_changed(ledger, clean)(old)


def kit_files(catalogue: Catalogue, kit: Path, *, replace: bool = False) -> dict[Path, str]:
    """The labeling kit's files that need writing (path -> text): those missing or
    different. A kit file that exists and differs is refused (:class:`EvalkitError`,
    naming each) unless ``replace``; an identical one is left alone."""
    files = labelstudio_files(catalogue, kit)
    files[kit / "labels-template.csv"] = long_csv_template(catalogue)
    other = [p for p, t in files.items() if p.exists() and p.read_bytes() != t.encode("utf-8")]
    if other and not replace:
        raise EvalkitError(
            f"--labeling {kit}: already holds a labeling kit that differs from this import's "
            f"({', '.join(p.name for p in other)}); pass --replace-kit to overwrite it, or "
            "choose another --labeling; nothing was written"
        )
    return {p: t for p, t in files.items() if not p.exists() or p in other}


def _failed(exc: BaseException, staging: Staging) -> EvalkitError:
    """The error of an import that could not be written, once everything is put back."""
    if isinstance(exc, OSError):
        cause = disk_problem(exc)
    elif "disk is full" in str(exc):  # SQLite's SQLITE_FULL, as a LedgerError
        cause = f"the disk is full ({exc})"
    else:
        cause = str(exc)
    failed = staging.undo()
    kept = (
        f"could not put back {', '.join(map(str, failed))}"
        if failed
        else "nothing was written or changed"
    )
    return EvalkitError(f"could not write the import: {cause}; {kept}")


def write_import(
    result: InspectImport,
    *,
    ledger: str | Path | None = None,
    labeling: str | Path | None = None,
    replace_kit: bool = False,
) -> dict[str, Any]:
    """Write the catalogue to ``result.catalogue.root`` (which must not exist or be empty),
    the records to ``ledger`` (SQLite, or a ``.jsonl`` export; default
    :func:`default_ledger`) and the labeling kit to ``labeling`` (default
    ``<catalogue>-labeling``). Returns what was written and the import's counts.

    All or nothing. Every check comes first (paths, an existing kit that differs unless
    ``replace_kit``, an existing JSONL export). Then everything is staged beside its
    target (:class:`~evalkit._files.Staging`): the catalogue as a temporary
    folder, the kit files and a JSONL export as temporary files. A SQLite ledger is
    written last, in one transaction that checks it (:func:`check_ledger`, under the
    write lock), adds the rows, moves the staged files into place and only then commits.
    Any failure (``OSError``, a full disk in SQLite, a refused re-import) rolls the
    transaction back and puts every file back: no catalogue folder, the kit and a JSONL
    export as they were, a new ledger (and the folders made for it) removed, an existing
    ledger with the rows it had. Raises :class:`EvalkitError` naming the problem.
    """
    root = result.catalogue.root
    if root.exists() and (not root.is_dir() or any(root.iterdir())):
        raise EvalkitError(f"{root}: exists and is not an empty folder; choose a new --out")
    ledger_path = Path(ledger) if ledger is not None else default_ledger(result.mapping)
    kit = Path(labeling) if labeling is not None else root.with_name(f"{root.name}-labeling")
    check_paths(root, kit, ledger_path, result.template)
    kit_texts = kit_files(result.catalogue, kit, replace=replace_kit)
    s = scrubber()
    text = _jsonl([scrub_record(r, s) for r in result.records])
    try:
        with tempfile.TemporaryDirectory() as tmp:  # every line validated first
            export = Path(tmp) / "imported.jsonl"
            export.write_text(_jsonl(result.records), encoding="utf-8")
            records = read_jsonl(export, catalogue=result.catalogue)
    except OSError as exc:
        raise EvalkitError(f"could not validate the import: {disk_problem(exc)}") from None
    clean = [scrub_record(r, s) for r in records]
    unchanged: dict[str, int] = {}
    if ledger_path.suffix == ".jsonl":
        unchanged = _check_export(ledger_path, text, len(records))
    staging = Staging()
    try:
        staging.folder(root, catalogue_files(result.catalogue))
        for path, kit_text in kit_texts.items():
            staging.file(path, kit_text)
        if ledger_path.suffix == ".jsonl":
            if not unchanged:
                staging.file(ledger_path, text)
            staging.move()
            counts = unchanged or {"added": len(records)}
        elif ledger_path.exists():  # new rows, checked and written in one transaction
            with Ledger(ledger_path) as led:
                counts = led.import_records(
                    records,
                    check=_refuse_changed(ledger_path, clean),
                    before_commit=staging.move,
                )
        else:  # a new ledger, built beside its place and linked there last
            with Ledger(staging.new_file(ledger_path)) as led:
                counts = led.import_records(records)
            staging.move()
    except (OSError, LedgerError) as exc:
        raise _failed(exc, staging) from None
    except BaseException:
        staging.undo()
        raise
    staging.finish()
    return {
        "catalogue": root,
        "ledger": ledger_path,
        "ledger_counts": counts,
        "labeling": [
            kit / "labelstudio-tasks.json",
            kit / "labelstudio-config.xml",
            kit / "labels-template.csv",
        ],
        "labeling_written": sorted(kit_texts),
        "counts": result.counts(),
        "no_reply": [s.sample_id for s in result.samples.no_reply],
        "other_epochs": result.samples.other_epochs,
    }
