"""Inspect AI eval logs as evalkit cases: one sample, one case.

Logs (``.eval`` or ``.json``) are read with Inspect's own reader,
``inspect_ai.log.read_eval_log``, imported lazily: without the optional extra
``evalkit[inspect]`` reading a log raises :class:`InspectNotInstalled`.

How a sample becomes a case (:func:`sample_case`):

* turns: ``sample.messages`` with system and tool messages left out (the evaluated model's
  instructions and tool traffic are not the conversation a labeler rates), assistant
  messages without text (tool calls only) left out, and consecutive messages of one role
  joined by a blank line. The conversation must then start with the user and end with
  the assistant reply that is scored, in 2 to 12 turns; every user turn gets signal
  ``none``;
* ``id``: the sample id (it must be an identifier); one epoch is imported (``epoch``,
  default 1), since a catalogue holds one case per conversation;
* ``locale``, ``stratum``, ``template_family`` and ``emergency_category`` come from the
  sample metadata when it holds them (strings), else the mapping's defaults (``en-US``,
  ``benign``), the case id and ``none``; ``split`` is ``calibration``;
* ``provenance``: author ``Inspect AI log <file>``; method naming the task, the evaluated
  model, the eval id, the sample id and epoch, and the sample metadata as JSON; created,
  the date of the eval.

Every text of a sample is scrubbed of secrets (:mod:`evalkit.interop._redaction`) by
:func:`~evalkit.interop.from_inspect` before it becomes a case.

A sample with no reply to score (it errored before the model answered, or the model
returned nothing) cannot be labelled or judged: it is not a case, and
:class:`InspectSamples` lists it under ``no_reply``. Every other problem (an id that is no
identifier, a duplicate id, a conversation of the wrong shape, a locale without a
resources row, a final user turn repeated by another sample) is an
:class:`ImportProblems` naming the log, the sample and the field.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from evalkit.catalogue import CATALOGUE_MAX_TURNS, Case, Collector
from evalkit.catalogue._models import is_identifier
from evalkit.errors import Problem
from evalkit.interop._mapping import Defaults
from evalkit.interop._problems import ImportProblems, InspectNotInstalled
from evalkit.secrets import scrub


@dataclass(frozen=True)
class InspectScore:
    """One scorer's score of one sample, as the log holds it."""

    value: Any
    answer: str | None
    explanation: str | None


@dataclass(frozen=True)
class InspectSample:
    """One sample of one log, reduced to what evalkit reads."""

    log: str
    task: str
    model: str
    eval_id: str
    created: str
    sample_id: str
    epoch: int
    turns: tuple[tuple[str, str], ...]
    """(role, text) after the rules of the module docstring."""
    metadata: Mapping[str, Any]
    scores: Mapping[str, InspectScore]
    error: str | None
    """The sample's error message when it errored, else None."""


@dataclass(frozen=True)
class InspectSamples:
    """The samples read from the logs: those that become cases, and those that cannot."""

    samples: tuple[InspectSample, ...]
    no_reply: tuple[InspectSample, ...] = ()
    other_epochs: int = 0
    """Samples of epochs other than the one imported (not read further)."""
    cases: dict[str, Case] = field(default_factory=dict)
    """Case id → case, for each of ``samples``."""


def _read_eval_log(path: Path) -> Any:
    try:
        from inspect_ai.log import read_eval_log
    except ModuleNotFoundError as exc:
        if exc.name and exc.name.split(".")[0] == "inspect_ai":
            raise InspectNotInstalled() from None
        raise
    if not path.is_file():
        problem = Problem(str(path), None, None, "no such file")
        raise ImportProblems(f"Inspect log {path}", [problem])
    try:
        return read_eval_log(str(path))
    except Exception as exc:  # Inspect's reader raises many types on a damaged file
        message = f"Inspect cannot read this log ({type(exc).__name__}: {scrub(str(exc))})"
        problem = Problem(str(path), None, None, message)
        raise ImportProblems(f"Inspect log {path}", [problem]) from None


def _turns(messages: Iterable[Any]) -> tuple[tuple[str, str], ...]:
    out: list[tuple[str, str]] = []
    for message in messages:
        role = message.role
        if role not in ("user", "assistant"):
            continue
        text = (message.text or "").strip()
        if not text:
            continue
        if out and out[-1][0] == role:
            out[-1] = (role, f"{out[-1][1]}\n\n{text}")
        else:
            out.append((role, text))
    return tuple(out)


def _sample(log: Any, path: Path, sample: Any) -> InspectSample:
    scores = {
        name: InspectScore(score.value, score.answer, score.explanation)
        for name, score in (sample.scores or {}).items()
        if score is not None
    }
    return InspectSample(
        log=str(path),
        task=str(log.eval.task),
        model=str(log.eval.model),
        eval_id=str(log.eval.eval_id),
        created=str(log.eval.created),
        sample_id=str(sample.id),
        epoch=int(sample.epoch),
        turns=_turns(sample.messages or []),
        metadata=dict(sample.metadata or {}),
        scores=scores,
        error=sample.error.message if sample.error is not None else None,
    )


def read_logs(paths: Sequence[str | Path]) -> list[InspectSample]:
    """Every sample of the logs, in log order then sample order.

    Raises :class:`InspectNotInstalled` without inspect_ai, :class:`ImportProblems` for a
    log that cannot be read or holds no samples.
    """
    out: list[InspectSample] = []
    for raw in paths:
        path = Path(raw)
        log = _read_eval_log(path)
        if not log.samples:
            message = f"the log holds no samples (status {log.status})"
            problem = Problem(str(path), None, "samples", message)
            raise ImportProblems(f"Inspect log {path}", [problem])
        out += [_sample(log, path, s) for s in log.samples]
    return out


def _created(sample: InspectSample) -> date:
    try:
        return datetime.fromisoformat(sample.created).date()
    except ValueError:
        return date.today()


def _meta(sample: InspectSample, key: str, default: str, col: Collector, where: str) -> str:
    value = sample.metadata.get(key, default)
    if not isinstance(value, str):
        col.add(Path(sample.log), where, f"metadata.{key}", f"{value!r} is not a string")
        return default
    return value


def sample_case(sample: InspectSample, defaults: Defaults, col: Collector) -> Case | None:
    """The case of one sample (see the module docstring), or None after adding problems."""
    where = f"sample {sample.sample_id}"
    path = Path(sample.log)
    if not is_identifier(sample.sample_id):
        col.add(path, where, "id", "a case id is an identifier: letters, digits, '_', '.', '-'")
        return None
    if len(sample.turns) > CATALOGUE_MAX_TURNS:
        message = f"{len(sample.turns)} turns; a catalogue case holds 2 to {CATALOGUE_MAX_TURNS}"
        col.add(path, where, "messages", message)
        return None
    metadata = json.dumps(dict(sample.metadata), sort_keys=True, ensure_ascii=False, default=str)
    record = {
        "id": sample.sample_id,
        "locale": _meta(sample, "locale", defaults.locale, col, where),
        "stratum": _meta(sample, "stratum", defaults.stratum, col, where),
        "split": "calibration",
        "template_family": _meta(sample, "template_family", sample.sample_id, col, where),
        "emergency_category": _meta(sample, "emergency_category", "none", col, where),
        "onset_turn": None,
        "provenance": {
            "author": f"Inspect AI log {Path(sample.log).name}",
            "method": (
                f"imported from Inspect AI log {sample.log}: task {sample.task}, evaluated "
                f"model {sample.model}, eval id {sample.eval_id}, sample {sample.sample_id} "
                f"epoch {sample.epoch}; sample metadata {metadata}"
            ),
            "created": _created(sample),
        },
        "turns": tuple(
            {"role": role, "text": text, **({"signal": "none"} if role == "user" else {})}
            for role, text in sample.turns
        ),
    }
    try:
        return Case.model_validate(record)
    except ValidationError as err:
        col.add_validation(path, where, err)
        return None


def sample_cases(
    samples: Sequence[InspectSample],
    defaults: Defaults,
    locales: Iterable[str],
    *,
    epoch: int = 1,
) -> InspectSamples:
    """Cases for the ``samples`` of epoch ``epoch``, checked as the catalogue loader would
    check them (samples of other epochs are counted in ``other_epochs``).

    Raises :class:`ImportProblems` listing every problem; samples without a reply are
    set apart (``no_reply``), never an error and never a case.
    """
    col = Collector(Path("."))  # problems name each log as it was given
    known = set(locales)
    kept: list[InspectSample] = []
    no_reply: list[InspectSample] = []
    cases: dict[str, Case] = {}
    finals: dict[str, str] = {}
    other_epochs = 0
    for sample in samples:
        if sample.epoch != epoch:
            other_epochs += 1
            continue
        if not sample.turns or sample.turns[-1][0] != "assistant":
            no_reply.append(sample)
            continue
        case = sample_case(sample, defaults, col)
        if case is None:
            continue
        where = f"sample {sample.sample_id}"
        if case.id in cases:
            col.add(Path(sample.log), where, "id", "a second sample with this id")
            continue
        if case.locale not in known:
            message = (
                f"{case.locale!r} has no resources row in the template catalogue "
                "(add one to its resources.yaml, or set the locale in the sample metadata)"
            )
            col.add(Path(sample.log), where, "metadata.locale", message)
        final = " ".join(case.turns[case.latest_user_turn].text.lower().split())
        if final in finals:
            message = f"the final user turn repeats that of sample {finals[final]}"
            col.add(Path(sample.log), where, "messages", message)
        finals.setdefault(final, case.id)
        cases[case.id] = case
        kept.append(sample)
    if col.problems:
        raise ImportProblems("the Inspect logs", col.problems)
    return InspectSamples(tuple(kept), tuple(no_reply), other_epochs, cases)
