"""The git anchor of the seals: read-only questions to the checkout holding the catalogue.

A chain of seals kept in the working tree can be rewritten whole by anyone who can write
it. Git makes that visible: a seal names the commit that held its files, and that commit
must still exist, hold those exact bytes (``git cat-file blob COMMIT:path``) and be an
ancestor of HEAD (``git merge-base --is-ancestor``); and every committed version of the
registry must be a prefix of the chain as it is now (append-only in history too).
Rewriting the sealed files or the chain then means rewriting history that others have
already pulled. Every function here
only reads; none changes the repository.
"""

from __future__ import annotations

import hashlib
import subprocess
from dataclasses import dataclass
from pathlib import Path

_TIMEOUT = 30


def _git(cwd: Path, *args: str) -> subprocess.CompletedProcess[bytes] | None:
    try:
        return subprocess.run(
            ["git", *args], cwd=cwd, capture_output=True, timeout=_TIMEOUT, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return None


@dataclass(frozen=True)
class GitAnchor:
    """The git checkout a catalogue folder is in: its top folder and HEAD (None before
    the first commit)."""

    top: Path
    head: str | None

    def _rel(self, path: Path) -> str | None:
        try:
            return path.resolve().relative_to(self.top).as_posix()
        except ValueError:
            return None

    def has_commit(self, commit: str) -> bool:
        """Whether ``commit`` names a commit of this repository."""
        out = _git(self.top, "cat-file", "-e", f"{commit}^{{commit}}")
        return out is not None and out.returncode == 0

    def is_ancestor(self, commit: str) -> bool:
        """Whether ``commit`` is HEAD or one of its ancestors."""
        if self.head is None:
            return False
        out = _git(self.top, "merge-base", "--is-ancestor", commit, self.head)
        return out is not None and out.returncode == 0

    def blob_sha256(self, commit: str, path: Path) -> str | None:
        """sha256 of ``path`` as committed in ``commit`` (raw blob bytes, no filters);
        None if the commit does not hold it or it lies outside the checkout."""
        rel = self._rel(path)
        if rel is None:
            return None
        out = _git(self.top, "cat-file", "blob", f"{commit}:{rel}")
        if out is None or out.returncode != 0:
            return None
        return hashlib.sha256(out.stdout).hexdigest()

    def versions(self, path: Path) -> list[tuple[str, bytes]]:
        """Each committed version of ``path`` in the history of HEAD, newest first, as
        (commit, bytes); commits that deleted it are left out."""
        rel = self._rel(path)
        if rel is None or self.head is None:
            return []
        log = _git(self.top, "log", "--format=%H", self.head, "--", rel)
        if log is None or log.returncode != 0:
            return []
        out = []
        for commit in log.stdout.decode().split():
            blob = _git(self.top, "cat-file", "blob", f"{commit}:{rel}")
            if blob is not None and blob.returncode == 0:
                out.append((commit, blob.stdout))
        return out

    def last_commit_time(self, path: Path) -> str | None:
        """Committer date (ISO 8601) of the last commit of HEAD touching ``path`` (a file
        or folder); None when none did or it lies outside the checkout."""
        rel = self._rel(path)
        if rel is None or self.head is None:
            return None
        out = _git(self.top, "log", "-1", "--format=%cI", self.head, "--", rel)
        if out is None or out.returncode != 0:
            return None
        return out.stdout.decode().strip() or None

    def uncommitted(self, path: Path) -> list[str]:
        """Files under ``path`` that differ from HEAD or are not tracked (ignored files
        left out), relative to the checkout."""
        rel = self._rel(path)
        if rel is None:
            return []
        out = _git(self.top, "status", "--porcelain=v1", "-z", "--untracked-files=all", "--", rel)
        if out is None or out.returncode != 0:
            return []
        entries = [e for e in out.stdout.decode(errors="replace").split("\0") if e]
        return [e[3:] for e in entries if len(e) > 3]


def git_anchor(folder: Path) -> GitAnchor | None:
    """The checkout holding ``folder``; None when it is in none (or git is unavailable)."""
    top = _git(folder, "rev-parse", "--show-toplevel")
    if top is None or top.returncode != 0:
        return None
    head = _git(folder, "rev-parse", "--verify", "--quiet", "HEAD^{commit}")
    commit = head.stdout.decode().strip() if head is not None and head.returncode == 0 else None
    return GitAnchor(Path(top.stdout.decode().strip()).resolve(), commit or None)
