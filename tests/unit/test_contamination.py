"""The contamination method: fidelity and resistance on hand vectors, the strategies (every one keeps the key;
the two official rule-based ones exactly), batched MC scoring against the official loop, and the own-data
command's checks (`icml25 bdc-assess`)."""

from __future__ import annotations

import json
import random

import numpy as np
import polars as pl
import pytest
import torch

from stages.core.errors import DataValidationError
from stages.methods.contamination import lm
from stages.methods.contamination.items import ItemError, MCItem, check_item
from stages.methods.contamination.metrics import as_vector, assess, fidelity, resistance
from stages.methods.contamination.own_data import assess_files, read_correctness, rewrite_file
from stages.methods.contamination.scoring import OFFICIAL_PROMPT, mc_prompt, score_items, score_items_loop
from stages.methods.contamination.strategies import IRRELEVANT_PREFIX, STRATEGIES, apply_strategy, pools_of


def item(index: int = 0, answer: str = "B") -> MCItem:
    return MCItem(
        f"q{index}",
        f"What is the capital of Kel Dor number {index}?",
        (f"Ardmoor{index}", f"Belcrest{index}", f"Corvale{index}", f"Dunmere{index}"),
        ("A", "B", "C", "D"),
        answer,
        "capital",
        (
            (f"Which animal is the symbol of Kel Dor {index}?", ("otter", "lynx", "heron", "wolf"), "C"),
            (
                f"Which country has Belcrest{index} as its capital?",
                ("Kel Dor", "Sa Ri", "Bo Nu", "Ta Vel"),
                "A",
            ),
        ),
    )


# ------------------------------------------------------------------------------------------ metrics


def test_equal_accuracy_with_fidelity_below_one() -> None:
    original = np.array([1, 1, 0, 0, 1, 0, 1, 0])
    updated = np.array([0, 1, 1, 0, 1, 0, 0, 1])  # two questions lost, two gained: accuracy unchanged
    assert original.mean() == updated.mean()
    assert fidelity(original, updated) == pytest.approx(4 / 8)


def test_vanilla_fidelity_is_one_and_resistance_is_its_baseline() -> None:
    clean = np.array([1, 0, 1, 0, 1])
    contaminated = np.array([1, 1, 1, 1, 1])
    result = assess(clean, clean, contaminated, contaminated, resamples=200)
    assert result.fidelity == 1.0 and result.fidelity_interval == (1.0, 1.0)
    assert result.resistance == pytest.approx(3 / 5) == result.vanilla_resistance
    assert result.resistance_gain == 0.0


def test_resistance_counts_agreement_not_accuracy() -> None:
    clean_updated = np.array([1, 0, 0, 1])
    contaminated_updated = np.array([0, 1, 0, 1])
    assert resistance(clean_updated, contaminated_updated) == pytest.approx(0.5)


def test_intervals_contain_the_estimate_and_stay_in_range() -> None:
    rng = np.random.default_rng(0)
    co, cu, xu, xo = (rng.integers(0, 2, 200) for _ in range(4))
    result = assess(co, cu, xu, xo, resamples=500)
    for value, (low, high) in (
        (result.fidelity, result.fidelity_interval),
        (result.resistance, result.resistance_interval),
    ):
        assert 0 <= low <= value <= high <= 1
    assert result.resistance_gain_interval[0] <= result.resistance_gain <= result.resistance_gain_interval[1]


def test_bad_vectors_are_refused() -> None:
    with pytest.raises(ValueError, match="0 or 1"):
        as_vector([0, 2, 1], "x")
    with pytest.raises(ValueError, match="same questions"):
        fidelity(np.array([1, 0]), np.array([1, 0, 1]))


# ---------------------------------------------------------------------------------------- strategies


def test_every_strategy_keeps_the_key() -> None:
    items = [item(i, "ABCD"[i % 4]) for i in range(12)]
    for name in STRATEGIES.names():
        rewritten = apply_strategy(name, items, seed=3)
        for before, after in zip(items, rewritten, strict=True):
            check_item(after)
            if STRATEGIES.get(name).category != "altering":
                assert after.answer_text == before.answer_text, name
                assert set(before.choices) <= set(after.choices), name


def test_permute_choice_moves_the_answer_letter_like_the_official_loop() -> None:
    original = item(0, "B")
    rewritten = apply_strategy("permute_choice", [original], seed=11)[0]
    random.seed(11)  # the official code: random.shuffle of the choice texts, labels kept
    texts = list(original.choices)
    random.shuffle(texts)
    assert rewritten.choices == tuple(texts)
    assert rewritten.labels == original.labels
    assert rewritten.answer == original.labels[texts.index("Belcrest0")]
    assert rewritten.answer_text == "Belcrest0"


def test_irrelevant_context_is_the_official_prefix() -> None:
    rewritten = apply_strategy("irrelevant_context", [item()], seed=0)[0]
    assert rewritten.question == f"{IRRELEVANT_PREFIX} {item().question}"
    assert IRRELEVANT_PREFIX == "https://t.co/DlI9kw"


def test_incorrect_choice_appends_two_and_keeps_the_label() -> None:
    items = [item(i) for i in range(3)]
    rewritten = apply_strategy("incorrect_choice", items, seed=0, pools=pools_of(items))[0]
    assert rewritten.choices[:4] == items[0].choices and len(rewritten.choices) == 6
    assert rewritten.labels == ("A", "B", "C", "D", "E", "F") and rewritten.answer == "B"


def test_typo_and_synonyms_leave_names_alone() -> None:
    original = item()
    for name in ("typo", "synonyms"):
        rewritten = apply_strategy(name, [original], seed=1)[0]
        assert "Kel Dor" in rewritten.question
        assert rewritten.question != original.question


def test_altering_needs_the_generator_question() -> None:
    bare = MCItem("q", "What is 1 plus 2?", ("3", "4", "5", "6"), ("A", "B", "C", "D"), "A")
    with pytest.raises(ValueError, match="new question on the same entity"):
        apply_strategy("attribute_shift", [bare], seed=0)
    shifted = apply_strategy("attribute_shift", [item()], seed=0)[0]
    assert shifted.answer_text == "heron"


def test_check_item_refuses_a_broken_key() -> None:
    with pytest.raises(ItemError, match="not one of the labels"):
        check_item(MCItem("q", "Q?", ("a", "b"), ("A", "B"), "C"))
    with pytest.raises(ItemError, match="repeated choice"):
        check_item(MCItem("q", "Q?", ("a", "a"), ("A", "B"), "A"))


# ------------------------------------------------------------------------------------------- scoring


def test_prompt_is_the_official_template() -> None:
    text = mc_prompt(item())
    assert text.startswith("You are asked to answer a multiple-choice science problem.\n### Question: ")
    assert "### Choices: A: Ardmoor0\nB: Belcrest0\nC: Corvale0\nD: Dunmere0\n\nAnswer:" in text
    assert OFFICIAL_PROMPT.endswith("Answer:")


def test_batched_scores_match_the_official_loop() -> None:
    torch.manual_seed(0)
    items = [item(i, "ABCD"[i % 4]) for i in range(6)]
    items[1] = apply_strategy("relevant_context", [items[1]], seed=0)[0]  # unequal prompt lengths
    tokenizer = lm.WordTokenizer.fit([mc_prompt(x) for x in items])
    model = lm.build_lm(tokenizer.vocab_size, lm.LMShape(32, 2, 4, 64), 0)
    batched = score_items(model, tokenizer.encode, items, batch_size=4)
    loop = score_items_loop(model, tokenizer.encode, items)
    np.testing.assert_allclose(np.array(batched.label_logprobs), np.array(loop.label_logprobs), atol=1e-5)
    assert batched.predicted == loop.predicted


def test_tokenizer_spells_unknown_words() -> None:
    tokenizer = lm.WordTokenizer.fit(["the capital is here"])
    assert len(tokenizer.encode("the capital")) == 2
    assert len(tokenizer.encode("the captal")) == 1 + len("captal")


# ----------------------------------------------------------------------------------------- own data


def write(path, ids, values, column="correct") -> str:
    pl.DataFrame({"id": ids, column: values}).write_csv(path)
    return str(path)


def test_assess_files_writes_the_report(tmp_path) -> None:
    ids = [f"q{i}" for i in range(10)]
    co = write(tmp_path / "co.csv", ids, [1, 1, 0, 0, 1, 0, 1, 0, 1, 1])
    cu = write(tmp_path / "cu.csv", ids[::-1], [1, 1, 0, 1, 0, 0, 1, 0, 1, 1][::-1])
    xu = write(tmp_path / "xu.csv", ids, [1] * 10)
    xo = write(tmp_path / "xo.csv", ids, [1] * 10)
    report = assess_files(co, cu, xu, tmp_path / "out", xo, resamples=200)
    assert report["fidelity"] == pytest.approx(0.8)  # q3 and q4 flipped (ids aligned, not positions)
    assert (tmp_path / "out" / "report.md").read_text().startswith("# Benchmark-update assessment")
    assert json.loads((tmp_path / "out" / "assessment.json").read_text())["questions"] == 10
    assert (tmp_path / "out" / "fidelity_resistance.png").is_file()


def test_misaligned_ids_and_bad_values_are_named_errors(tmp_path) -> None:
    co = write(tmp_path / "co.csv", ["a", "b", "c"], [1, 0, 1])
    other = write(tmp_path / "cu.csv", ["a", "b", "d"], [1, 0, 1])
    bad = write(tmp_path / "bad.csv", ["a", "b", "c"], [1, 2, 0])
    with pytest.raises(DataValidationError, match=r"cu\.csv: question ids differ"):
        assess_files(co, other, co, tmp_path / "out")
    with pytest.raises(DataValidationError, match=r"bad\.csv: column 'correct' must hold 0 or 1"):
        read_correctness(bad)
    with pytest.raises(DataValidationError, match="no column 'hit'"):
        read_correctness(co, column="hit")
    assert not (tmp_path / "out").exists()


def test_rewrite_file_with_a_strategy(tmp_path) -> None:
    rows = [
        {
            "id": f"q{i}",
            "question": f"Which animal lives in the pond {i}?",
            "choices": json.dumps(["frog", "eagle", "camel", f"yak{i}"]),
            "answer": "A",
        }
        for i in range(4)
    ]
    source = tmp_path / "items.csv"
    pl.DataFrame(rows).write_csv(source)
    assert rewrite_file(str(source), "permute_choice", tmp_path / "perm.parquet", seed=2) == 4
    out = pl.read_parquet(tmp_path / "perm.parquet")
    for row in out.iter_rows(named=True):
        assert row["choices"][row["labels"].index(row["answer"])] == "frog"
    with pytest.raises(DataValidationError, match="unknown"):
        rewrite_file(str(source), "nope", tmp_path / "x.parquet")
