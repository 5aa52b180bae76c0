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
* a re-import that would change what the ledger records (:func:`check_ledger`): a ledger
  records one answer per request, so a corrected log goes into a new ledger. A re-import
  of the same answers is a no-op.
"""

from __future__ import annotations

import json
import tempfile
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evalkit.catalogue import Catalogue, load
from evalkit.errors import EvalkitError
from evalkit.interop._inspect import InspectSamples, read_logs, sample_cases
from evalkit.interop._judged import judge_name, scorer_records
from evalkit.interop._labelstudio import write_labelstudio
from evalkit.interop._long_csv import long_csv_template
from evalkit.interop._mapping import ScoreMapping, load_mapping
from evalkit.interop._redaction import Redaction, scrub_samples
from evalkit.interop._scaffold import catalogue_files, imported_catalogue, write_files
from evalkit.judge import import_jsonl
from evalkit.judge._ledger import Ledger, scrub_record
from evalkit.judge._records import FINAL_STATUSES
from evalkit.judge._validate import read_jsonl
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
    :class:`~evalkit.errors.LedgerError`.
    """
    if not ledger.exists():
        return
    s = scrubber()
    clean = [scrub_record(r, s) for r in records]
    with Ledger(ledger, create=False) as led:
        old = {r["request_key"]: r for r in led.records([r["request_key"] for r in clean])}
    held = [(old[r["request_key"]], r) for r in clean if r["request_key"] in old]
    held = [(o, r) for o, r in held if o["status"] in FINAL_STATUSES]
    differ = [(o, r) for o, r in held if _answer(o) != _answer(r)]
    if differ:
        bins = sum(_bins(o) != _bins(r) for o, r in differ)
        first = differ[0][1]
        raise EvalkitError(
            f"{ledger}: already records other answers to {len(differ)} of the {len(clean)} "
            f"requests of this import ({bins} of them with other bins or status; the first: case "
            f"{first['case_id']}, judge {first['judge']}). A ledger keeps the answer it "
            "recorded first, so this import would keep the old ones. Import the corrected "
            "log into a new ledger (--ledger NEW.sqlite); nothing was written"
        )


def write_import(
    result: InspectImport,
    *,
    ledger: str | Path | None = None,
    labeling: str | Path | None = None,
) -> dict[str, Any]:
    """Write the catalogue to ``result.catalogue.root`` (which must not exist or be empty),
    the records to ``ledger`` (SQLite, or a ``.jsonl`` export; default
    :func:`default_ledger`) and the labeling kit to ``labeling`` (default
    ``<catalogue>-labeling``). Returns what was written and the import's counts.
    """
    root = result.catalogue.root
    if root.exists() and (not root.is_dir() or any(root.iterdir())):
        raise EvalkitError(f"{root}: exists and is not an empty folder; choose a new --out")
    ledger_path = Path(ledger) if ledger is not None else default_ledger(result.mapping)
    kit = Path(labeling) if labeling is not None else root.with_name(f"{root.name}-labeling")
    check_paths(root, kit, ledger_path, result.template)
    with tempfile.TemporaryDirectory() as tmp:
        export = Path(tmp) / "imported.jsonl"
        export.write_text(_jsonl(result.records), encoding="utf-8")
        # every line validated, and the ledger checked, before anything is written
        records = read_jsonl(export, catalogue=result.catalogue)
        s = scrubber()
        text = _jsonl([scrub_record(r, s) for r in result.records])
        unchanged: dict[str, int] = {}
        if ledger_path.suffix == ".jsonl":
            unchanged = _check_export(ledger_path, text, len(records))
        else:
            check_ledger(ledger_path, records)
        write_files(root, catalogue_files(result.catalogue))
        ledger_path.parent.mkdir(parents=True, exist_ok=True)
        if ledger_path.suffix == ".jsonl":
            if not unchanged:
                ledger_path.write_text(text, encoding="utf-8")
            counts = unchanged or {"added": len(result.records)}
        else:
            counts = import_jsonl(ledger_path, export, catalogue=result.catalogue)
    tasks, config = write_labelstudio(result.catalogue, kit)
    template = kit / "labels-template.csv"
    template.write_text(long_csv_template(result.catalogue), encoding="utf-8")
    return {
        "catalogue": root,
        "ledger": ledger_path,
        "ledger_counts": counts,
        "labeling": [tasks, config, template],
        "counts": result.counts(),
        "no_reply": [s.sample_id for s in result.samples.no_reply],
        "other_epochs": result.samples.other_epochs,
    }
