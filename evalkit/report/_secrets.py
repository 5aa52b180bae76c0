"""Keep secrets out of reports: refuse them as parameters, scan every output for them.

Keys reach the kernels only through the environment. Before a run, parameters that
look like a secret (by name or by value) are refused; after it, every file written is
scanned for the values of secret-looking environment variables and for key-shaped
strings, and a file holding one is deleted.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evalkit.errors import EvalkitError

#: Environment variable names whose values are treated as secrets.
SECRET_NAME = re.compile(r"(KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|SALT|AUTH)", re.IGNORECASE)
#: Strings shaped like API keys, whatever variable (if any) they came from.
KEY_PATTERNS = (
    re.compile(r"sk-ant-[A-Za-z0-9_\-]{8,}"),
    re.compile(r"\bsk-(?:proj-)?[A-Za-z0-9_\-]{20,}"),
    re.compile(r"\bgh[pousr]_[A-Za-z0-9]{20,}"),
    re.compile(r"\bAKIA[0-9A-Z]{16}\b"),
)
#: Shortest environment value treated as a secret (shorter ones are too common to scan).
MIN_SECRET_LEN = 12


class SecretLeakError(EvalkitError):
    """A secret was offered as a parameter or found in an output."""


@dataclass(frozen=True)
class Finding:
    """A secret found in a file: where, and which kind (never the secret itself)."""

    path: Path
    what: str


def secret_values(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """Secret-looking environment variables: name → value (values of 12+ characters)."""
    env = os.environ if environ is None else environ
    return {
        name: value
        for name, value in env.items()
        if SECRET_NAME.search(name) and len(value.strip()) >= MIN_SECRET_LEN
    }


def scan_text(text: str, secrets: Mapping[str, str]) -> list[str]:
    """Kinds of secret found in ``text``: env variable names, or ``key-shaped string``."""
    found = [name for name, value in secrets.items() if value.strip() in text]
    if any(p.search(text) for p in KEY_PATTERNS):
        found.append("key-shaped string")
    return found


def scan_files(paths: Iterable[Path], environ: Mapping[str, str] | None = None) -> list[Finding]:
    """Scan files (text, read as UTF-8 with replacement) for secrets."""
    secrets = secret_values(environ)
    findings = []
    for path in paths:
        if not path.is_file():
            continue
        text = path.read_bytes().decode("utf-8", errors="replace")
        findings += [Finding(path, what) for what in scan_text(text, secrets)]
    return findings


def check_parameters(
    parameters: Mapping[str, Any], environ: Mapping[str, str] | None = None
) -> None:
    """Refuse parameters that carry a secret: a secret-looking name, an environment
    secret's value, or a key-shaped string. Keys go through the environment only."""
    secrets = secret_values(environ)
    for name, value in parameters.items():
        if SECRET_NAME.search(name) and name not in ("seed",):
            raise SecretLeakError(
                f"parameter {name!r} looks like a secret; keys reach the kernels only "
                "through the environment (e.g. ANTHROPIC_API_KEY), never as parameters"
            )
        found = scan_text(repr(value), secrets)
        if found:
            raise SecretLeakError(
                f"parameter {name!r} holds a secret ({', '.join(found)}); keys reach the "
                "kernels only through the environment, never as parameters"
            )
