"""Judge requests: the frozen framing filled with rubrics and a wrapped transcript.

A request is (case, scored assistant turn, dimensions scored together, one rubric per
dimension, judge identity). It is rendered from ``framing.txt``: the ``@@ system``
section (bins, anchoring, rubrics) is the fixed, cacheable prefix; the ``@@ user``
section carries the request id, the nonce, the locale, the sources and the transcript.
Both are filled with :meth:`string.Template.substitute`, so transcript text is a
value and is never itself parsed as a template.

Wrapping. Every turn is ``<turn-NONCE id="t3" role="user">…</turn-NONCE>`` and every
source ``<source-NONCE id="…" kind="…" title="…">…</source-NONCE>``. Nothing inside is
escaped: a transcript cannot close a tag it cannot name, and it cannot name it
because the nonce is the first 16 hex digits of HMAC-SHA256(salt, request key), with
a salt from ``EVALKIT_NONCE_SALT`` or a random per-ledger salt. Should a text contain
the nonce itself, that occurrence is replaced by ``[nonce]``. Attribute values
(source ids and titles, written by catalogue authors) are HTML-escaped.

Keys. The request key is the sha256 of a canonical JSON document holding the framing
hash, the constants hash, each rubric's content hash, the hashes of the system text
and of the user text rendered with the placeholders ``REQUEST`` and ``NONCE`` (so the
nonce and the request id never enter the key), the backend, the model and the
parameters. The API key never enters it. The *content key* is the same document
without backend, model and parameters: the replay backend finds answers by it.
The request id shown to the judge is the first 8 hex digits of the request key;
case ids, strata, families and labels never reach the prompt.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import html
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from string import Template
from typing import Any

from evalkit.catalogue import Case, Catalogue, Rubric
from evalkit.errors import JudgeError

#: Version of the answer schema (:mod:`evalkit.judge._answer`); part of every key.
SCHEMA_VERSION = "record_scores/1"
#: Version of the key document itself.
KEY_VERSION = "evalkit-judge-key/1"
#: Dimensions that only make sense for a case with sources.
NEEDS_SOURCES = frozenset({"faithfulness"})

_SYSTEM_FIELDS = {"bins", "anchoring", "rubrics"}
_USER_FIELDS = {
    "request_id",
    "nonce",
    "locale",
    "sources",
    "transcript",
    "scored_turn",
    "dimensions",
}
_KEY_NONCE = "NONCE"
_KEY_REQUEST = "REQUEST"


@dataclass(frozen=True)
class JudgeParams:
    """Call parameters that change the answer, hence part of the request key.

    ``temperature`` None means "not sent" (the server default). ``mode`` is ``tool``
    (forced ``record_scores`` tool use) or ``json`` (JSON-schema structured output).
    ``sample`` is the repeat index of ``--samples K`` (0 to K-1, ADR-0027): it changes
    nothing that is sent, only the key, so each repeat is its own ledger row and a re-run
    still pays nothing twice. Sample 0 leaves the key as it was before repeats existed.
    """

    max_tokens: int = 4096
    temperature: float | None = None
    mode: str = "tool"
    schema_version: str = SCHEMA_VERSION
    sample: int = 0

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "max_tokens": self.max_tokens,
            "temperature": self.temperature,
            "mode": self.mode,
            "schema_version": self.schema_version,
        }
        if self.sample:
            out["sample"] = self.sample
        return out


@dataclass(frozen=True)
class DimensionSpec:
    """One requested dimension with the rubric it is scored against."""

    dimension: str
    version: str
    rubric_hash: str
    presence_gated: bool


@dataclass(frozen=True)
class JudgeRequest:
    """One call to a judge, fully rendered. ``system`` is the cacheable prefix."""

    key: str
    content_key: str
    request_id: str
    nonce: str
    case_id: str
    turn: int
    turn_ids: tuple[str, ...]
    dimensions: tuple[DimensionSpec, ...]
    bins: tuple[str, ...]
    locale: str
    system: str
    user: str
    framing_hash: str
    constants_hash: str
    judge: str
    backend: str
    model: str
    params: Mapping[str, Any] = field(default_factory=dict)

    @property
    def dimension_names(self) -> tuple[str, ...]:
        return tuple(d.dimension for d in self.dimensions)

    @property
    def scored_turn_id(self) -> str:
        return f"t{self.turn}"

    @property
    def presence_gated(self) -> dict[str, bool]:
        return {d.dimension: d.presence_gated for d in self.dimensions}

    def metadata(self) -> dict[str, Any]:
        """What the ledger stores about the request (no prompt text, no secret)."""
        return {
            "request_key": self.key,
            "content_key": self.content_key,
            "request_id": self.request_id,
            "nonce": self.nonce,
            "case_id": self.case_id,
            "turn": self.turn,
            "dimensions": [
                {
                    "dimension": d.dimension,
                    "version": d.version,
                    "rubric_hash": d.rubric_hash,
                    "presence_gated": d.presence_gated,
                }
                for d in self.dimensions
            ],
            "turn_ids": list(self.turn_ids),
            "bins": list(self.bins),
            "framing_hash": self.framing_hash,
            "constants_hash": self.constants_hash,
            "judge": self.judge,
            "backend": self.backend,
            "model": self.model,
            "params": dict(self.params),
        }


@functools.lru_cache(maxsize=8)
def split_framing(framing: str) -> tuple[Template, Template]:
    """Split the framing text into its ``@@ system`` and ``@@ user`` templates.

    Cached per framing text (a gate run rebuilds thousands of requests from one framing);
    the templates are only ever read, never changed.

    Raises :class:`JudgeError` if a section is missing or a template names a
    placeholder this module does not fill (or misses one it must).
    """
    lines = framing.splitlines()
    try:
        i_sys = lines.index("@@ system")
        i_user = lines.index("@@ user")
    except ValueError:
        raise JudgeError("framing: needs a `@@ system` line and a `@@ user` line") from None
    if not i_sys < i_user:
        raise JudgeError("framing: the `@@ system` section must come before `@@ user`")
    system = Template("\n".join(lines[i_sys + 1 : i_user]).strip("\n"))
    user = Template("\n".join(lines[i_user + 1 :]).strip("\n"))
    for name, tpl, expected in (("system", system, _SYSTEM_FIELDS), ("user", user, _USER_FIELDS)):
        if not tpl.is_valid():
            raise JudgeError(f"framing: the {name} section has a malformed placeholder")
        found = set(tpl.get_identifiers())
        if found != expected:
            raise JudgeError(
                f"framing: the {name} section has placeholders {sorted(found)}, "
                f"expected {sorted(expected)}"
            )
    return system, user


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _canonical(doc: Mapping[str, Any]) -> str:
    return json.dumps(doc, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def derive_nonce(salt: bytes, request_key: str) -> str:
    """First 16 hex digits of HMAC-SHA256(salt, request key)."""
    return hmac.new(salt, request_key.encode("ascii"), hashlib.sha256).hexdigest()[:16]


def _body(text: str, nonce: str) -> str:
    return text.replace(nonce, "[nonce]") if nonce != _KEY_NONCE else text


def _attr(value: str) -> str:
    return html.escape(value, quote=True)


def render_transcript(case: Case, turn: int, nonce: str) -> str:
    """Turns ``0..turn`` of ``case``, each wrapped in a ``turn-NONCE`` tag."""
    parts = []
    for i, t in enumerate(case.turns[: turn + 1]):
        parts.append(
            f'<turn-{nonce} id="t{i}" role="{t.role}">\n{_body(t.text, nonce)}\n</turn-{nonce}>'
        )
    return "\n".join(parts)


def render_sources(case: Case, nonce: str) -> str:
    """The case's sources, each wrapped in a ``source-NONCE`` tag; ``(none)`` if none."""
    if not case.sources:
        return "(none)"
    return "\n".join(
        f'<source-{nonce} id="{_attr(s.id)}" kind="{_attr(s.kind)}" title="{_attr(s.title)}">\n'
        f"{_body(s.text.rstrip(), nonce)}\n</source-{nonce}>"
        for s in case.sources
    )


def order_dimensions(catalogue: Catalogue, dimensions: Sequence[str]) -> tuple[str, ...]:
    """Deduplicate and order dimensions canonically (gated order first, then by name).

    The order is part of the prompt, so a canonical order lets the same set of
    dimensions hit the same ledger rows whatever order the caller named them in.
    """
    gated = list(catalogue.constants.gated_dimensions)
    uniq = set(dimensions)
    return tuple(sorted(uniq, key=lambda d: (gated.index(d) if d in gated else len(gated), d)))


def assistant_turns(case: Case) -> list[int]:
    """Indices of the assistant turns of ``case`` (every odd index)."""
    return [i for i, t in enumerate(case.turns) if t.role == "assistant"]


@dataclass(frozen=True)
class JudgeIdentity:
    """What identifies the judge in a key: backend kind, model and parameters."""

    judge: str
    backend: str
    model: str
    params: JudgeParams


def build_request(
    catalogue: Catalogue,
    case: Case,
    turn: int,
    rubrics: Sequence[Rubric],
    identity: JudgeIdentity,
    salt: bytes,
    *,
    heldout_seal: str | None = None,
) -> JudgeRequest:
    """Render one judge request for ``case`` scored at assistant turn ``turn``.

    The transcript is the prefix ``turns[0..turn]``. ``rubrics`` are scored together,
    in the order given (use :func:`order_dimensions`). ``heldout_seal``: the id of the
    held-out seal in force, recorded in the request's ``params`` and part of its key (not
    of its content key, nor of the prompt) so an answer is bound to the seal it was
    judged under (ADR-0015). Raises :class:`JudgeError` if ``turn`` is not an assistant
    turn or the framing is malformed.
    """
    dims, system, user_text, content_doc = _request_parts(
        catalogue, case, turn, rubrics, identity.params.schema_version
    )
    content_key = _sha(_canonical(content_doc))
    params = identity.params.as_dict()
    if heldout_seal is not None:
        params["heldout_seal"] = heldout_seal
    key_doc = dict(content_doc)
    key_doc.update(backend=identity.backend, model=identity.model, params=params)
    key = _sha(_canonical(key_doc))
    nonce = derive_nonce(salt, key)
    request_id = key[:8]
    return JudgeRequest(
        key=key,
        content_key=content_key,
        request_id=request_id,
        nonce=nonce,
        case_id=case.id,
        turn=turn,
        turn_ids=tuple(f"t{i}" for i in range(turn + 1)),
        dimensions=dims,
        bins=tuple(catalogue.constants.bins),
        locale=case.locale,
        system=system,
        user=user_text(request_id, nonce),
        framing_hash=catalogue.framing_hash,
        constants_hash=catalogue.constants_hash,
        judge=identity.judge,
        backend=identity.backend,
        model=identity.model,
        params=params,
    )


def _request_parts(
    catalogue: Catalogue,
    case: Case,
    turn: int,
    rubrics: Sequence[Rubric],
    schema_version: str,
    system: str | None = None,
    rubric_hashes: Sequence[str] | None = None,
) -> tuple[tuple[DimensionSpec, ...], str, Callable[[str, str], str], dict[str, Any]]:
    """What a request reads: its dimensions, system text, user text (given request id and
    nonce) and the document its content key hashes. ``system`` (the system text, which
    depends on the rubrics alone) and ``rubric_hashes`` may be passed when known."""
    if not 0 <= turn < len(case.turns) or case.turns[turn].role != "assistant":
        raise JudgeError(f"case {case.id}: turn {turn} is not an assistant turn")
    if not rubrics:
        raise JudgeError(f"case {case.id}: no dimensions to score")
    constants = catalogue.constants
    bins = constants.bins
    sys_tpl, user_tpl = split_framing(constants.framing)
    hashes = rubric_hashes or [r.content_hash(bins) for r in rubrics]
    dims = tuple(
        DimensionSpec(r.dimension, r.version, h, r.presence_gated)
        for r, h in zip(rubrics, hashes, strict=True)
    )
    if system is None:
        system = sys_tpl.substitute(
            bins=", ".join(f"`{b}`" for b in bins),
            anchoring=" ".join(constants.anchoring.split()),
            rubrics="\n".join(r.render(bins) for r in rubrics).rstrip("\n"),
        )

    def user_text(request_id: str, nonce: str) -> str:
        return user_tpl.substitute(
            request_id=request_id,
            nonce=nonce,
            locale=case.locale,
            sources=render_sources(case, nonce),
            transcript=render_transcript(case, turn, nonce),
            scored_turn=f"t{turn}",
            dimensions=", ".join(f"`{d.dimension}`" for d in dims),
        )

    content_doc: dict[str, Any] = {
        "v": KEY_VERSION,
        "schema": schema_version,
        "framing_sha256": catalogue.framing_hash,
        "constants_sha256": catalogue.constants_hash,
        "rubrics": [[d.dimension, d.version, d.rubric_hash] for d in dims],
        "system_sha256": _sha(system),
        "user_sha256": _sha(user_text(_KEY_REQUEST, _KEY_NONCE)),
    }
    return dims, system, user_text, content_doc


def content_key(
    catalogue: Catalogue,
    case: Case,
    turn: int,
    rubrics: Sequence[Rubric],
    schema_version: str = SCHEMA_VERSION,
    *,
    systems: dict[tuple[str, ...], str] | None = None,
    rubric_hashes: tuple[str, ...] | None = None,
) -> str:
    """The content key :func:`build_request` gives this case, turn and rubrics (what the
    judge reads, whoever the judge is).

    For callers that rebuild many keys (the gate's stale check): ``systems`` caches the
    rendered system texts by rubric hashes, and ``rubric_hashes`` are the rubrics' content
    hashes when already known (each would otherwise render its rubric again)."""
    bins = catalogue.constants.bins
    hashes = rubric_hashes or tuple(r.content_hash(bins) for r in rubrics)
    cached = systems.get(hashes) if systems is not None else None
    _, system, _, doc = _request_parts(
        catalogue, case, turn, rubrics, schema_version, cached, hashes
    )
    if systems is not None:
        systems[hashes] = system
    return _sha(_canonical(doc))
