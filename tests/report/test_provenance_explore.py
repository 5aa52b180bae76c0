"""Provenance survives replay (the ledger's judges on every page) and exploratory runs
(labelled, only the dimensions asked for, kappa against the threshold, never a badge)."""

from __future__ import annotations

import dataclasses
import hashlib
import re
from pathlib import Path

import pandas as pd
import pytest

import evalkit.report as rp
from evalkit.catalogue import Catalogue
from evalkit.cli import main
from evalkit.errors import CatalogueError
from evalkit.gate import evaluate, join_pairs
from evalkit.judge import Ledger, judge_cases
from evalkit.report._exploration import EXPLORATORY, exploration_banner
from evalkit.report._panels import judge_note
from evalkit.report._provenance import (
    JUDGE_COLUMNS,
    answering_judges,
    judges_in_ledger,
    judges_table,
    ledger_frame,
)
from evalkit.report._run import run_studies
from tests.report.world import build_world

REPO = Path(__file__).resolve().parents[2]
MODEL = "claude-sonnet-4-5-20250929"
FAST = {"*": {"n_resamples": 30, "n_boot": 30, "max_examples": 1}}


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Catalogue:
    return build_world(tmp_path_factory.mktemp("world") / "catalogues")


def _row(key: str, judge: str, at: str, **extra: object) -> dict[str, object]:
    row: dict[str, object] = {
        "request_key": key, "case_id": "c", "dimension": "self_harm", "judge": judge,
        "backend": judge.split(":")[0], "model": judge.split(":")[-1], "response_model": None,
        "constants_hash": "k" * 64, "framing_hash": "f" * 64, "created_at": at,
        "params": {"max_tokens": 1024, "temperature": None},
    }  # fmt: skip
    row.update(extra)
    return row


# --- judges in a ledger -------------------------------------------------------------------


def test_judges_in_ledger_one_row_per_judge_with_counts_params_and_times() -> None:
    frame = pd.DataFrame(
        [
            _row("b1", "baseline", "2026-12-01T10:00:00"),
            _row("b1", "baseline", "2026-12-01T10:00:00", dimension="escalation"),
            _row("a1", f"anthropic:{MODEL}", "2026-12-01T09:00:00", response_model=MODEL,
                 params={"max_tokens": 2048, "temperature": 0.0}),
            _row("a2", f"anthropic:{MODEL}", "2026-12-01T11:30:00", response_model=MODEL,
                 params={"max_tokens": 2048, "temperature": 1.0}, constants_hash="x" * 64),
            _row("a3", f"anthropic:{MODEL}", "2026-12-01T12:00:00", response_model="other"),
        ]
    )  # fmt: skip
    judges = judges_in_ledger(frame)
    assert list(judges.columns) == list(JUDGE_COLUMNS)
    assert list(judges["judge"]) == [f"anthropic:{MODEL}", "baseline", f"anthropic:{MODEL}"]
    first, base, other = (judges.iloc[i] for i in range(3))
    assert (first["rows"], first["requests"]) == (2, 2)
    assert first["response_model"] == MODEL and other["response_model"] == "other"
    assert first["temperature"] == (0.0, 1.0) and first["max_tokens"] == (2048,)
    assert first["constants_hashes"] == ("k" * 64, "x" * 64)
    assert (first["first_at"], first["last_at"]) == ("2026-12-01T09:00:00", "2026-12-01T11:30:00")
    assert (base["rows"], base["requests"]) == (2, 1)
    assert base["response_model"] is None and base["temperature"] == (None,)
    without_params = judges_in_ledger(frame.drop(columns="params"))
    assert without_params["temperature"].tolist() == [(), (), ()]
    assert judges_in_ledger(frame.iloc[0:0]).empty
    with pytest.raises(ValueError, match="created_at"):
        judges_in_ledger(frame.drop(columns="created_at"))


def test_the_deterministic_baseline_shows_no_times_a_model_judge_does() -> None:
    """A page rendered from a fresh baseline ledger is the same in every clone (ADR-0020);
    a model judge keeps when it ran, which is provenance."""
    frame = pd.DataFrame(
        [_row("b", "baseline", "2026-12-01T10:00:00"),
         _row("a", f"anthropic:{MODEL}", "2026-12-01T12:00:00")]
    )  # fmt: skip
    html = judges_table(judges_in_ledger(frame)).html
    assert "2026-12-01 12:00" in html and "2026-12-01 10:00" not in html
    assert "deterministic" in html
    assert ">Rows<" in html
    # A study page leaves the ledger's counts to the index: later studies still add rows.
    page = judges_table(judges_in_ledger(frame), counts=False).html
    assert ">Rows<" not in page and ">Requests<" not in page and "on the index" in page


def test_answering_judges_follow_the_replay_filter() -> None:
    frame = pd.DataFrame(
        [_row("b", "baseline", "2026-12-01T10:00"), _row("a", f"anthropic:{MODEL}", "2026-12-01")]
    )
    judges = judges_in_ledger(frame)
    assert len(answering_judges("replay", judges)) == 2
    named = answering_judges(f"replay:anthropic:{MODEL}", judges)
    assert list(named["judge"]) == [f"anthropic:{MODEL}"]
    assert list(answering_judges("baseline", judges)["judge"]) == ["baseline"]


def test_a_replay_note_names_the_recorded_model_and_parameters() -> None:
    frame = pd.DataFrame(
        [_row("a", f"anthropic:{MODEL}", "2026-12-01", response_model=MODEL,
              params={"max_tokens": 2048, "temperature": 0.0})]
    )  # fmt: skip
    note = judge_note("replay", judges=judges_in_ledger(frame)).html
    assert f"Judge: anthropic:{MODEL} (answers replayed from the ledger)" in note
    assert "backend anthropic" in note and "temperature 0.0" in note and "max tokens 2048" in note
    baseline = judges_in_ledger(pd.DataFrame([_row("b", "baseline", "2026-12-01")]))
    assert "offline floor, not a production judge" in judge_note("replay", judges=baseline).html


def test_ledger_frame_reads_params_and_a_missing_ledger_is_empty(
    world: Catalogue, tmp_path: Path
) -> None:
    assert ledger_frame(tmp_path / "none.sqlite").empty
    ledger = tmp_path / "l.sqlite"
    rows = judge_cases(world, world.split("calibration")[:3], ["self_harm"], judge="baseline",
                       ledger=ledger, progress=False)  # fmt: skip
    frame = ledger_frame(ledger)
    assert len(frame) == len(rows) and frame["params"].map(lambda p: "max_tokens" in p).all()
    (judge,) = judges_in_ledger(frame).to_dict(orient="records")
    assert judge["judge"] == "baseline" and judge["rows"] == len(rows)
    assert judge["constants_hashes"] == (world.constants_hash,)


# --- exploration --------------------------------------------------------------------------


def test_a_run_is_exploratory_for_another_rubric_unratified_constants_or_explore(
    world: Catalogue,
) -> None:
    assert not rp.exploration(world).exploratory
    assert not rp.exploration(world, {"self_harm": "v3"}).exploratory  # the version in force
    v2 = rp.exploration(world, {"self_harm": "v2"}, dimensions=["self_harm"])
    assert v2.exploratory and v2.dimensions == ("self_harm",)
    assert v2.reasons == ("self_harm rubric v2 is studied; v3 is in force",)
    assert rp.exploration(world, explore=True).exploratory
    rule = world.constants.gate.model_copy(update={"threshold": 0.05})
    candidate = dataclasses.replace(
        world, constants=world.constants.model_copy(update={"gate": rule})
    )
    reasons = rp.exploration(candidate).reasons
    assert len(reasons) == 1 and "not the ratified ones" in reasons[0]


@pytest.mark.parametrize(
    ("asked", "field", "named"),
    [({"ghost": "v1"}, "dimension", "ghost"), ({"self_harm": "v9"}, "version", "self_harm v9")],
)
def test_an_unknown_dimension_or_version_is_a_named_problem(
    world: Catalogue, asked: dict[str, str], field: str, named: str
) -> None:
    with pytest.raises(CatalogueError) as caught:
        rp.exploration(world, asked)
    (problem,) = caught.value.problems
    assert problem.file.endswith("rubrics") and problem.field == field
    assert problem.record == next(iter(asked)) and named in problem.message


def _self_harm_rows(world: Catalogue, ledger: Path, asked: dict[str, str]) -> pd.DataFrame:
    return judge_cases(world, world.split("calibration"), ["self_harm"], judge="baseline",
                       ledger=ledger, rubric_versions=asked, progress=False)  # fmt: skip


def test_the_exploratory_verdict_and_the_agreement_table_count_the_same_pairs(
    world: Catalogue, tmp_path: Path
) -> None:
    asked = {"self_harm": "v1"}
    rows = _self_harm_rows(world, tmp_path / "l.sqlite", asked)
    pairs = join_pairs(rows, world.labels, world)
    table = rp.agreement_frame(pairs[pairs["dimension"] == "self_harm"], world.constants.bins,
                               threshold=0.6, n_resamples=20)  # fmt: skip
    in_force = evaluate(rows, world.labels, world, n_resamples=20).dimensions["self_harm"]
    assert in_force.n == 0  # the bug: the rubric in force sets every v1 row aside
    explored = evaluate(rows, world.labels, rp.gate_view(world, asked), n_resamples=20)
    verdict = explored.dimensions["self_harm"]
    assert verdict.n == int(table["n"].iloc[0]) > 0
    assert verdict.kappa == pytest.approx(float(table["kappa"].iloc[0]), abs=5e-4)
    assert explored.hashes["constants_hash"] == world.constants_hash
    assert rp.gate_view(world, {"self_harm": "v3"}) is world


def test_exploratory_panels_show_no_badge_and_only_the_dimensions_asked_for(
    world: Catalogue, tmp_path: Path
) -> None:
    asked = {"self_harm": "v2"}
    rows = _self_harm_rows(world, tmp_path / "l.sqlite", asked)
    verdict = evaluate(rows, world.labels, rp.gate_view(world, asked), n_resamples=20)
    exploring = rp.exploration(world, asked, dimensions=["self_harm"])
    v = verdict.dimensions["self_harm"]
    threshold = world.constants.gate.threshold
    panels = [
        rp.overall_verdict(verdict, threshold, exploring).html,
        rp.verdict_overview_table(rp.verdict_overview(verdict), exploring).html,
        rp.verdict_panel(v, "adr/", exploring).html,
    ]
    for markup in panels:
        assert "ek-badge ek-pass" not in markup and "ek-badge ek-fail" not in markup
        assert "ek-row-fail" not in markup and "ek-row-pass" not in markup
    reading = "would reach the threshold" if v.kappa >= threshold else "would not reach"
    assert reading in panels[1] and reading in panels[2]
    assert "self_harm" in panels[1] and "escalation" not in panels[1]
    gate = rp.verdict_overview_table(rp.verdict_overview(verdict)).html
    assert "ek-badge ek-fail" in gate and "escalation" in gate
    banner = exploration_banner(exploring).html
    assert EXPLORATORY in banner and "self_harm rubric v2 is studied" in banner
    assert exploration_banner(rp.exploration(world)).html == ""


def test_an_exploratory_page_says_so_in_its_parameters_and_names_unstudied_dimensions(
    world: Catalogue, tmp_path: Path
) -> None:
    """#28: under the "Exploratory" banner the parameters read "Explore: no" (the flag
    was not given; the rubric version made the run exploratory), and the index listed
    the dimensions the run did not ask for as "κ n/a · 0 pairs"."""
    asked = {"self_harm": "v2"}
    params = {"rubric_versions": asked, "explore": False, "dimensions": ["self_harm"]}
    header = rp.header("Study", "Lede.", catalogue=world, judge="baseline", parameters=params)
    text = re.sub(r"<[^>]+>", " ", header.html)
    assert not re.search(r"Explore\s+(no|yes)", text)  # the bare flag is gone
    assert re.search(r"Exploratory\s+yes: self_harm rubric v2 is studied; v3 is in force", text)
    plain = rp.header("Study", "Lede.", catalogue=world, judge="baseline",
                      parameters={"explore": False})  # fmt: skip
    assert re.search(r"Exploratory\s+no \(gate evidence\)", re.sub(r"<[^>]+>", " ", plain.html))

    rows = _self_harm_rows(world, tmp_path / "l.sqlite", asked)
    verdict = evaluate(rows, world.labels, rp.gate_view(world, asked), n_resamples=20)
    exploring = rp.exploration(world, asked, dimensions=["self_harm"])
    lines = dict(rp.gate_headline(verdict, exploring).lines)
    assert lines["Medical escalation"] == lines["Faithfulness to sources"] == "not studied"
    assert re.fullmatch(r"κ \S+ .* · [1-9]\d* pairs", lines["Self-harm"])
    gating = rp.exploration(world, dimensions=["self_harm"])
    gate_run = dict(rp.gate_headline(verdict, gating).lines)
    assert gate_run["Medical escalation"] == "not studied · FAIL"  # a gate run still fails it


# --- the command --------------------------------------------------------------------------


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    build_world(tmp_path / "catalogues")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _study(*args: str) -> int:
    return main(["study", "--catalogue", "catalogues", "--adr-dir", str(REPO / "docs" / "adr"),
                 "--notebooks", str(REPO / "notebooks"), *args])  # fmt: skip


@pytest.mark.parametrize(("value", "named"), [("ghost=v1", "ghost"), ("self_harm=v9", "v9")])
def test_study_refuses_an_unknown_rubric_with_exit_2(
    root: Path, value: str, named: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _study("--out", "out", "--rubric", value) == 2
    err = capsys.readouterr().err
    assert named in err and "rubrics" in err
    assert not (root / "out" / "calibration_study.html").exists()


def test_study_refuses_a_malformed_rubric_with_exit_2(root: Path) -> None:
    with pytest.raises(SystemExit) as caught:
        _study("--out", "out", "--rubric", "self_harm")
    assert caught.value.code == 2


def _section(page: str, caption: str) -> str:
    start = page.index(caption)
    return page[start : page.index("</table>", start)]


@pytest.mark.slow
def test_an_exploratory_run_is_labelled_on_every_page_and_never_shows_a_gate_badge(
    root: Path,
) -> None:
    summary = run_studies(
        out="out", studies=["calibration_study", "heldout_revalidation"],
        notebooks=REPO / "notebooks", adr_dir=REPO / "docs" / "adr", log=lambda m: None,
        rubric_versions={"self_harm": "v1"}, explore=True,
        overrides={**FAST, "calibration_study": {"dimensions": ["self_harm"]}},
    )  # fmt: skip
    assert summary.ok, [r.error for r in summary.results]
    assert all(r.exploration.exploratory for r in summary.results)
    pages = {p.stem: p.read_text(encoding="utf-8") for p in (root / "out").glob("*.html")}
    assert set(pages) == {"index", "calibration_study", "heldout_revalidation"}
    for name, text in pages.items():
        assert EXPLORATORY in text, name
        assert "self_harm rubric v1 is studied; v3 is in force" in text, name
    calibration = pages["calibration_study"]
    assert "ek-badge ek-pass" not in calibration and "ek-badge ek-fail" not in calibration
    assert "no_pairs" not in calibration and "Overall:" not in calibration
    overview = _section(calibration, "Kappa per dimension asked for")
    assert "self_harm" in overview and "escalation" not in overview
    assert re.search(r"would (not )?reach the threshold", overview)
    verdict_pairs = re.search(rf"{EXPLORATORY}: </strong>kappa [^;]*?(\d+) pairs", calibration)
    agreement = _section(calibration, "Agreement statistics")
    assert verdict_pairs is not None
    assert re.search(rf'<td class="ek-cell ek-num"[^>]*>{verdict_pairs[1]}</td>', agreement)
    assert (root / "out" / "adr" / "0017-exploratory-studies.html").is_file()


def _as_anthropic(source: Path, target: Path) -> int:
    """Copy every request of ``source`` into ``target`` as if an Anthropic model had
    answered it (same content keys, so ``replay`` finds them), through ``Ledger.record``."""
    n = 0
    with Ledger(source, create=False) as src, Ledger(target) as dst:
        for rec in src.records():
            key = hashlib.sha256(f"anthropic|{rec['request_key']}".encode()).hexdigest()
            params = {**rec["params"], "temperature": 0.0, "max_tokens": 2048}
            dst.record({**rec, "request_key": key, "judge": f"anthropic:{MODEL}",
                        "backend": "anthropic", "model": MODEL, "response_model": MODEL,
                        "params": params, "cost_usd": 0.001})  # fmt: skip
            n += 1
    return n


@pytest.mark.slow
def test_a_replayed_anthropic_ledger_names_its_model_on_the_index_and_every_page(
    root: Path,
) -> None:
    # The provenance block is one function on every page; three kinds of page (a verdict,
    # per-turn judging, rubric versions) keep the two full runs short.
    some = ("calibration_study", "onset_turns", "rubric_constructs")
    first = run_studies(out="first", ledger="led/baseline.sqlite", log=lambda m: None,
                        notebooks=REPO / "notebooks", adr_dir=REPO / "docs" / "adr",
                        overrides=FAST, studies=some)  # fmt: skip
    assert first.ok, [r.error for r in first.results]
    recorded = _as_anthropic(root / "led" / "baseline.sqlite", root / "led" / "claude.sqlite")
    assert recorded > 0
    only = [arg for name in some for arg in ("--only", name)]
    assert _study("--judge", "replay", "--ledger", "led/claude.sqlite", "--out", "out", *only) == 0
    pages = {p.stem: p.read_text(encoding="utf-8") for p in (root / "out").glob("*.html")}
    assert set(pages) == {"index", *some}
    for name, text in pages.items():
        assert MODEL in text, name
        assert f"anthropic:{MODEL}" in text and "Judges recorded in the ledger" in text, name
        assert "Judge: replay" not in text, name
        assert not re.search(r"<code[^>]*>replay</code></td>", text), name
        assert "max tokens" in text.lower() or "Max tokens" in text, name
        assert EXPLORATORY not in text, name
    index = pages["index"]
    cell = r"<td[^>]*>"
    assert re.search(f"{cell}anthropic:{MODEL}</td>|<code[^>]*>anthropic:{MODEL}</code>", index)
    assert re.search(rf"{cell}\d+</td>{cell}{recorded}</td>", index)
