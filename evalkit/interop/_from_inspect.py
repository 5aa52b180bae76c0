"""``from_inspect``: Inspect AI logs → an imported catalogue and an imported judge's ledger.

:func:`from_inspect` is pure apart from reading the logs: it returns the catalogue (in
memory, with no labels yet), the ledger records of each scorer of the mapping and what
was set apart. :func:`write_import` writes them: the catalogue folder, the ledger
(validated line by line by :func:`evalkit.judge.import_jsonl` against the catalogue, as any
JSONL import) and the blind labeling kit beside the catalogue (Label Studio tasks and
config, a blank long CSV), since an Inspect log holds no human labels.
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
from evalkit.interop._scaffold import catalogue_files, imported_catalogue, write_files
from evalkit.judge import import_jsonl
from evalkit.judge._ledger import scrub_record
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
    samples = sample_cases(read_logs(logs), rules.defaults, template.resources, epoch=epoch)
    if not samples.cases:
        raise EvalkitError("the logs hold no sample with a reply to score: nothing to import")
    catalogue = imported_catalogue(template, rules, list(samples.cases.values()), Path(out))
    records = scorer_records(catalogue, samples.samples, rules)
    return InspectImport(catalogue, records, samples, rules)


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
    with tempfile.TemporaryDirectory() as tmp:
        export = Path(tmp) / "imported.jsonl"
        export.write_text(_jsonl(result.records), encoding="utf-8")
        read_jsonl(export, catalogue=result.catalogue)  # every line, before anything is written
        write_files(root, catalogue_files(result.catalogue))
        ledger_path.parent.mkdir(parents=True, exist_ok=True)
        if ledger_path.suffix == ".jsonl":
            s = scrubber()
            clean = [scrub_record(r, s) for r in result.records]
            ledger_path.write_text(_jsonl(clean), encoding="utf-8")
            counts = {"added": len(result.records)}
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
