"""Writing files whole or not at all: one concept for every command that writes.

:func:`write_whole` writes one file through a temporary file beside it and one rename.
For several files, all or none: each staged beside its target, then moved into place.

A :class:`Staging` writes every file to a temporary file beside its target (written and
synced), and a new folder whole to a temporary folder beside it; folders it has to make
on the way are remembered. Only once everything is staged does :meth:`Staging.move`
rename each into place (``os.replace``: atomic per file, and a rename needs no space). A
file it replaces is first kept under a hard-linked backup name beside it, so that until
:meth:`Staging.finish`, :meth:`Staging.undo` can put everything back as it was: moved
files taken out, backups renamed back, temporary files and the folders it made removed.
That lets a caller make one more, irreversible write the last step (a ledger's commit)
and still undo the files should that step fail.

Temporary names start with a dot and end in ``.tmp`` (``.tasks.json.x1y2.tmp``), backups
in ``.bak``, so a left-over one (a killed process) is never read as a label or case file.

:func:`write_all` is the common case: every file written or none, with an
:class:`EvalkitError` that names the disk problem (:func:`disk_problem`).
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from evalkit.errors import EvalkitError


def disk_problem(exc: OSError) -> str:
    """What went wrong on the disk, as a sentence part: ``the disk is full (No space left
    on device)`` for ``ENOSPC``, the quota for ``EDQUOT``, else the system's own words."""
    if exc.errno == errno.ENOSPC:
        return f"the disk is full ({os.strerror(errno.ENOSPC)})"
    if exc.errno == errno.EDQUOT:
        return f"the disk quota is exceeded ({os.strerror(errno.EDQUOT)})"
    where = f" ({exc.filename})" if exc.filename else ""
    return f"{exc.strerror or exc}{where}"


@dataclass
class _Move:
    staged: Path
    target: Path
    folder: bool
    new: bool = False
    backup: Path | None = None
    was_empty_folder: bool = False
    done: bool = False


class Staging:
    """Files staged beside their targets, moved into place together, undone on failure.

    Use: :meth:`file`, :meth:`folder` or :meth:`new_file` for each target, then
    :meth:`move`, then :meth:`finish` once nothing can fail any more; on any exception
    call :meth:`undo`.
    Each method lets an ``OSError`` through (the caller names it).
    """

    def __init__(self) -> None:
        self._moves: list[_Move] = []
        self._made: list[Path] = []
        self._created: list[Path] = []

    def parents(self, target: Path) -> None:
        """Make the folders above ``target`` that do not exist, remembering them."""
        missing = [p for p in reversed(target.parents) if not p.exists()]
        for folder in missing:
            folder.mkdir()
            self._made.append(folder)

    def new_file(self, target: Path) -> Path:
        """A temporary path beside ``target`` for the caller to build a new file at (a
        SQLite ledger, with its ``-wal``/``-shm`` companions, removed on :meth:`undo`).
        :meth:`move` links it into place without replacing anything: should ``target``
        have appeared meanwhile, ``FileExistsError``."""
        self.parents(target)
        fd, name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
        os.close(fd)
        staged = Path(name)
        staged.unlink()  # the caller makes it
        self._moves.append(_Move(staged, target, folder=False, new=True))
        self._created += [staged.with_name(staged.name + s) for s in ("-wal", "-shm", "-journal")]
        return staged

    def file(self, target: Path, text: str) -> None:
        """Stage ``text`` (UTF-8, line ends as given) to a temporary file beside
        ``target``, with ``target``'s permissions if it exists (else 0644). A folder at
        ``target`` is an ``IsADirectoryError``, never moved aside."""
        if target.is_dir():
            raise IsADirectoryError(errno.EISDIR, "is a folder, not a file", str(target))
        self.parents(target)
        fd, name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
        os.close(fd)
        staged = Path(name)
        self._moves.append(_Move(staged, target, folder=False))
        os.chmod(staged, target.stat().st_mode & 0o777 if target.exists() else 0o644)
        staged.write_text(text, encoding="utf-8", newline="")
        with open(staged, "rb+") as handle:
            os.fsync(handle.fileno())

    def folder(self, target: Path, files: Mapping[str, str]) -> None:
        """Stage a new folder at ``target`` (which must not exist, or be an empty folder)
        holding ``files`` (relative path -> text)."""
        self.parents(target)
        staged = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent))
        self._moves.append(_Move(staged, target, folder=True))
        os.chmod(staged, 0o755)
        for rel, text in files.items():
            path = staged / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8", newline="")
            with open(path, "rb+") as handle:
                os.fsync(handle.fileno())

    def move(self) -> None:
        """Rename every staged file and folder into place, keeping a backup of each file
        replaced (a hard link beside it, or the file itself renamed where links fail)."""
        for m in self._moves:
            if m.folder:
                if m.target.is_dir():  # an empty folder, checked by the caller
                    m.target.rmdir()
                    m.was_empty_folder = True
                os.rename(m.staged, m.target)
            elif m.new:
                try:
                    if m.target.exists():
                        raise FileExistsError
                    try:
                        os.link(m.staged, m.target)
                    except FileExistsError:
                        raise
                    except OSError:  # no hard links on this file system
                        os.rename(m.staged, m.target)
                except FileExistsError:
                    raise FileExistsError(
                        errno.EEXIST, "made by another process meanwhile", str(m.target)
                    ) from None
                m.staged.unlink(missing_ok=True)
            else:
                if m.target.exists():
                    m.backup = m.staged.with_suffix(".bak")
                    try:
                        os.link(m.target, m.backup)
                    except OSError:
                        os.rename(m.target, m.backup)
                os.replace(m.staged, m.target)
            m.done = True

    def undo(self) -> list[Path]:
        """Put everything back as it was before staging; returns the targets that could
        not be restored (none, unless the disk fails under the undo itself)."""
        failed: list[Path] = []
        for m in reversed(self._moves):
            try:
                if m.done and m.folder:
                    shutil.rmtree(m.target)
                    if m.was_empty_folder:
                        m.target.mkdir()
                elif m.done and m.backup is not None:
                    os.replace(m.backup, m.target)
                elif m.done:
                    m.target.unlink()
                elif m.folder:
                    shutil.rmtree(m.staged, ignore_errors=True)
                    if m.was_empty_folder and not m.target.exists():
                        m.target.mkdir()
                else:
                    if m.backup is not None and not m.target.exists():
                        os.replace(m.backup, m.target)  # renamed away, not yet replaced
                    elif m.backup is not None:
                        m.backup.unlink()
                    m.staged.unlink(missing_ok=True)
            except OSError:
                failed.append(m.target)
        for path in self._created:
            path.unlink(missing_ok=True)
        for folder in reversed(self._made):
            with contextlib.suppress(OSError):  # not empty: another writer's folder now
                folder.rmdir()
        self._moves, self._made, self._created = [], [], []
        return failed

    def finish(self) -> None:
        """Forget the undo: remove the backups (a backup left behind is harmless)."""
        for m in self._moves:
            if m.backup is not None:
                with contextlib.suppress(OSError):
                    m.backup.unlink(missing_ok=True)
        self._moves, self._made, self._created = [], [], []


def write_all(texts: Mapping[Path, str], what: str) -> None:
    """Write every file of ``texts`` (path -> text) or none (see the module docstring).

    ``what`` names the files in the message (``label file``). An ``OSError`` (a full
    disk, a read-only folder) at any point puts everything back and raises
    :class:`EvalkitError` naming the folder and the disk problem: no ``what`` changed.
    """
    if not texts:
        return
    staging = Staging()
    folder = next(iter(texts)).parent
    try:
        for path, text in texts.items():
            staging.file(path, text)
        staging.move()
    except OSError as exc:
        failed = staging.undo()
        kept = (
            f"could not restore {', '.join(map(str, failed))}: restore them from git"
            if failed
            else f"no {what} was written or changed"
        )
        raise EvalkitError(
            f"could not write the {what}s into {folder}: {disk_problem(exc)}; {kept}"
        ) from None
    staging.finish()


def write_whole(path: str | Path, data: bytes, what: str) -> Path:
    """Write ``data`` to ``path`` through ``<stem>.writing<suffix>`` beside it and one
    rename, so ``path`` is either its old self or the new file, never half of one.

    The temporary name keeps the suffix, so a file written inside a catalogue folder
    (``heldout/seals.writing.json``) is one the catalogue layout allows. On any failure
    (a full disk, a folder where the file should be, no permission) the temporary file
    is removed and an :class:`EvalkitError` names ``what``, the path and the cause
    (:func:`disk_problem`); ``path`` is left as it was. Returns ``path``.
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
        raise EvalkitError(
            f"cannot write the {what} {target}: {disk_problem(exc)}; nothing was written"
        ) from None
    return target
