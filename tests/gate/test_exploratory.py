"""``evaluate(..., rubric_versions=...)``: the exploratory verdict of a rubric variant
(#28, ADR-0017), read on the rows judged under it, marked, and never a launch verdict."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from evalkit.catalogue import Catalogue
from evalkit.errors import CatalogueError
from evalkit.gate import evaluate
from evalkit.gate._view import gate_view
from tests.factory import build_balanced

ASKED = {"self_harm": "v1"}


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> tuple[Catalogue, pd.DataFrame]:
    """The balanced catalogue and a ledger agreeing with it, its self-harm rows judged
    under rubric v1 (v3 is in force) and only those."""
    cat, ledger = build_balanced(tmp_path_factory.mktemp("explore") / "catalogues")
    v1 = ledger[ledger["dimension"] == "self_harm"].copy()
    v1["rubric_hash"] = cat.rubrics[("self_harm", "v1")].content_hash(cat.constants.bins)
    return cat, v1


def test_the_variant_is_read_on_its_own_rows_and_marked_exploratory(
    world: tuple[Catalogue, pd.DataFrame],
) -> None:
    cat, v1 = world
    gate = evaluate(v1, cat.labels, cat, n_resamples=20)
    assert gate.dimensions["self_harm"].n == 0  # the gate sets every v1 row aside
    verdict = evaluate(v1, cat.labels, cat, n_resamples=20, rubric_versions=ASKED)
    assert list(verdict.dimensions) == ["self_harm"]  # the dimension varied, no other
    sh = verdict.dimensions["self_harm"]
    assert sh.n == 80 and sh.kappa == pytest.approx(1.0)
    assert verdict.exploratory == ("self_harm rubric v1 is studied; v3 is in force",)
    assert verdict.overall == "PASS" and not verdict.passed  # never a launch verdict
    (note,) = [r for r in sh.reasons if r.code == "exploratory"]
    assert note.severity == "note" and note.adr == "adr-0017"
    assert "not gate evidence" in note.message
    assert repr(verdict).startswith("GateVerdict: exploratory, not gate evidence (would PASS)")
    html = verdict._repr_html_()
    assert "Exploratory verdict" in html and "ek-badge ek-pass" not in html
    assert verdict.to_dict()["exploratory"] == list(verdict.exploratory)
    # the same reading as the study notebooks' gate_view, which it reuses
    viewed = evaluate(v1, cat.labels, gate_view(cat, ASKED), n_resamples=20)
    assert viewed.dimensions["self_harm"].kappa == sh.kappa
    assert viewed.dimensions["self_harm"].n == sh.n


def test_the_versions_in_force_give_the_gates_own_verdict(
    world: tuple[Catalogue, pd.DataFrame],
) -> None:
    cat, _ = world
    _, ledger = build_balanced(Path(cat.root).parent / "again" / "catalogues")
    in_force = dict(cat.constants.rubrics_in_force)
    verdict = evaluate(ledger, cat.labels, cat, n_resamples=20, rubric_versions=in_force)
    assert verdict.passed and verdict.exploratory == ()
    assert list(verdict.dimensions) == list(cat.constants.gated_dimensions)
    assert "exploratory" not in verdict.to_dict()  # evalkit gate --json is unchanged


def test_a_variant_needs_the_catalogue_and_a_rubric_it_holds(
    world: tuple[Catalogue, pd.DataFrame],
) -> None:
    cat, v1 = world
    with pytest.raises(ValueError, match="needs the loaded Catalogue"):
        evaluate(v1, cat.labels, cat.constants, rubric_versions=ASKED)
    with pytest.raises(CatalogueError, match="no rubric self_harm v9"):
        evaluate(v1, cat.labels, cat, rubric_versions={"self_harm": "v9"})
