"""Secrets out of Inspect samples, before any of them becomes a case, a record or a task.

An Inspect log is written by the tool that ran the evaluation, and it can hold what that
tool saw: an API key in the sample metadata, a model spec with ``?api_key=``, a credential
a user pasted into a turn. :func:`scrub_samples` passes every text evalkit reads from a
sample (the log path, task, evaluated model, eval id and date, turns, metadata keys and
values, score values, answers and explanations, the error message) through one
:class:`~evalkit.secrets.Scrubber`, so the catalogue, the ledger and the labeling kit
are all written from scrubbed text, and keys and hashes are computed from it too.

Each :class:`Redaction` says where secrets were removed and which kinds (a shape's name
or the environment variable whose value it was), never the secret itself. A redacted turn
stays in the case as ``[redacted]`` in place of the secret: the labeler and any judge read
the conversation without it.

Sample metadata is first made plain JSON (values JSON cannot hold become their ``str``,
keys strings), since it is written as JSON into the case's provenance.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evalkit.interop._inspect import InspectSample, InspectScore
from evalkit.secrets import Scrubber


@dataclass(frozen=True)
class Redaction:
    """Secrets removed from one field: where, and which kinds (never the secret)."""

    log: str
    """The log file, by name."""
    sample_id: str | None
    """The sample (scrubbed itself), or None for the eval's own fields (task, model)."""
    field: str
    kinds: tuple[str, ...]

    def __str__(self) -> str:
        where = self.log if self.sample_id is None else f"{self.log} [sample {self.sample_id}]"
        return f"{where} {self.field}: {', '.join(self.kinds)}"


class _Scrub:
    """One sample's scrubbing: the scrubbed texts, and the kinds found per field."""

    def __init__(self, s: Scrubber) -> None:
        self.s = s
        self.found: dict[str, list[str]] = {}

    def text(self, field: str, text: str) -> str:
        kinds = self.s.find(text)
        if kinds:
            seen = self.found.setdefault(field, [])
            seen += [k for k in kinds if k not in seen]
            return self.s.scrub(text)
        return text

    def json(self, field: str, value: Any) -> Any:
        """A plain-JSON ``value`` with every string in it, keys included, scrubbed."""
        if isinstance(value, str):
            return self.text(field, value)
        if isinstance(value, dict):
            return {self.text(field, k): self.json(field, v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.json(field, v) for v in value]
        return value


def _plain(value: Any) -> Any:
    """``value`` as plain JSON (see the module docstring)."""
    return json.loads(json.dumps(value, ensure_ascii=False, default=str))


def _optional(sc: _Scrub, field: str, text: str | None) -> str | None:
    return None if text is None else sc.text(field, text)


def scrub_sample(sample: InspectSample, s: Scrubber) -> tuple[InspectSample, list[Redaction]]:
    """``sample`` with every text scrubbed, and what was redacted where."""
    head = _Scrub(s)
    log = head.text("log path", sample.log)
    task = head.text("eval task", sample.task)
    model = head.text("eval model", sample.model)
    eval_id = head.text("eval id", sample.eval_id)
    created = head.text("eval created", sample.created)
    sc = _Scrub(s)
    sample_id = sc.text("id", sample.sample_id)
    turns = tuple(
        (role, sc.text(f"turn t{i} ({role})", text)) for i, (role, text) in enumerate(sample.turns)
    )
    metadata: dict[str, Any] = {}
    for key, value in _plain({str(k): v for k, v in sample.metadata.items()}).items():
        clean_key = sc.text("metadata keys", key)
        metadata[clean_key] = sc.json(f"metadata.{clean_key}", value)
    scores = {
        name: InspectScore(
            sc.json(f"scores.{name}.value", _plain(score.value)),
            _optional(sc, f"scores.{name}.answer", score.answer),
            _optional(sc, f"scores.{name}.explanation", score.explanation),
        )
        for name, score in sample.scores.items()
    }
    clean = dataclasses.replace(
        sample,
        log=log,
        task=task,
        model=model,
        eval_id=eval_id,
        created=created,
        sample_id=sample_id,
        turns=turns,
        metadata=metadata,
        scores=scores,
        error=_optional(sc, "error", sample.error),
    )
    name = Path(log).name
    out = [Redaction(name, None, f, tuple(k)) for f, k in head.found.items()]
    out += [Redaction(name, sample_id, f, tuple(k)) for f, k in sc.found.items()]
    return clean, out


def scrub_samples(
    samples: Sequence[InspectSample], s: Scrubber
) -> tuple[list[InspectSample], list[Redaction]]:
    """Every sample scrubbed (:func:`scrub_sample`), and every redaction once (the eval's
    own fields repeat on each of its samples and are listed once per log)."""
    clean: list[InspectSample] = []
    found: dict[Redaction, None] = {}
    for sample in samples:
        scrubbed, redactions = scrub_sample(sample, s)
        clean.append(scrubbed)
        found.update(dict.fromkeys(redactions))
    return clean, list(found)
