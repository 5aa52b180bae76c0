"""Conversation runners: play a case's user side against a target, turn by turn.

A *target* maps the messages so far to the agent's reply: ``replay`` (the catalogue's
recorded turns), ``anthropic:MODEL``, ``openai:URL:MODEL`` or a Python callable (sync
or async). The *user side* is the case's scripted turns (:class:`ScriptedUser`) or an
LLM playing a persona after a scripted prefix (:class:`SimulatedUser`).
:func:`run_conversations` runs them with bounded concurrency into a resumable JSONL or
SQLite transcript store; :func:`transcript_cases` turns transcripts back into cases
for the judge. :func:`onset_variants` places one disclosure at several positions.
"""

from evalkit.runner._anthropic import AnthropicTarget
from evalkit.runner._openai import OpenAITarget
from evalkit.runner._run import (
    MAX_TURNS,
    arun_conversations,
    conversation_key,
    run_conversations,
    transcript_cases,
)
from evalkit.runner._store import default_transcripts_path, open_store, read_transcripts
from evalkit.runner._targets import CallableTarget, ReplayTarget, make_target
from evalkit.runner._types import (
    TRANSCRIPT_COLUMNS,
    Message,
    RunnerError,
    Target,
    TargetCallError,
    TargetReply,
    TurnContext,
)
from evalkit.runner._users import (
    DisclosureStep,
    PersonaCard,
    ScriptedUser,
    SimulatedUser,
    UserSide,
    UserTurn,
)
from evalkit.runner._variants import (
    DEFAULT_POSITIONS,
    ISSUE_POSITIONS,
    Exchange,
    OnsetTemplate,
    onset_variants,
    variant_id,
)

__all__ = [
    "DEFAULT_POSITIONS",
    "ISSUE_POSITIONS",
    "MAX_TURNS",
    "TRANSCRIPT_COLUMNS",
    "AnthropicTarget",
    "CallableTarget",
    "DisclosureStep",
    "Exchange",
    "Message",
    "OnsetTemplate",
    "OpenAITarget",
    "PersonaCard",
    "ReplayTarget",
    "RunnerError",
    "ScriptedUser",
    "SimulatedUser",
    "Target",
    "TargetCallError",
    "TargetReply",
    "TurnContext",
    "UserSide",
    "UserTurn",
    "arun_conversations",
    "conversation_key",
    "default_transcripts_path",
    "make_target",
    "onset_variants",
    "open_store",
    "read_transcripts",
    "run_conversations",
    "transcript_cases",
    "variant_id",
]
