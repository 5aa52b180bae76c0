"""What a secret looks like, and how it is scrubbed: one rule for every file evalkit writes.

A secret is either

* the value of a *configured* secret: an environment variable whose name ends in
  ``_KEY``, ``_TOKEN``, ``_SECRET``, ``_PASSWORD``, ``_PASSWD`` or ``_SALT``
  (``ANTHROPIC_API_KEY`` and ``OPENAI_API_KEY``, which the judge backends read, and
  ``EVALKIT_NONCE_SALT``), or whose name starts with ``EVALKIT_`` and contains ``KEY``,
  with a value of at least :data:`MIN_SECRET_LEN` characters (shorter values, such as
  ``TOKENIZERS_PARALLELISM=false``, are too common to treat as secrets); or
* a string *shaped* like a credential, whatever it came from: ``sk-ant-…`` and ``sk-…``
  API keys, GitHub and AWS access key ids, the credential after ``Bearer``, the userinfo
  of a URL (``scheme://user:pass@``) and the value of a credential query parameter
  (``?api_key=``, ``&key=``, ``&token=``, ...; the value ends at ``&``, ``#``, ``:``,
  a quote or white space, so the model after the URL of an ``openai:URL:MODEL`` spec
  survives).

:func:`scrub` replaces every secret in a text by :data:`REDACTED` (keeping the parts
that are not secret: ``https://[redacted]@host``, ``?api_key=[redacted]``, ``Bearer
[redacted]``); it is idempotent, so scrubbing what was already scrubbed changes nothing.
:func:`find_secrets` names the kinds of secret a text holds, never the secret itself.
The environment is read at each call, so a key set after import is still scrubbed.

Limits: a configured secret is found only as the literal value (not base64-encoded,
not JSON-escaped: API keys hold no character JSON escapes), and a key of a shape not
listed here is found only if it is configured in the environment.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

#: What every secret is replaced by.
REDACTED = "[redacted]"
#: Shortest environment value treated as a secret.
MIN_SECRET_LEN = 8

_SECRET_NAME = re.compile(
    r"(?:^|_)(?:KEY|TOKEN|SECRET|PASSWORD|PASSWD|SALT)$|^EVALKIT_.*KEY", re.IGNORECASE
)
_NOT_REDACTED = r"(?!\[redacted\])"

#: (kind, pattern, replacement): strings shaped like credentials.
_SHAPES: tuple[tuple[str, re.Pattern[str], str], ...] = (
    ("Anthropic-shaped key", re.compile(r"sk-ant-[A-Za-z0-9_\-]{8,}"), REDACTED),
    ("sk- key", re.compile(r"\bsk-(?:proj-)?[A-Za-z0-9_\-]{20,}"), REDACTED),
    ("GitHub token", re.compile(r"\bgh[pousr]_[A-Za-z0-9]{20,}"), REDACTED),
    ("AWS access key id", re.compile(r"\bAKIA[0-9A-Z]{16}\b"), REDACTED),
    (
        "bearer credential",
        re.compile(r"\b(Bearer\s+)" + _NOT_REDACTED + r"[A-Za-z0-9._~+/\-]{8,}=*", re.IGNORECASE),
        r"\1" + REDACTED,
    ),
    (
        "URL userinfo",
        re.compile(r"\b([a-z][a-z0-9+.\-]*://)[^\s/?#@:\"'<>]*:[^\s/?#@\"'<>]*@", re.IGNORECASE),
        r"\1" + REDACTED + "@",
    ),
    (
        "credential query parameter",
        re.compile(
            r"([?&](?:api[_-]?key|key|token|access[_-]?token|auth|secret|password|sig)=)"
            + _NOT_REDACTED
            + r"[^&#:\s\"'<>\\]+",
            re.IGNORECASE,
        ),
        r"\1" + REDACTED,
    ),
)


def is_secret_name(name: str) -> bool:
    """Whether an environment variable (or parameter) named ``name`` holds a secret."""
    return bool(_SECRET_NAME.search(name))


def configured_secrets(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """Configured secrets: variable name → value (stripped, :data:`MIN_SECRET_LEN`+ chars)."""
    env = os.environ if environ is None else environ
    return {
        name: value.strip()
        for name, value in env.items()
        if is_secret_name(name) and len(value.strip()) >= MIN_SECRET_LEN
    }


@dataclass(frozen=True)
class Scrubber:
    """The secrets in force at one moment; build with :func:`scrubber`.

    ``values`` are the literal secrets, longest first (so a secret that contains
    another is replaced whole).
    """

    values: tuple[tuple[str, str], ...]

    def scrub(self, text: str) -> str:
        """``text`` with every secret replaced by :data:`REDACTED`."""
        for _, value in self.values:
            if value in text:
                text = text.replace(value, REDACTED)
        for _, pattern, replacement in _SHAPES:
            text = pattern.sub(replacement, text)
        return text

    def find(self, text: str) -> list[str]:
        """Kinds of secret in ``text``: a variable name or a shape's name, never a value."""
        found = [name for name, value in self.values if value in text]
        found += [kind for kind, pattern, _ in _SHAPES if pattern.search(text)]
        return found

    def scrub_value(self, value: Any) -> Any:
        """A copy of a JSON-like value with every string in it scrubbed (mapping keys are
        kept as they are; numbers, booleans and None are returned unchanged)."""
        if isinstance(value, str):
            return self.scrub(value)
        if isinstance(value, Mapping):
            return {k: self.scrub_value(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self.scrub_value(v) for v in value]
        return value


def scrubber(
    environ: Mapping[str, str] | None = None, extra: Iterable[str | None] = ()
) -> Scrubber:
    """The secrets configured in ``environ`` (default ``os.environ``) plus ``extra``
    literal values (e.g. a key passed as an argument; those under
    :data:`MIN_SECRET_LEN` characters or None are ignored)."""
    values = dict(configured_secrets(environ))
    for i, value in enumerate(extra):
        if value and len(value.strip()) >= MIN_SECRET_LEN:
            values.setdefault(f"secret #{i + 1}", value.strip())
    ordered = sorted(values.items(), key=lambda kv: -len(kv[1]))
    return Scrubber(tuple(ordered))


def scrub(text: str, *, extra: Iterable[str | None] = ()) -> str:
    """``text`` with every secret (configured now, key-shaped, or in ``extra``) replaced
    by :data:`REDACTED`."""
    return scrubber(extra=extra).scrub(text)


def scrub_value(value: Any) -> Any:
    """:meth:`Scrubber.scrub_value` with the secrets configured now."""
    return scrubber().scrub_value(value)


def find_secrets(text: str, environ: Mapping[str, str] | None = None) -> list[str]:
    """Kinds of secret found in ``text`` (see :meth:`Scrubber.find`)."""
    return scrubber(environ).find(text)
