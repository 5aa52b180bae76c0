"""Run conversations: user side ↔ target, bounded concurrency, resumable, recorded per turn.

A conversation alternates a user turn (from the user side) and an agent turn (from
the target), starting at turn 0, until the user side has nothing more to say or
``max_turns`` turns are reached. A failed call (a :class:`TargetCallError` after the
retry policy) is recorded as the ``error`` of its turn and ends the conversation,
which stays unfinished and runs again, from its start, on the next run; finished
conversations are never run again (their key: case content × target fingerprint ×
user-side fingerprint). See :mod:`evalkit.runner._store` for the record format.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import sys
import time
import warnings
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pandas as pd

from evalkit.catalogue import MAX_TURNS as CASE_MAX_TURNS
from evalkit.catalogue import Case
from evalkit.runner._store import open_store
from evalkit.runner._targets import TargetFunction, make_target
from evalkit.runner._types import (
    Message,
    RunnerError,
    Target,
    TargetCallError,
    TurnContext,
    fingerprint_of,
)
from evalkit.runner._users import ScriptedUser, UserSide, UserTurn

#: Most turns a conversation may have and still be a valid catalogue ``Case``.
MAX_TURNS = CASE_MAX_TURNS
#: Text put in a rebuilt ``Case`` for an agent turn whose reply had no text.
EMPTY_REPLY = "[no text in the reply]"


def conversation_key(case: Case, target: Target, user: UserSide) -> str:
    """The resume key: the case's content, the target's and the user side's fingerprints."""
    return fingerprint_of(
        {
            "case": case.model_dump(mode="json"),
            "target": target.fingerprint,
            "user": user.fingerprint,
        }
    )


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="microseconds")


async def _converse(
    case: Case, target: Target, user: UserSide, key: str, attempt: int, max_turns: int
) -> list[dict[str, Any]]:
    records: list[dict[str, Any]] = []
    history: list[Message] = []
    base = {
        "conversation": key,
        "attempt": attempt,
        "case_id": case.id,
        "target": target.spec,
        "user": user.spec,
    }

    def record(turn: int, role: str, text: str, **extra: Any) -> None:
        rec = dict(base, turn=turn, role=role, text=text, signal=None, latency_s=None)
        rec.update(input_tokens=None, output_tokens=None, error=None)
        rec.update(extra, created_at=_now())
        records.append(rec)

    turn = 0
    while turn + 1 < max_turns:
        try:
            ut: UserTurn | None = await user.next_turn(case, list(history), turn)
        except TargetCallError as exc:
            record(turn, "user", "", error=f"user side: {exc.message}")
            break
        if ut is None:
            break
        record(
            turn,
            "user",
            ut.text,
            signal=ut.signal,
            latency_s=ut.latency_s,
            input_tokens=ut.input_tokens,
            output_tokens=ut.output_tokens,
        )
        history.append({"role": "user", "content": ut.text})
        t0 = time.monotonic()
        try:
            rep = await target.reply(list(history), TurnContext(case, turn + 1))
        except TargetCallError as exc:
            record(turn + 1, "assistant", "", latency_s=time.monotonic() - t0, error=exc.message)
            break
        record(
            turn + 1,
            "assistant",
            rep.text,
            latency_s=time.monotonic() - t0,
            input_tokens=rep.input_tokens,
            output_tokens=rep.output_tokens,
        )
        history.append({"role": "assistant", "content": rep.text})
        turn += 2
    return records


async def arun_conversations(
    cases: Sequence[Case],
    target: str | Target | TargetFunction,
    *,
    store: str | Path,
    user: UserSide | None = None,
    concurrency: int = 8,
    max_turns: int = MAX_TURNS,
    system: str | None = None,
    progress: bool = False,
) -> pd.DataFrame:
    """Async form of :func:`run_conversations` (same arguments)."""
    if max_turns < 2:
        raise RunnerError(f"max_turns must be at least 2, got {max_turns}")
    tgt = make_target(target, system=system)
    side: UserSide = user or ScriptedUser()
    st = open_store(store)
    finished = st.finished()
    attempts = st.attempts()
    keys = [conversation_key(c, tgt, side) for c in cases]
    todo = [(c, k) for c, k in zip(cases, keys, strict=True) if k not in finished]
    sem = asyncio.Semaphore(max(1, concurrency))
    done = failed = 0
    last_shown = 0.0

    def show(final: bool = False) -> None:
        nonlocal last_shown
        if progress and (final or time.monotonic() - last_shown >= 5.0):
            last_shown = time.monotonic()
            print(
                f"runner: {done}/{len(todo)} conversation(s) run · "
                f"{len(cases) - len(todo)} from {st.path.name} · {failed} failed",
                file=sys.stderr,
            )

    async def one(case: Case, key: str) -> None:
        nonlocal done, failed
        async with sem:
            recs = await _converse(case, tgt, side, key, attempts.get(key, 0) + 1, max_turns)
            st.write(recs)
            done += 1
            failed += any(r["error"] for r in recs)
            show()

    try:
        await asyncio.gather(*(one(c, k) for c, k in todo))
    finally:
        await tgt.aclose()
        close_user = getattr(side, "aclose", None)
        if close_user is not None:
            await close_user()
    show(final=True)
    frame = st.frame()
    wanted = dict.fromkeys(keys)
    out = frame[frame["conversation"].isin(list(wanted))]
    order = {k: i for i, k in enumerate(wanted)}
    out = out.assign(_o=out["conversation"].map(order)).sort_values(["_o", "turn"], kind="stable")
    out = out.drop(columns="_o").reset_index(drop=True)
    out.attrs["run"] = {"ran": len(todo), "reused": len(cases) - len(todo), "failed": failed}
    return out


def run_conversations(
    cases: Sequence[Case],
    target: str | Target | TargetFunction,
    *,
    store: str | Path,
    user: UserSide | None = None,
    concurrency: int = 8,
    max_turns: int = MAX_TURNS,
    system: str | None = None,
    progress: bool = False,
) -> pd.DataFrame:
    """Run one conversation per case against ``target``; return their transcript records.

    ``target``: ``replay``, ``anthropic:MODEL``, ``openai:URL:MODEL``, a target object
    or a Python callable (sync or async; see :class:`CallableTarget`). ``store``: the
    transcript file (``.jsonl`` or ``.sqlite``), created if needed; conversations it
    already holds finished are reused, not run again. ``user``: the user side
    (default :class:`ScriptedUser`). ``concurrency`` bounds the conversations in flight
    (turns within one are sequential). ``max_turns`` caps the length (40, the largest
    valid ``Case``, by default). ``system``: the system prompt of a model target.

    Returns the records (:data:`TRANSCRIPT_COLUMNS`) of the latest attempt of each
    case's conversation, in case order then turn order; ``frame.attrs["run"]`` counts
    conversations ``ran``, ``reused`` and ``failed``. Raises :class:`RunnerError` before
    any call for a bad spec or a missing API key. Works inside a running event loop
    (Jupyter) by running in a worker thread.
    """
    kwargs: dict[str, Any] = {
        "store": store,
        "user": user,
        "concurrency": concurrency,
        "max_turns": max_turns,
        "system": system,
        "progress": progress,
    }
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(arun_conversations(cases, target, **kwargs))
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(
            lambda: asyncio.run(arun_conversations(cases, target, **kwargs))
        ).result()


def transcript_cases(
    cases: Sequence[Case], transcripts: pd.DataFrame, *, target: str | None = None
) -> list[Case]:
    """Rebuild :class:`Case` records from transcripts, so the judge can score them.

    For each case with a finished conversation in ``transcripts`` (restricted to the
    ``target`` spec when given; with several conversations for one case the last in
    the frame wins), the case's metadata is kept and its turns replaced by the
    transcript's; ``onset_turn`` is recomputed from the recorded signals (the first
    masked/explicit user turn; unchanged for scripted and simulated users, which keep
    the scripted prefix). An agent reply with no text becomes :data:`EMPTY_REPLY`.
    Cases without a finished conversation are left out with a warning. The replay
    target with the scripted user gives back cases equal to the catalogue's.
    """
    t = transcripts if target is None else transcripts[transcripts["target"] == target]
    by_case: dict[str, pd.DataFrame] = {}
    for _, conv in t.groupby("conversation", sort=False):
        if conv["error"].notna().any() or conv.empty:
            continue
        by_case[str(conv["case_id"].iloc[0])] = conv.sort_values("turn")
    out: list[Case] = []
    missing: list[str] = []
    for case in cases:
        found = by_case.get(case.id)
        if found is None:
            missing.append(case.id)
            continue
        turns = []
        for r in found.itertuples(index=False):
            text = str(r.text) if isinstance(r.text, str) and r.text.strip() else EMPTY_REPLY
            turn: dict[str, Any] = {"role": r.role, "text": text}
            if r.role == "user":
                turn["signal"] = r.signal
            turns.append(turn)
        present = [x["role"] == "user" and x["signal"] in ("masked", "explicit") for x in turns]
        onset = present.index(True) if any(present) else None
        doc = case.model_dump()
        doc.update(turns=turns, onset_turn=onset)
        out.append(Case.model_validate(doc))
    if missing:
        warnings.warn(
            f"{len(missing)} case(s) without a finished conversation left out: "
            f"{', '.join(missing[:5])}{' …' if len(missing) > 5 else ''}",
            stacklevel=2,
        )
    return out
