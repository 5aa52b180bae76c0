"""Writing the held-out protocol's files whole or not at all (template, label page, registry)."""

from __future__ import annotations

import contextlib
import errno
import os
from pathlib import Path

from evalkit.errors import EvalkitError


def write_whole(path: str | Path, data: bytes, what: str) -> Path:
    """Write ``data`` to ``path`` through ``<stem>.writing<suffix>`` beside it and one
    rename, so ``path`` is either its old self or the new file, never half of one.

    The temporary name keeps the suffix, so a file written inside a catalogue folder
    (``heldout/seals.writing.json``) is one the catalogue layout allows. On any failure
    (a full disk, a folder where the file should be, no permission) the temporary file
    is removed and an :class:`EvalkitError` names ``what``, the path and the cause
    ("the disk is full" for ``ENOSPC``); ``path`` is left as it was. Returns ``path``.
    """
    target = Path(path)
    if target.is_dir():
        raise EvalkitError(f"cannot write the {what} {target}: it is a folder; name a file")
    blocking = next((p for p in target.parents if p.exists() and not p.is_dir()), None)
    if blocking is not None:
        raise EvalkitError(f"cannot write the {what} {target}: {blocking} is a file, not a folder")
    tmp = target.with_name(f"{target.stem}.writing{target.suffix}")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_bytes(data)
        os.replace(tmp, target)
    except OSError as exc:
        with contextlib.suppress(OSError):  # nothing to remove when the folder is not one
            tmp.unlink(missing_ok=True)
        cause = (
            "the disk is full (no space left on device)"
            if exc.errno == errno.ENOSPC
            else (exc.strerror or str(exc))
        )
        raise EvalkitError(
            f"cannot write the {what} {target}: {cause}; nothing was written"
        ) from None
    return target
