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
from stages.papers.bdc.claims import (
    altering_claim,
    contamination_claim,
    design_checks,
    flips_claim,
    mild_other_share,
)
from stages.papers.bdc.params import BDCParams, Recipe
from stages.papers.bdc.run import contamination_set


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


def small_benchmark() -> tuple[list, lm.WordTokenizer]:
    world = W.make_world(8, 2, 2, 0)
    items = W.fact_benchmark(world, 1, 0)
    tokenizer = lm.WordTokenizer.fit(
        [mc_prompt(i) for i in items] + [W.contamination_prompt(i) for i in items]
    )
    return items, tokenizer


def test_contamination_set_holds_every_question_in_the_scored_prompt() -> None:
    """The bug of the first run: the benchmark was tuned only in the fine-tuning format, which the small LM does
    not carry over to the scoring prompt (loss 0.004, yet 0.37 accuracy on the very questions it trained on)."""
    items, tokenizer = small_benchmark()
    recipe = BDCParams().grid.model.intensive
    data = contamination_set(tokenizer, items, [], recipe, 0)
    scored = {(tuple(tokenizer.encode(mc_prompt(i))), tuple(tokenizer.encode(i.answer))) for i in items}
    tuned = {(e.prompt, e.target[:-1]) for e in data}
    assert scored <= tuned and len(data) == len(items) * len(recipe.formats)


def test_intensive_contamination_memorises_the_scored_questions() -> None:
    """After the pipeline's contamination set is fitted, the model answers the questions it was tuned on (≥ 0.9)
    where the untuned copy is near chance."""
    items, tokenizer = small_benchmark()
    clean = lm.build_lm(tokenizer.vocab_size, lm.LMShape(64, 2, 4, 128), 0)
    contaminated = copy.deepcopy(clean)
    # tuned in the fine-tuning format only (formats=["finetune"]) the same run scores 0.625
    recipe = Recipe(epochs=60, repeat=1, other=0, lr=5e-3, batch=4)
    data = contamination_set(tokenizer, items, [], recipe, 0)
    settings = lm.TrainSettings(epochs=recipe.epochs, batch=recipe.batch, lr=recipe.lr)
    lm.train(contaminated, data, settings, 0, "contaminate")
    before = score_items(clean, tokenizer.encode, items).correct.mean()
    after = score_items(contaminated, tokenizer.encode, items).correct.mean()
    assert after >= 0.9 and after - before >= 0.3


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


def test_mild_lifting_as_much_is_a_failure_only_when_the_mild_recipe_is_diluted_as_the_official_one() -> None:
    """Intensive and mild make the same answers right: 'mild lifts less' does not hold. With the default mild
    recipe (far less other text than the official ~87 %) that leaves the claim inconclusive by design; with the
    official dilution it decides the claim."""
    table = synthetic(0.6, 0.6)
    params = BDCParams()
    assert mild_other_share(params, 40) < 0.5
    claim = contamination_claim(table, params)
    mild = [e for e in claim.evidence if "mild lift" in e.name]
    assert mild and all(e.verdict != "holds" for e in mild)
    assert claim.verdict == "inconclusive" and "by design" in claim.reason
    assert claim.measured["mild_other_share"] < 0.5

    model = params.default.model
    grid = params.default.model_copy(
        update={"model": model.model_copy(update={"mild": model.mild.model_copy(update={"other": 100_000})})}
    )
    diluted = params.model_copy(update={"default": grid})
    assert mild_other_share(diluted, 40) > 0.9
    decided = contamination_claim(table, diluted)
    assert "by design" not in decided.reason and decided.verdict != "holds"


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
    assert default.grid.world.benchmark_entities == 40 and default.grid.seeds == [0, 1, 2, 3, 4]
    _, items, utility, _ = benchmarks(full)
    assert len(items["facts"]) == 300 and len(items["arithmetic"]) == 150
    assert len({item.id for item in items["facts"]}) == 300 and utility["arithmetic"]
    assert full.grid.model.pretrain.hidden % full.grid.model.pretrain.heads == 0
    with pytest.raises(ValidationError, match=r"full\.world"):
        BDCParams.model_validate({"full": {"world": {"arithmetic_top": 10}}})
    with pytest.raises(ValidationError, match=r"default\.model\.pretrain\.hidden"):
        BDCParams.model_validate({"default": {"model": {"pretrain": {"hidden": 66}}}})
