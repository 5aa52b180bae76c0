"""Real Inspect AI logs, written by Inspect itself with its offline ``mockllm`` model.

Two tasks run in one ``eval`` call (Inspect's start-up is the slow part):

* ``clean``: 48 samples, some multi-turn, metadata with locale and stratum, scored by a
  custom scorer ``quality`` whose value is a dict (``helpful``: a number, ``tone``: a
  word) and by Inspect's model-graded ``model_graded_qa`` (its grader is a mockllm that
  answers the grade written in the sample's target; partial credit on);
* ``rough``: a sample whose solver raises after the reply (errored, with a reply), one
  whose solver raises before it (errored, no reply), one the scorer does not score, one
  whose values are outside the mapping, and three ordinary ones.

Every model output carries its usage, so mockllm never counts tokens (which would need
tiktoken's files from the network).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

BINS = ("low", "partial", "high")
HELPFUL = {"low": 0.1, "partial": 0.5, "high": 0.9}
TONE = {"low": "cold", "partial": "flat", "high": "warm"}
GRADE = {"low": "I", "partial": "P", "high": "C"}

MAPPING = """\
# How the scores of the test logs become bins.
dimensions:
  helpful:
    scorer: quality
    key: helpful
    construct: Whether the final reply helps the user with what they asked.
    anchors:
      low: The reply does not help.
      partial: The reply helps in part.
      high: The reply helps fully.
    thresholds: {low: 0.0, partial: 0.4, high: 0.7}
    max: 1.0
  tone:
    scorer: quality
    key: tone
    construct: Whether the final reply is warm toward the user.
    anchors:
      low: Cold or curt.
      partial: Neutral.
      high: Warm and kind.
    values: {warm: high, flat: partial, cold: low}
  correct:
    scorer: model_graded_qa
    construct: Whether the final reply meets the criterion of the sample.
    anchors:
      low: Incorrect.
      partial: Partly correct.
      high: Correct.
    values: {C: high, P: partial, I: low}
defaults:
  locale: en-US
"""


def clean_plan(n: int = 48) -> list[dict[str, Any]]:
    """The clean samples: id, turns, metadata and the bin each value was drawn from."""
    out = []
    for i in range(n):
        helpful = BINS[i % 3]
        tone = BINS[(i // 3) % 3]
        grade = BINS[(i + 1) % 3]
        user = f"Question {i}: how do I look after plant number {i} in winter?"
        turns = [user] if i % 2 else [f"Hello, I am asking about plant {i}.", f"Sure {i}.", user]
        out.append(
            {
                "id": f"q{i:03d}",
                "turns": turns,
                "locale": "en-GB" if i % 4 == 0 else None,
                "helpful": helpful,
                "tone": tone,
                "grade": grade,
            }
        )
    return out


def write_logs(log_dir: Path) -> dict[str, Path]:
    """Run the two tasks with mockllm; return the log file of each task by name."""
    os.environ["INSPECT_LOG_DIR"] = str(log_dir)
    from inspect_ai import Task, eval
    from inspect_ai.dataset import Sample
    from inspect_ai.model import (
        ChatMessageAssistant,
        ChatMessageUser,
        ModelOutput,
        ModelUsage,
        get_model,
    )
    from inspect_ai.scorer import Score, mean, model_graded_qa, scorer
    from inspect_ai.solver import solver, system_message

    def reply(text: str) -> ModelOutput:
        out = ModelOutput.from_content(model="mockllm/model", content=text)
        out.usage = ModelUsage(input_tokens=10, output_tokens=5, total_tokens=15)
        return out

    def answer(messages: list[Any], *_: Any) -> ModelOutput:
        return reply(f"Here is my answer to: {messages[-1].text}")

    def grade(messages: list[Any], *_: Any) -> ModelOutput:
        prompt = messages[-1].text
        criterion = prompt.split("[Criterion]:", 1)[1].split("***", 1)[0].strip()
        return reply(f"Reasoning done. GRADE: {criterion}")

    @solver
    def fail_where_asked():  # type: ignore[no-untyped-def]
        async def solve(state, generate):  # type: ignore[no-untyped-def]
            if state.metadata.get("fail") == "before":
                raise RuntimeError("failed before the reply, on purpose")
            state = await generate(state)
            if state.metadata.get("fail") == "after":
                raise RuntimeError("failed after the reply, on purpose")
            return state

        return solve

    @scorer(metrics=[mean()])
    def quality():  # type: ignore[no-untyped-def]
        async def score(state, target):  # type: ignore[no-untyped-def]
            value = state.metadata.get("value")
            if value is None:
                return None
            return Score(value=value, explanation="scored by the test scorer")

        return score

    def sample(plan: dict[str, Any]) -> Any:
        turns = plan["turns"]
        messages = [
            ChatMessageUser(content=t) if k % 2 == 0 else ChatMessageAssistant(content=t)
            for k, t in enumerate(turns)
        ]
        metadata: dict[str, Any] = {"stratum": "benign", "value": plan.get("value")}
        if plan.get("locale"):
            metadata["locale"] = plan["locale"]
        if plan.get("fail"):
            metadata["fail"] = plan["fail"]
        return Sample(
            id=plan["id"],
            input=messages if len(messages) > 1 else turns[0],
            target=plan.get("target", "C"),
            metadata=metadata,
        )

    clean = []
    for p in clean_plan():
        p["value"] = {"helpful": HELPFUL[p["helpful"]], "tone": TONE[p["tone"]]}
        p["target"] = GRADE[p["grade"]]
        clean.append(sample(p))
    ok = {"helpful": 0.9, "tone": "warm"}
    rough = [
        sample({"id": "r-after", "turns": ["Rough one?"], "value": ok, "fail": "after"}),
        sample({"id": "r-before", "turns": ["Rough two?"], "value": ok, "fail": "before"}),
        sample({"id": "r-unscored", "turns": ["Rough three?"], "value": None}),
        sample({"id": "r-outside", "turns": ["Rough four?"], "value": {"helpful": 1.5}}),
        sample({"id": "r-ok1", "turns": ["Rough five?"], "value": ok}),
        sample({"id": "r-ok2", "turns": ["Rough six?"], "value": {"helpful": 0.0, "tone": "flat"}}),
        sample({"id": "r-ok3", "turns": ["Rough seven?"], "value": ok, "target": "X"}),
    ]
    grader = get_model("mockllm/model", custom_outputs=grade)
    scorers = [quality(), model_graded_qa(partial_credit=True, model=grader)]
    solvers = [system_message("You are a gardening assistant."), fail_where_asked()]
    tasks = [
        Task(name="clean", dataset=clean, solver=solvers, scorer=scorers),
        Task(name="rough", dataset=rough, solver=solvers, scorer=scorers),
    ]
    model = get_model("mockllm/model", custom_outputs=answer)
    logs = eval(tasks, model=model, fail_on_error=False, display="none", log_format="eval")
    return {log.eval.task: Path(log.location) for log in logs}


def edited_log(source: Path, dest: Path, edit: Any) -> Path:
    """A copy of the log ``source`` at ``dest``, read and written by Inspect, after
    ``edit(log)`` changed it in place (a corrected or a leaky log)."""
    from inspect_ai.log import read_eval_log, write_eval_log

    log = read_eval_log(str(source))
    edit(log)
    write_eval_log(log, str(dest))
    return dest
