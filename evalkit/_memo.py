"""A disk cache for deterministic results that several runs compute again (the catalogue
audit's fitted shortcuts, which every calibration study of every judge repeats).

:func:`remembered` returns ``compute()``; when the environment names a cache folder
(:data:`CACHE_VARIABLE`, which ``evalkit study`` sets for its kernels), it first looks
for the result under a key that is the sha256 of everything the result depends on, and
stores it there after computing it. Without the variable nothing is read or written.

Results are JSON (never pickle: a cache file is data, read as data). A file that cannot
be read, is not JSON, or fails the caller's ``valid`` check is ignored and rewritten:
the cache can only save time, never change a result. Files are written to a temporary
name and renamed, so two processes computing the same key leave one whole file.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar, cast

T = TypeVar("T")

#: The environment variable naming the cache folder (unset: no cache).
CACHE_VARIABLE = "EVALKIT_CACHE_DIR"


def cache_key(*parts: Any) -> str:
    """The sha256 of ``parts`` as canonical JSON (sorted keys; anything JSON cannot hold
    is written with ``str``)."""
    text = json.dumps(parts, sort_keys=True, default=str, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def remembered(
    kind: str,
    key: str,
    compute: Callable[[], T],
    *,
    valid: Callable[[Any], bool],
    folder: str | Path | None = None,
) -> T:
    """``compute()``, or the result stored for ``(kind, key)`` in the cache folder
    (``folder``, else the environment's :data:`CACHE_VARIABLE`; neither: no cache).

    ``compute`` must return JSON-able data that depends on nothing but what ``key``
    hashes; ``valid`` says whether data read back is such a result (else it is computed
    again). A cache folder that cannot be written to only costs the time.
    """
    where = folder if folder is not None else os.environ.get(CACHE_VARIABLE)
    if not where:
        return compute()
    path = Path(where) / f"{kind}-{key}.json"
    try:
        stored = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        stored = None
    if stored is not None and valid(stored):
        return cast(T, stored)
    result = compute()
    tmp: str | None = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{kind}-", suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(result, handle)
        os.replace(tmp, path)
    except OSError:  # no cache this time
        if tmp is not None:
            Path(tmp).unlink(missing_ok=True)
    return result
