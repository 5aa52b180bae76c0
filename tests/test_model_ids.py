"""One pinned-model rule for the judge, the gate and the reports (ADR-0023).

Source of the expected values: the Claude API models table (platform.claude.com, "Models
overview", checked 2026-12): from the 4.6 generation on the dateless id is the pinned API
id; earlier generations pin with a date suffix and their dateless names are aliases.
"""

from __future__ import annotations

import pandas as pd
import pytest

import evalkit.gate._identity as gate_identity
import evalkit.judge._pricing as judge_pricing
from evalkit import model_ids
from evalkit.catalogue import Catalogue, load
from evalkit.gate import evaluate
from tests.factory import SHIPPED, agreeing_ledger

PINNED_IDS = [
    "claude-opus-4-6",
    "claude-sonnet-4-6",
    "claude-opus-4-7",
    "claude-opus-4-8",
    "claude-opus-5",
    "claude-sonnet-5",
    "claude-opus-5-5",
    "claude-sonnet-5-5",
    "claude-haiku-5-5",
    "claude-sonnet-4-5-20250929",
    "claude-opus-4-5-20251101",
    "claude-haiku-4-5-20251001",
    "claude-opus-4-1-20250805",
    "claude-3-5-sonnet-20241022",
]
FLOATING_IDS = [
    "claude-sonnet-4-5",  # dateless, before 4.6: an alias
    "claude-opus-4-1",
    "claude-haiku-4-5",
    "claude-sonnet-4",
    "claude-3-7-sonnet-latest",  # -latest on any generation
    "claude-sonnet-4-6-latest",
    "claude-sonnet-4-5-20251399",  # no such date
    "claude-sonnet-4-5-٢٠٢٥٠٩٢٩",  # Arabic-Indic digits are no date
    "claude-sonnet-٤-٦",
    "claude-sonnet-4-5-20250929\n",  # a trailing newline is no part of an id ($ allowed it)
    "claude-sonnet-4-6\n",
    "claude-mythos-preview",  # unknown shapes
    "sonnet",
    "",
]


@pytest.mark.parametrize("model", PINNED_IDS)
def test_current_ids_are_pinned(model: str) -> None:
    assert model_ids.is_pinned(model)
    assert not model_ids.is_floating_alias("anthropic", model)


@pytest.mark.parametrize("model", FLOATING_IDS)
def test_alias_shapes_are_not_pinned(model: str) -> None:
    assert not model_ids.is_pinned(model)
    assert model_ids.is_floating_alias("anthropic", model)


def test_other_backends_float_only_on_latest() -> None:
    assert model_ids.is_pinned("qwen2.5-7b-instruct", "openai")
    assert not model_ids.is_pinned("llama3:latest", "openai")
    assert not model_ids.is_pinned(None, "openai")


def test_judge_and_gate_import_the_one_function() -> None:
    assert judge_pricing.is_pinned is model_ids.is_pinned
    assert gate_identity.is_floating_alias is model_ids.is_floating_alias


@pytest.fixture(scope="module")
def shipped() -> tuple[Catalogue, pd.DataFrame]:
    cat = load(SHIPPED)
    return cat, agreeing_ledger(cat)


def _as(ledger: pd.DataFrame, model: str) -> pd.DataFrame:
    return ledger.assign(
        judge=f"anthropic:{model}", backend="anthropic", model=model, response_model=model
    )


@pytest.mark.parametrize(
    "model", ["claude-sonnet-4-6", "claude-opus-4-6", "claude-sonnet-4-5-20250929"]
)
def test_an_oracle_under_a_pinned_id_passes_the_gate_on_the_shipped_catalogue(
    shipped: tuple[Catalogue, pd.DataFrame], model: str
) -> None:
    cat, ledger = shipped
    verdict = evaluate(_as(ledger, model), cat.labels, cat, n_resamples=200)
    assert verdict.passed, verdict.to_json(indent=1)


@pytest.mark.parametrize("model", ["claude-sonnet-4-5", "claude-3-7-sonnet-latest"])
def test_an_oracle_under_an_alias_fails_as_floating(
    shipped: tuple[Catalogue, pd.DataFrame], model: str
) -> None:
    cat, ledger = shipped
    verdict = evaluate(_as(ledger, model), cat.labels, cat, n_resamples=200)
    assert not verdict.passed
    for dim in verdict.dimensions.values():
        assert "floating_alias" in {r.code for r in dim.reasons if r.severity == "hard_fail"}
