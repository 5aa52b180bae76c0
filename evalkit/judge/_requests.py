"""Every request of a run: case x scored turn x dimension group (x repeat sample).

Pure: built from the catalogue and the judge's identity, nothing read or sent. Each
request's prompt and keys are :func:`~evalkit.judge._prompt.build_request`'s.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Literal

from evalkit.catalogue import Case, Catalogue
from evalkit.errors import JudgeError
from evalkit.judge._prompt import (
    NEEDS_SOURCES,
    JudgeIdentity,
    JudgeRequest,
    assistant_turns,
    build_request,
    order_dimensions,
)

#: Most repeats of one request (``--samples``).
MAX_SAMPLES = 20

Turns = Literal["final", "all"] | Sequence[int]


def dimensions_to_judge(
    catalogue: Catalogue,
    dimensions: Sequence[str] | None,
    rubric_versions: dict[str, str] | None,
) -> list[str]:
    """The dimensions a run judges: ``dimensions`` when given; else the ones whose asked
    rubric version differs from the version in force (a rubric variant re-judges only
    what it varies); else the gated dimensions. Live runs and batch files read it alike.
    """
    in_force = catalogue.constants.rubrics_in_force
    varied = [d for d, v in (rubric_versions or {}).items() if in_force.get(d) != v]
    return list(dimensions or varied or catalogue.constants.gated_dimensions)


def build_requests(
    catalogue: Catalogue,
    cases: Sequence[Case],
    dimensions: Sequence[str],
    identity: JudgeIdentity,
    salt: bytes,
    *,
    rubric_versions: dict[str, str] | None = None,
    turns: Turns = "final",
    together: bool = True,
    seal: str | None = None,
    samples: int = 1,
) -> list[JudgeRequest]:
    """Every request of a run, deduplicated, in case order.

    ``samples``: each request is asked that many times, the repeat index in the key
    (:attr:`JudgeParams.sample`, ADR-0027); the repeats of a request follow it.

    A dimension in :data:`NEEDS_SOURCES` is skipped for a case without sources.
    ``turns``: ``final`` (the last assistant turn), ``all`` (every assistant turn, each
    with the transcript prefix up to it) or explicit turn indices. ``seal``: the id of
    the held-out seal in force, bound to every held-out request (ADR-0015); a held-out
    case without it is a :class:`JudgeError`.
    """
    if type(samples) is not int or not 1 <= samples <= MAX_SAMPLES:
        raise JudgeError(f"samples must be an integer from 1 to {MAX_SAMPLES}, got {samples!r}")
    identities = [
        dataclasses.replace(identity, params=dataclasses.replace(identity.params, sample=i))
        for i in range(samples)
    ]
    if seal is None and any(c.split == "heldout" for c in cases):
        raise JudgeError("held-out labels are not sealed: no seal id for the held-out cases")
    rubric_versions = rubric_versions or {}
    dims = order_dimensions(catalogue, dimensions)
    rubrics = {}
    for d in dims:
        try:
            rubrics[d] = catalogue.rubric(d, rubric_versions.get(d))
        except KeyError as exc:
            raise JudgeError(str(exc.args[0])) from None
    out: dict[str, JudgeRequest] = {}
    for case in cases:
        if turns == "final":
            scored = [len(case.turns) - 1]
        elif turns == "all":
            scored = assistant_turns(case)
        else:
            scored = list(turns)
        usable = [d for d in dims if d not in NEEDS_SOURCES or case.has_sources]
        groups = [usable] if together else [[d] for d in usable]
        for turn in scored:
            for group in groups:
                for who in identities if group else ():
                    req = build_request(
                        catalogue,
                        case,
                        turn,
                        [rubrics[d] for d in group],
                        who,
                        salt,
                        heldout_seal=seal if case.split == "heldout" else None,
                    )
                    out.setdefault(req.key, req)
    return list(out.values())
