"""Attacks on the held-out seal (issue 15, ADR-0015), each through the CLI on a copy.

Every attack ends with ``evalkit gate --split heldout`` refusing (exit 2) and naming what
broke; the clean path (seal, judge, gate) still ends in a verdict (exit 0 or 1).
"""

from __future__ import annotations

import hashlib
import json
import shutil
import sqlite3
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from evalkit.catalogue import load
from evalkit.heldout import GENESIS, REGISTRY, TEMPLATE, write_template
from evalkit.judge import load_ledger
from tests.factory import SHIPPED
from tests.heldout.world import Run, cli, fill, template, with_heldout


@dataclass(frozen=True)
class World:
    root: Path
    labels: Path
    ledger: Path
    ledger_dir: Path

    @property
    def registry(self) -> Path:
        return self.root / REGISTRY

    def seal(self, sheet: Path | None = None, *extra: str | Path) -> Run:
        return cli(
            "heldout", "--catalogue", self.root, "seal", sheet or self.labels,
            "--ledger-dir", self.ledger_dir, *extra,
        )  # fmt: skip

    def judge(self, ledger: Path | None = None) -> Run:
        return cli(
            "judge", "--judge", "baseline", "--split", "heldout", "--quiet",
            "--ledger", ledger or self.ledger, "--catalogue", self.root,
        )  # fmt: skip

    def gate(self, ledger: Path | None = None) -> Run:
        return cli(
            "gate", "--split", "heldout", "--json", "--catalogue", self.root,
            "--ledger", ledger or self.ledger,
        )  # fmt: skip

    def verify(self) -> Run:
        return cli("heldout", "--catalogue", self.root, "verify")

    def judge_bins(self) -> dict[tuple[str, str], str]:
        frame = load_ledger(self.ledger)
        return {(r.case_id, r.dimension): r.bin for r in frame.itertuples()}

    def seals(self) -> list[dict[str, Any]]:
        return list(json.loads(self.registry.read_text(encoding="utf-8"))["seals"])


def fresh(tmp_path: Path) -> World:
    """The mini catalogue with three held-out cases, its template and a filled sheet."""
    cat = with_heldout(tmp_path)
    labels = fill(template(cat), cat.root / "heldout" / "labels.csv")
    ledger_dir = tmp_path / "ledgers"
    ledger_dir.mkdir()
    return World(cat.root, labels, ledger_dir / "judge.sqlite", ledger_dir)


def judged(tmp_path: Path) -> World:
    """Sealed, then judged on the held-out split with the offline baseline judge."""
    world = fresh(tmp_path)
    assert world.seal().code == 0
    run = world.judge()
    assert run.code == 0, run.err
    return world


def refused(run: Run, *needles: str) -> None:
    """The run exited 2 with a named error (no traceback) holding every needle."""
    assert run.code == 2, (run.code, run.out, run.err)
    assert "Traceback" not in run.err
    for needle in needles:
        assert needle in run.err, (needle, run.err)


def rehash(path: Path, edit: Callable[[list[dict[str, Any]]], list[dict[str, Any]]]) -> None:
    """A forger who knows the format: edit the entries, then recompute every link and hash
    (sha256 of the canonical JSON of the entry without ``hash``, ADR-0015)."""
    doc = json.loads(path.read_text(encoding="utf-8"))
    prev = GENESIS
    entries = edit(doc["seals"])
    for i, entry in enumerate(entries):
        entry.update(index=i, prev=prev)
        body = {k: v for k, v in entry.items() if k != "hash"}
        canonical = json.dumps(body, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
        entry["hash"] = prev = hashlib.sha256(canonical.encode("utf-8")).hexdigest()
    doc["seals"] = entries
    path.write_text(json.dumps(doc, indent=2), encoding="utf-8")


def edit_registry(world: World, edit: Callable[[list[dict[str, Any]]], None]) -> None:
    """A forger who does not recompute anything."""
    doc = json.loads(world.registry.read_text(encoding="utf-8"))
    edit(doc["seals"])
    world.registry.write_text(json.dumps(doc, indent=2), encoding="utf-8")


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# -- the clean path ------------------------------------------------------------------------


def test_clean_seal_judge_gate_runs_end_to_end(tmp_path: Path) -> None:
    world = judged(tmp_path)
    gate = world.gate()
    assert gate.code in (0, 1), gate.err
    verdict = json.loads(gate.out)
    assert verdict["dimensions"]["self_harm"]["n"] == 3
    (seal,) = world.seals()
    frame = load_ledger(world.ledger)
    assert set(frame["seal_id"]) == {seal["hash"]}  # every held-out answer names its seal
    verify = world.verify()
    assert verify.code == 0 and "OK" in verify.out and "not a git checkout" in verify.out


@pytest.mark.slow
def test_clean_pass_on_a_copy_of_the_shipped_catalogue(tmp_path: Path) -> None:
    """Labels equal to the judge's answers (taken from a run on a throwaway copy) give
    kappa 1 on every dimension, and the gate decides by the verdict, not by a refusal."""
    scratch = tmp_path / "scratch" / "catalogues"
    shutil.copytree(SHIPPED, scratch)
    throwaway = World(scratch, scratch / "heldout" / "labels.csv", tmp_path / "a.sqlite", tmp_path)
    fill(scratch / TEMPLATE, throwaway.labels)
    assert throwaway.seal(None, "--ledger-dir", tmp_path / "none").code == 0
    assert throwaway.judge().code == 0
    answers = throwaway.judge_bins()

    root = tmp_path / "copy" / "catalogues"
    shutil.copytree(SHIPPED, root)
    world = World(root, root / "heldout" / "labels.csv", tmp_path / "b.sqlite", tmp_path / "b")
    fill(root / TEMPLATE, world.labels, bins=answers)
    sealed = world.seal()
    assert sealed.code == 0, sealed.err
    assert world.judge().code == 0
    gate = world.gate()
    assert gate.code in (0, 1), gate.err
    verdict = json.loads(gate.out)
    for dim, result in verdict["dimensions"].items():
        assert result["kappa"] in (None, pytest.approx(1.0)), dim


# -- re-sealing after the judge answered -----------------------------------------------------


def test_reseal_after_judging_is_refused_naming_seal_and_ledger(tmp_path: Path) -> None:
    world = judged(tmp_path)
    fill(world.root / TEMPLATE, world.labels, bins=world.judge_bins())  # labels follow the judge
    run = world.seal()  # the ledger lies in the default ledger folder
    refused(run, "seal #0", str(world.ledger), "already holds")
    elsewhere = tmp_path / "elsewhere.sqlite"
    shutil.move(world.ledger, elsewhere)
    refused(world.seal(None, "--ledger", elsewhere), "seal #0", str(elsewhere))
    assert len(world.seals()) == 1


def test_reseal_of_the_rewritten_sheet_is_refused_even_without_a_ledger(tmp_path: Path) -> None:
    world = judged(tmp_path)
    hidden = tmp_path / "hidden.sqlite"
    shutil.move(world.ledger, hidden)
    bins = World(world.root, world.labels, hidden, tmp_path).judge_bins()
    fill(world.root / TEMPLATE, world.labels, bins=bins)  # the same file, rewritten
    refused(world.seal(), "seal #0", "TAMPERED", "heldout/labels.csv")  # no ledger in sight
    refused(world.gate(hidden), "seal #0", "TAMPERED", "heldout/labels.csv")


def test_reseal_under_a_new_file_name_is_refused_by_the_gate(tmp_path: Path) -> None:
    world = judged(tmp_path)
    hidden = tmp_path / "hidden.sqlite"
    shutil.move(world.ledger, hidden)
    bins = World(world.root, world.labels, hidden, tmp_path).judge_bins()
    second = fill(world.root / TEMPLATE, world.root / "heldout" / "labels-v2.csv", bins=bins)
    assert world.seal(second).code == 0
    assert world.judge(hidden).code == 0  # new requests under seal #1 beside the old ones
    refused(world.gate(hidden), "judged under seal #0", "sealed again as #1")


# -- editing, backdating and deleting seals --------------------------------------------------


def test_edited_seal_hash_is_refused(tmp_path: Path) -> None:
    world = judged(tmp_path)
    fill(world.root / TEMPLATE, world.labels, bins=world.judge_bins())
    new = sha256(world.labels)

    def point_at_new_labels(seals: list[dict[str, Any]]) -> None:
        seals[0]["files"]["heldout/labels.csv"] = new

    edit_registry(world, point_at_new_labels)
    refused(world.gate(), "seal #0", "BROKEN", "edited after sealing")
    refused(world.verify(), "#0")
    assert "BROKEN" in world.verify().out


def test_backdated_seal_is_refused(tmp_path: Path) -> None:
    world = judged(tmp_path)

    def backdate(seals: list[dict[str, Any]]) -> None:
        seals[0]["sealed_at"] = "2020-01-01T00:00:00+00:00"

    edit_registry(world, backdate)
    refused(world.gate(), "seal #0", "edited after sealing")


def test_future_and_decreasing_seal_times_are_refused_even_when_rehashed(
    tmp_path: Path,
) -> None:
    world = fresh(tmp_path)
    assert world.seal().code == 0
    second = fill(world.root / TEMPLATE, world.root / "heldout" / "labels-v2.csv", value="high")
    assert world.seal(second).code == 0  # allowed: nothing judged yet
    assert world.judge().code == 0
    pristine = world.registry.read_text(encoding="utf-8")

    def before_the_first(seals: list[dict[str, Any]]) -> list[dict[str, Any]]:
        seals[1]["sealed_at"] = "2020-01-01T00:00:00+00:00"
        return seals

    rehash(world.registry, before_the_first)
    refused(world.gate(), "seal #1", "precedes that of seal #0: backdated")

    world.registry.write_text(pristine, encoding="utf-8")

    def in_the_future(seals: list[dict[str, Any]]) -> list[dict[str, Any]]:
        seals[1]["sealed_at"] = "2999-01-01T00:00:00+00:00"
        return seals

    rehash(world.registry, in_the_future)
    refused(world.gate(), "seal #1", "lies in the future")


def test_deleted_earlier_seal_is_refused(tmp_path: Path) -> None:
    world = fresh(tmp_path)
    assert world.seal().code == 0
    second = fill(world.root / TEMPLATE, world.root / "heldout" / "labels-v2.csv", value="high")
    assert world.seal(second).code == 0
    assert world.judge().code == 0
    assert world.gate().code in (0, 1)
    edit_registry(world, lambda seals: seals.pop(0))
    refused(world.gate(), "seal #1", "index 1 at position 0", "genesis")


def test_deleted_latest_seal_and_deleted_registry_are_refused(tmp_path: Path) -> None:
    world = fresh(tmp_path)
    assert world.seal().code == 0
    second = fill(world.root / TEMPLATE, world.root / "heldout" / "labels-v2.csv", value="high")
    assert world.seal(second).code == 0
    assert world.judge().code == 0
    edit_registry(world, lambda seals: seals.pop(1))  # the chain that is left is intact
    refused(world.gate(), "not in", "seals.json", "deleted from the chain")

    world.registry.unlink()  # start the chain again and seal anew
    assert world.seal(None, "--ledger-dir", tmp_path / "nowhere").code == 0
    refused(world.gate(), "not in", "deleted from the chain")


def test_a_broken_earlier_seal_refuses_whatever_later_seals_say(tmp_path: Path) -> None:
    world = fresh(tmp_path)
    assert world.seal().code == 0
    second = fill(world.root / TEMPLATE, world.root / "heldout" / "labels-v2.csv", value="high")
    assert world.seal(second).code == 0
    assert world.judge().code == 0
    world.labels.write_text(world.labels.read_text().replace("owner", "0wner", 1))
    refused(world.gate(), "1 of 2 seal(s)", "seal #0", "TAMPERED", "heldout/labels.csv")
    refused(world.judge(), "seal #0")


# -- editing the ledger ----------------------------------------------------------------------


def test_ledger_time_edited_to_before_the_seal_is_refused(tmp_path: Path) -> None:
    world = judged(tmp_path)
    with sqlite3.connect(world.ledger) as db:
        db.execute("UPDATE requests SET created_at = '2020-01-01T00:00:00.000000+00:00'")
    refused(world.gate(), "name seal #0", "dated before it", "created_at was edited")


def test_ledger_rows_without_a_seal_are_refused(tmp_path: Path) -> None:
    world = judged(tmp_path)
    frame = load_ledger(world.ledger).drop(columns="seal_id")
    rows = tmp_path / "rows.jsonl"
    frame.to_json(rows, orient="records", lines=True)
    refused(world.gate(rows), "frame rows")  # never evidence at all (ADR-0030)
    with sqlite3.connect(world.ledger) as db:
        db.execute("UPDATE requests SET params = json_remove(params, '$.heldout_seal')")
    refused(world.gate(), "name no seal")


# -- editing a conversation after sealing ----------------------------------------------------


def _edit_reply(root: Path) -> Path:
    path = root / "cases" / "heldout" / "en-US" / "ho.yaml"
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    data["cases"][1]["turns"][-1]["text"] = "Please call or text 988 right now."
    path.write_text(yaml.safe_dump(data, allow_unicode=True, sort_keys=False), encoding="utf-8")
    return path


def test_reply_edited_after_sealing_is_refused_by_judge_and_gate(tmp_path: Path) -> None:
    world = judged(tmp_path)
    _edit_reply(world.root)
    refused(world.gate(), "seal #0", "TAMPERED", "cases/heldout/en-US/ho.yaml")
    before = load_ledger(world.ledger)
    refused(world.judge(), "held-out labels are not sealed", "cases/heldout/en-US/ho.yaml")
    assert len(load_ledger(world.ledger)) == len(before)  # nothing judged


def test_sheet_labelled_on_other_conversations_or_a_stale_template_is_refused(
    tmp_path: Path,
) -> None:
    world = fresh(tmp_path)
    _edit_reply(world.root)  # the sheet was filled before the edit
    refused(world.seal(), "conversation", "labelled on another text")
    cat = load(world.root)
    fill(write_template(cat, tmp_path / "new.csv"), world.labels)  # re-labelled on the new text
    refused(world.seal(), "template.csv", "not the blind template")
    write_template(cat, world.root / TEMPLATE)
    assert world.seal().code == 0


def test_a_short_row_in_the_sheet_is_a_named_error(tmp_path: Path) -> None:
    world = fresh(tmp_path)
    lines = world.labels.read_text(encoding="utf-8").splitlines(keepends=True)
    world.labels.write_text(lines[0] + '"h0a9","x"\n' + "".join(lines[1:]), encoding="utf-8")
    refused(world.seal(), "field(s), the header has 7")
    world.labels.write_text("".join(lines), encoding="utf-8")
    (world.root / TEMPLATE).write_text(lines[0] + '"h0a9"\n', encoding="utf-8")  # cut short
    refused(world.seal(), "not the blind template")


# -- the git anchor ----------------------------------------------------------------------------


def git(repo: Path, *args: str) -> str:
    out = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.org",
         "-c", "commit.gpgsign=false", *args],
        cwd=repo, capture_output=True, text=True, check=True,
    )  # fmt: skip
    return out.stdout.strip()


@pytest.fixture
def repo(tmp_path: Path) -> World:
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    world = fresh(tmp_path)
    git(tmp_path, "init", "-q")
    git(tmp_path, "add", "catalogues")
    git(tmp_path, "commit", "-q", "-m", "held-out set and its sheet")
    return world


def test_in_git_the_sealed_files_must_be_committed_first(repo: World) -> None:
    repo.labels.write_text(repo.labels.read_text().replace("owner", "owner2"))
    refused(repo.seal(), "not committed", "heldout/labels.csv")
    git(repo.root.parent, "commit", "-q", "-am", "relabel")
    sealed = repo.seal()
    assert sealed.code == 0, sealed.err
    (seal,) = repo.seals()
    assert seal["git_commit"] == git(repo.root.parent, "rev-parse", "HEAD")
    verify = repo.verify()
    assert verify.code == 0 and "git: commits checked against HEAD" in verify.out


def test_in_git_a_consistent_rewrite_of_chain_and_sheet_is_exposed(repo: World) -> None:
    assert repo.seal().code == 0
    git(repo.root.parent, "add", "catalogues")
    git(repo.root.parent, "commit", "-q", "-m", "seal")
    assert repo.judge().code == 0
    fill(repo.root / TEMPLATE, repo.labels, value="high")
    new = sha256(repo.labels)

    def relabel(seals: list[dict[str, Any]]) -> list[dict[str, Any]]:
        seals[0]["files"]["heldout/labels.csv"] = new
        return seals

    rehash(repo.registry, relabel)  # the chain alone is consistent again...
    verify = repo.verify()
    assert verify.code == 2 and "UNANCHORED" in verify.out  # ...but the commit disagrees
    assert "heldout/labels.csv in its commit" in verify.out
    refused(repo.gate(), "UNANCHORED", "seal #0")


def test_in_git_a_seal_commit_rewritten_out_of_history_is_exposed(repo: World) -> None:
    assert repo.seal().code == 0
    git(repo.root.parent, "add", "catalogues")
    git(repo.root.parent, "commit", "-q", "--amend", "-m", "history rewritten")
    verify = repo.verify()
    assert verify.code == 2, verify.out
    assert "not an ancestor of HEAD" in verify.out


def test_outside_git_a_consistent_rewrite_is_not_detected(tmp_path: Path) -> None:
    """The limit ADR-0015 states: without an external anchor, rewriting the whole chain
    consistently (before any judge answer names it) is not detected."""
    world = fresh(tmp_path)
    assert world.seal().code == 0
    fill(world.root / TEMPLATE, world.labels, value="high")
    new = sha256(world.labels)

    def relabel(seals: list[dict[str, Any]]) -> list[dict[str, Any]]:
        seals[0]["files"]["heldout/labels.csv"] = new
        return seals

    rehash(world.registry, relabel)
    assert world.verify().code == 0


def test_in_git_a_rewrite_committed_on_top_is_exposed_by_the_registry_history(
    repo: World,
) -> None:
    """The forger commits new labels, points the seal at that commit, rehashes the chain
    and commits it: the commit checks pass, but the registry's own history shows the
    entry was rewritten rather than appended."""
    top = repo.root.parent
    assert repo.seal().code == 0
    git(top, "add", "catalogues")
    git(top, "commit", "-q", "-m", "seal")
    fill(repo.root / TEMPLATE, repo.labels, value="high")
    git(top, "commit", "-q", "-am", "labels, quietly")
    forged_commit = git(top, "rev-parse", "HEAD")
    new = sha256(repo.labels)

    def relabel(seals: list[dict[str, Any]]) -> list[dict[str, Any]]:
        seals[0]["files"]["heldout/labels.csv"] = new
        seals[0]["git_commit"] = forged_commit
        return seals

    rehash(repo.registry, relabel)
    git(top, "commit", "-q", "-am", "seal, again")
    verify = repo.verify()
    assert verify.code == 2, verify.out
    assert "UNANCHORED" in verify.out and "rewritten, not appended to" in verify.out


def test_in_git_committed_seals_removed_from_the_registry_are_exposed(repo: World) -> None:
    top = repo.root.parent
    assert repo.seal().code == 0
    second = fill(repo.root / TEMPLATE, repo.root / "heldout" / "labels-v2.csv", value="high")
    git(top, "add", "catalogues")
    git(top, "commit", "-q", "-m", "second sheet")
    assert repo.seal(second).code == 0
    git(top, "add", "catalogues")
    git(top, "commit", "-q", "-m", "two seals")
    verify = repo.verify()
    assert verify.code == 0, verify.out
    assert "seals again the held-out set of seal #0" in verify.out  # said, for a reviewer
    edit_registry(repo, lambda seals: seals.pop(1))  # the chain left is intact
    verify = repo.verify()
    assert (
        verify.code == 2 and "seal #1" in verify.out and "is gone from the registry" in verify.out
    )


def test_a_file_as_the_ledger_dir_is_refused_not_ignored(tmp_path: Path) -> None:
    """#30 hunt: ``--ledger-dir FILE`` sealed with no ledger checked, without a word."""
    world = fresh(tmp_path)
    (tmp_path / "notes.txt").write_text("mine")
    run = world.seal(None, "--ledger-dir", tmp_path / "notes.txt")
    assert run.code == 2 and "is a file; name the folder of ledgers" in run.err
    assert not world.registry.exists()
