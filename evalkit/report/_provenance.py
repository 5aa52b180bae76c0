"""Who judged: the judges recorded in a ledger, and the note a report shows about its judge.

A run with ``--judge replay`` sends nothing: every answer is read from the ledger, where
the judge that produced it is recorded row by row (judge spec, backend, model, the model
the server said answered, call parameters, constants and framing hashes). Reports name
those, never just "replay". :func:`judges_in_ledger` is the pure summary of a ledger
frame; :func:`ledger_frame` is the one function here that reads a file.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pandas as pd

from evalkit.catalogue import Catalogue
from evalkit.judge import LEDGER_COLUMNS, Ledger
from evalkit.judge.replay import replay_filter
from evalkit.report._frames import adr_href
from evalkit.report._html import Html, callout, code, esc, is_missing, link, paragraph, table

#: What identifies a judge in a ledger: one row of :func:`judges_in_ledger` per value.
JUDGE_KEYS = ("judge", "backend", "model", "response_model")

#: Columns of :func:`judges_in_ledger`, in order.
JUDGE_COLUMNS = (
    *JUDGE_KEYS,
    "temperature",
    "max_tokens",
    "constants_hashes",
    "framing_hashes",
    "rows",
    "requests",
    "first_at",
    "last_at",
)


def judge_kind(judge: str) -> str:
    """``baseline``, ``replay``, ``anthropic``, ``openai`` or ``other``."""
    head = judge.split(":", 1)[0]
    return head if head in ("baseline", "replay", "anthropic", "openai", "recorded") else "other"


def ledger_frame(path: str | Path) -> pd.DataFrame:
    """The frame of :func:`evalkit.judge.load_ledger` for the SQLite ledger at ``path``,
    plus a ``params`` column: each request's call parameters (a dict: ``max_tokens``,
    ``temperature``, ``mode``, ...).

    A ledger that does not exist yet (a run that judged nothing, such as a refused held-out
    study on a fresh ledger) gives an empty frame with these columns. A file that is not a
    ledger raises :class:`~evalkit.errors.LedgerError`.
    """
    p = Path(path)
    if not p.is_file():
        return pd.DataFrame(columns=[*LEDGER_COLUMNS, "params"])
    with Ledger(p, create=False) as led:
        frame = led.frame()
        params = {r["request_key"]: r["params"] for r in led.records(with_raw=False)}
    return frame.assign(params=frame["request_key"].map(params))


def _distinct(values: Iterable[Any]) -> tuple[Any, ...]:
    found = {None if is_missing(v) else v for v in values}
    return tuple(sorted(found, key=lambda v: (v is not None, str(v))))


def judges_in_ledger(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per distinct judge of a ledger frame: (judge, backend, model, response_model).

    ``frame`` is the frame of :func:`ledger_frame` or :func:`evalkit.judge.load_ledger`
    (one row per request and requested dimension). Columns :data:`JUDGE_COLUMNS`:

    * ``judge``, ``backend``, ``model``, ``response_model``: as recorded;
      ``response_model`` is None when the backend reported none (the baseline, a failed
      call). A judge whose server answered with two model versions gives two rows.
    * ``temperature``, ``max_tokens``: the distinct values in the rows' ``params``, as
      tuples; None inside ``temperature`` means "not sent" (the server default). Both are
      empty tuples when the frame has no ``params`` column (``load_ledger``'s frame).
    * ``constants_hashes``, ``framing_hashes``: the distinct hashes the rows were produced
      under, as tuples.
    * ``rows``: frame rows (request x dimension); ``requests``: distinct request keys.
    * ``first_at``, ``last_at``: the earliest and latest ``created_at`` (ISO 8601 UTC).

    Sorted by ``first_at``. An empty frame gives an empty frame with these columns.
    Raises ``ValueError`` naming the columns ``frame`` lacks.
    """
    needed = ("judge", "backend", "model", "request_key", "created_at")
    missing = [c for c in needed if c not in frame.columns]
    if missing:
        raise ValueError(f"judges_in_ledger: the frame lacks column(s) {missing}")
    if frame.empty:
        return pd.DataFrame(columns=list(JUDGE_COLUMNS))
    data = frame.copy()
    for col in ("response_model", "constants_hash", "framing_hash", "params"):
        if col not in data.columns:
            data[col] = None
    keys = data[list(JUDGE_KEYS)].astype(object).where(data[list(JUDGE_KEYS)].notna(), "")
    rows = []
    for key, grp in data.groupby([keys[k] for k in JUDGE_KEYS], sort=False):
        params = [p for p in grp["params"] if isinstance(p, dict)]
        rows.append(
            {
                **{k: (v if v != "" else None) for k, v in zip(JUDGE_KEYS, key, strict=True)},
                "temperature": _distinct(p.get("temperature") for p in params),
                "max_tokens": _distinct(p.get("max_tokens") for p in params),
                "constants_hashes": _distinct(grp["constants_hash"]),
                "framing_hashes": _distinct(grp["framing_hash"]),
                "rows": len(grp),
                "requests": int(grp["request_key"].nunique()),
                "first_at": str(grp["created_at"].min()),
                "last_at": str(grp["created_at"].max()),
            }
        )
    out = pd.DataFrame(rows, columns=list(JUDGE_COLUMNS))
    named = out[list(JUDGE_KEYS)].astype(object)
    out[list(JUDGE_KEYS)] = named.where(named.notna(), None)  # None, not NaN, when unreported
    return out.sort_values("first_at", kind="stable", ignore_index=True)


def answering_judges(judge: str, judges: pd.DataFrame) -> pd.DataFrame:
    """The rows of ``judges`` (:func:`judges_in_ledger`) whose answers a run of ``judge``
    reads: for ``replay``, every judge of the ledger; for ``replay:JUDGE``, that judge;
    for any other spec, the rows recorded under that spec."""
    if judges.empty:
        return judges
    wanted = replay_filter(judge) if judge_kind(judge) == "replay" else judge
    if wanted is None:
        return judges
    return judges[judges["judge"] == wanted].reset_index(drop=True)


def _values(values: tuple[Any, ...], none: str) -> str:
    return ", ".join(none if v is None else str(v) for v in values) or "not recorded"


def _hashes(values: tuple[Any, ...], in_force: str | None) -> Html:
    parts: list[str] = []
    for v in values:
        if v is None:
            parts.append(esc("none"))
            continue
        mark = " (in force)" if in_force is not None and v == in_force else ""
        parts.append(f'<code title="{esc(v)}">{esc(str(v)[:12])}…</code>{esc(mark)}')
    return Html(", ".join(parts) or esc("—"))


#: Backends whose answers are a pure function of the case: when they ran says nothing,
#: and a time on their pages would change every tracked report a fresh clone renders
#: (ADR-0020).
TIMELESS_BACKENDS = frozenset({"baseline", "recorded"})


def _when(stamp: Any, backend: Any = None) -> str:
    if backend == "recorded":  # the ledger's time is when the file was imported
        return "from a recording"
    if backend in TIMELESS_BACKENDS:
        return "deterministic"
    text = "" if is_missing(stamp) else str(stamp)
    return text[:16].replace("T", " ") if text else "—"


def judges_table(
    judges: pd.DataFrame, catalogue: Catalogue | None = None, *, counts: bool = True
) -> Html:
    """Every judge of the ledger with its model, parameters, hashes and row counts.

    With ``catalogue``, a hash equal to the one in force is marked "(in force)".
    ``counts=False`` leaves out the rows and requests: a study page is rendered while
    later studies of the same run still add to the ledger, so its counts would depend on
    the order of the studies and on whether the ledger was fresh (the index, written
    last, shows them). A
    deterministic backend (the baseline) shows no times: when it ran carries no
    information, and its pages then render the same from any fresh ledger.
    """
    constants = catalogue.constants_hash if catalogue is not None else None
    framing = catalogue.framing_hash if catalogue is not None else None
    shown = pd.DataFrame(
        {
            "judge": [code(j) for j in judges["judge"]],
            "backend": list(judges["backend"]),
            "model": list(judges["model"]),
            "response_model": [
                "not reported" if is_missing(m) else m for m in judges["response_model"]
            ],
            "temperature": [_values(t, "not set") for t in judges["temperature"]],
            "max_tokens": [_values(t, "—") for t in judges["max_tokens"]],
            "constants": [_hashes(h, constants) for h in judges["constants_hashes"]],
            "framing": [_hashes(h, framing) for h in judges["framing_hashes"]],
            "rows": list(judges["rows"]),
            "requests": list(judges["requests"]),
            "first": [
                _when(t, b) for t, b in zip(judges["first_at"], judges["backend"], strict=True)
            ],
            "last": [
                _when(t, b) for t, b in zip(judges["last_at"], judges["backend"], strict=True)
            ],
        },
        dtype=object,
    )
    headers = {
        "judge": "Judge",
        "backend": "Backend",
        "model": "Model",
        "response_model": "Model that answered",
        "temperature": "Temperature",
        "max_tokens": "Max tokens",
        "constants": "Constants hash",
        "framing": "Framing hash",
        "rows": "Rows",
        "requests": "Requests",
        "first": "First (UTC)",
        "last": "Last (UTC)",
    }
    if not counts:
        shown = shown.drop(columns=["rows", "requests"])
        headers = {k: v for k, v in headers.items() if k not in ("rows", "requests")}
    return table(
        shown,
        headers,
        caption="Judges recorded in the ledger",
        note=(
            "Rows: one per request and dimension. "
            if counts
            else "Rows and requests in the ledger: on the index. "
        )
        + "Model that answered: the model name the server returned with the answer.",
        empty="The ledger holds no rows yet.",
    )


def judge_label(judge: str, judges: pd.DataFrame) -> str:
    """The judge of a run as a reader needs it: the spec, or for a replay the recorded
    spec(s) whose answers it reads (``replay`` alone only when the ledger names none)."""
    if judge_kind(judge) != "replay":
        return judge
    specs = list(dict.fromkeys(answering_judges(judge, judges)["judge"])) if len(judges) else []
    return ", ".join(specs) if specs else judge


def _model_text(judges: pd.DataFrame) -> str:
    parts = []
    for r in judges.to_dict(orient="records"):
        answered = "" if is_missing(r["response_model"]) else f", answered as {r['response_model']}"
        temperature = _values(r["temperature"], "not set")
        parts.append(
            f"{r['judge']} (backend {r['backend']}, model {r['model']}{answered}; temperature "
            f"{temperature}, max tokens {_values(r['max_tokens'], '—')}; {r['rows']} rows)"
        )
    return "; ".join(parts)


def judge_note(judge: str, adr_base: str = "adr/", judges: pd.DataFrame | None = None) -> Html:
    """What the judge of this run is, and how far its verdicts reach.

    ``judges`` (:func:`judges_in_ledger` of the run's ledger) lets a replay name the
    model, backend and parameters that produced the answers it reads. A replay of answers
    the baseline produced carries the baseline's warning.
    """
    judges = judges if judges is not None else pd.DataFrame(columns=list(JUDGE_COLUMNS))
    kind = judge_kind(judge)
    adr = link(adr_href("adr-0007", adr_base), "ADR-0007")
    source = answering_judges(judge, judges) if kind == "replay" else judges.iloc[0:0]
    recorded = {judge_kind(str(j)) for j in source["judge"]}
    replayed = " (answers replayed from the ledger)" if kind == "replay" else ""
    if kind == "baseline" or (kind == "replay" and recorded == {"baseline"}):
        return callout(
            f"Judge: baseline{replayed} (an offline floor, not a production judge)",
            paragraph(
                "These results come from the deterministic baseline judge, which scores with "
                "no model and no network so that the study runs anywhere for free (",
                adr,
                "). It is a floor for a real judge to beat: its verdicts describe the "
                "baseline, not a production judge, and must not gate a launch.",
            ),
            kind="warning",
        )
    if kind == "recorded":
        return callout(
            f"Judge: {judge} (recorded answers, not a judge that was called)",
            paragraph(
                "Every answer was read from a recorded batch output file (recordings/), made "
                "outside evalkit and imported through the same strict parser as a live "
                "answer; its README says what answered and how. Nothing was sent to a model. "
                "A recorded judge is never gate evidence (",
                link(adr_href("adr-0026", adr_base), "ADR-0026"),
                ").",
            ),
            kind="warning",
        )
    if kind == "replay":
        if source.empty:
            return callout(
                f"Judge: {judge} (answers replayed from a ledger that names no judge)",
                paragraph("The ledger holds no answer; nothing was sent to a model (", adr, ")."),
                kind="warning",
            )
        return callout(
            f"Judge: {judge_label(judge, judges)}{replayed}",
            paragraph(
                "Every answer was read from the ledger, where it was recorded earlier by ",
                _model_text(source),
                ". Nothing was sent to a model for this rendering (",
                adr,
                ").",
            ),
        )
    return callout(
        f"Judge: {judge}",
        paragraph("Answers from a live model, recorded in the ledger named below."),
    )
