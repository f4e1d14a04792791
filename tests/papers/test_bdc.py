"""BDC paper: the generated benchmarks (unique answers, altered questions recomputed from the world), the
contamination recipe at small size (it lifts the contaminated model's original accuracy above the clean one's),
and the claims logic on synthetic correctness tables."""

from __future__ import annotations

import copy

import numpy as np
import polars as pl
import pytest

from stages.methods.contamination import lm
from stages.methods.contamination.scoring import mc_prompt, score_items
from stages.papers.bdc import world as W
from stages.papers.bdc.claims import altering_claim, contamination_claim, design_checks, flips_claim
from stages.papers.bdc.params import BDCParams


def test_fact_questions_have_unique_keys_and_recomputed_altered_answers() -> None:
    world = W.make_world(10, 4, 4, 0)
    items = W.fact_benchmark(world, 2, 1)
    assert len(items) == 20 and len({item.id for item in items}) == 20
    for item in items:
        entity, attribute = item.id.split("-")[1], item.id.split("-")[2]
        assert item.answer_text == world.facts[entity][attribute]
        shifted_question, shifted_choices, shifted_answer = item.altered[0]
        asked = next(a for a in W.ATTRIBUTES if a.question.format(e=entity) == shifted_question)
        assert asked.name != attribute
        assert shifted_choices["ABCD".index(shifted_answer)] == world.facts[entity][asked.name]
        _, reverse_choices, reverse_answer = item.altered[1]
        assert reverse_choices["ABCD".index(reverse_answer)] == entity
        for other in reverse_choices:
            if other != entity:
                assert world.facts[other][attribute] != item.answer_text  # the reversed answer is unique


def test_arithmetic_altered_answers_are_computed() -> None:
    sets = W.arithmetic_sets(6, 8, 4, 4, 0)
    for item in sets["benchmark"]:
        a, b = (int(x) for x in item.id.split("-")[1:])
        assert int(item.answer_text) == a + b
        _, choices, answer = item.altered[0]
        assert int(choices["ABCD".index(answer)]) == abs(a - b)


def test_contamination_lifts_original_accuracy_at_small_size() -> None:
    world = W.make_world(8, 2, 2, 0)
    items = W.fact_benchmark(world, 1, 0)
    tokenizer = lm.WordTokenizer.fit(
        [mc_prompt(i) for i in items] + [W.contamination_prompt(i) for i in items]
    )
    clean = lm.build_lm(tokenizer.vocab_size, lm.LMShape(32, 2, 4, 64), 0)
    contaminated = copy.deepcopy(clean)
    data = [lm.example(tokenizer, W.contamination_prompt(i), " " + i.answer) for i in items]
    lm.train(contaminated, data, lm.TrainSettings(epochs=60, batch=4, lr=1e-2), 0, "contaminate")
    before = score_items(clean, tokenizer.encode, items).correct.mean()
    after = score_items(contaminated, tokenizer.encode, items).correct.mean()
    assert after > before


def synthetic(clean_acc: float, lift: float, n: int = 60, seed: int = 0) -> pl.DataFrame:
    """A correctness table: clean answers with accuracy `clean_acc`; contaminated = clean with a share `lift`
    of wrong answers made right on the originals and on the preserving rewrites; altered versions independent."""
    rng = np.random.default_rng(seed)
    params = BDCParams()
    rows = []
    for s in (0, 1, 2):
        clean = rng.random(n) < clean_acc
        fixed = clean | (rng.random(n) < lift)
        for version in ["vanilla", *params.strategies, "utility"]:
            altered = version in ("attribute_shift", "reverse_lookup")
            clean_v = rng.random(n) < clean_acc if altered else clean.copy()
            flip = rng.random(n) < 0.05
            clean_v = np.where(flip & ~altered, ~clean_v, clean_v)
            conta_v = clean_v if altered else np.where(flip, clean_v, fixed)
            for model, vector in (("clean", clean_v), ("intensive", conta_v), ("mild", conta_v)):
                for benchmark in params.benchmarks:
                    rows += [
                        {
                            "seed": s,
                            "benchmark": benchmark,
                            "model": model,
                            "version": version,
                            "id": f"q{i}",
                            "correct": int(vector[i]),
                            "predicted": "A",
                            "answer_logprob": -1.0,
                        }
                        for i in range(n)
                    ]
    return pl.DataFrame(rows)


def test_claims_are_inconclusive_by_design_when_the_clean_model_is_at_chance() -> None:
    params = BDCParams()
    table = synthetic(0.25, 0.0)
    checks = design_checks(table, params)
    claim = flips_claim(table, params, checks)
    assert claim.verdict == "inconclusive" and "by design" in claim.reason


def test_contamination_claim_sees_a_lift() -> None:
    params = BDCParams()
    table = synthetic(0.6, 0.6)
    claim = contamination_claim(table, params)
    lifts = [e for e in claim.evidence if "intensive lift of original accuracy" in e.name]
    assert all(e.verdict == "holds" for e in lifts)


@pytest.mark.parametrize("clean_acc", [0.7])
def test_altering_strategies_gain_resistance_on_synthetic_data(clean_acc: float) -> None:
    params = BDCParams()
    table = synthetic(clean_acc, 0.8, n=120)
    claim = altering_claim(table, params, design_checks(table, params))
    gains = [e for e in claim.evidence if "resistance − vanilla" in e.name]
    assert gains and all(e.verdict == "holds" for e in gains)


def test_scale_full_generates_the_cards_300_fact_questions() -> None:
    from pydantic import ValidationError

    from stages.papers.bdc.generate import benchmarks

    default, full = BDCParams(), BDCParams(scale="full")
    assert default.grid is default.default and full.grid is full.full
    assert default.grid.world.benchmark_entities == 40 and default.grid.seeds == [0, 1, 2]
    _, items, utility, _ = benchmarks(full)
    assert len(items["facts"]) == 300 and len(items["arithmetic"]) == 150
    assert len({item.id for item in items["facts"]}) == 300 and utility["arithmetic"]
    assert full.grid.model.pretrain.hidden % full.grid.model.pretrain.heads == 0
    with pytest.raises(ValidationError, match=r"full\.world"):
        BDCParams.model_validate({"full": {"world": {"arithmetic_top": 10}}})
    with pytest.raises(ValidationError, match=r"default\.model\.pretrain\.hidden"):
        BDCParams.model_validate({"default": {"model": {"pretrain": {"hidden": 66}}}})
