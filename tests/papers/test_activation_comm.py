"""Activation communication: f, the learned map, grafting on a tiny Llama, the games, FLOPs (Eq. 1–2), claims."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
import torch

from stages.methods.communication import baselines
from stages.methods.communication.combine import combine
from stages.methods.communication.compute import activation_flops, combination_flops, natural_language_flops
from stages.methods.communication.graft import (
    Graft,
    graft_batch,
    graft_generate,
    graft_logprob,
    graft_logprobs_shared,
    graft_rows,
    graft_shared,
    sender_states,
)
from stages.methods.communication.learned_map import MapTraining, relative_error, train_map, train_map_until
from stages.models.lm.config import TinyLlamaConfig
from stages.models.lm.decoding import continuation_logprob, generate, generate_batch
from stages.models.lm.flops import forward_flops
from stages.models.lm.loading import ChatTemplateError, TemplateTokenizer, chat_family, tiny_llama
from stages.papers.activation_comm import claims as ac_claims
from stages.papers.activation_comm.evaluate import answer_items, best_depth, item_chunks, nl_sample_markdown
from stages.papers.activation_comm.games import (
    check_unique_answers,
    chosen_option,
    generate_games,
    is_correct,
)
from stages.papers.activation_comm.models import swept_depths
from stages.papers.activation_comm.params import ActivationCommParams


@pytest.fixture(scope="module")
def lm():
    torch.set_num_threads(1)
    return tiny_llama(TinyLlamaConfig(layers=4, hidden=32, heads=4, kv_heads=2, intermediate=48, seed=2))


def test_combinations_and_the_unequal_width_rule():
    a, b = torch.tensor([1.0, 2.0]), torch.tensor([10.0, 20.0, 30.0])
    assert combine("replace", a, b).tolist() == [10.0, 1.0, 2.0]  # last min(d_A, d_B) coordinates
    assert combine("sum", a, b).tolist() == [10.0, 21.0, 32.0]
    assert combine("mean", a, b).tolist() == [10.0, 10.5, 16.0]
    wide = torch.tensor([5.0, 6.0, 7.0, 8.0])
    assert combine("replace", wide, b).tolist() == [6.0, 7.0, 8.0]
    with pytest.raises(ValueError, match="unknown combination 'max'"):
        combine("max", a, b)


def test_learned_map_recovers_a_linear_map():
    generator = torch.Generator().manual_seed(0)
    truth = torch.randn(3, 5, generator=generator)
    source = torch.randn(256, 5, generator=generator)
    weight, losses = train_map(
        source, source @ truth.T, MapTraining(epochs=30, batch_size=64, learning_rate=0.1)
    )
    assert losses[-1] < 1e-2 * losses[0]
    assert torch.allclose(weight, truth, atol=0.1)


def test_graft_replace_of_b_own_activation_is_b_itself(lm):
    ids = lm.tokenizer.encode("Which country is Anna located in?")
    graft = Graft(2, 2, "replace")
    assert graft_generate(lm, lm, ids, ids, graft, 6).ids == generate(lm, ids, 6).ids
    answer = lm.tokenizer.encode("France")[1:]
    # A's pass stops at the prompt, B's also reads the answer: same maths, other matmul shapes (float rounding)
    assert graft_logprob(lm, lm, ids, ids, answer, graft) == pytest.approx(
        continuation_logprob(lm, ids, answer), rel=1e-7
    )


def test_graft_from_another_prompt_changes_b(lm):
    ids_a, ids_b = lm.tokenizer.encode("Anna is at the Eiffel Tower."), lm.tokenizer.encode("Where is Anna?")
    answer = lm.tokenizer.encode("France")[1:]
    plain = continuation_logprob(lm, ids_b, answer)
    for combination in ("replace", "sum", "mean"):
        assert graft_logprob(lm, lm, ids_a, ids_b, answer, Graft(3, 3, combination)) != plain
    assert graft_logprob(lm, lm, ids_a, ids_b, answer, Graft(3, 3, "sum", all_tokens=True)) != plain
    mapped = Graft(3, 3, "replace", weight=torch.eye(32))
    assert torch.equal(sender_states(lm, ids_a, mapped), sender_states(lm, ids_a, Graft(3, 3)))


def test_games_have_unique_answers_in_the_papers_format():
    games = generate_games(7, {"dev": 30, "test": 200})
    assert games.group_by("game", "split").len().sort("game", "split")["len"].to_list() == [30, 200, 30, 200]
    check_unique_answers(games)
    for row in games.iter_rows(named=True):
        assert row["candidates"].count(row["answer"]) == 1
        if row["game"] == "countries":
            person = row["x_a"].split(" is at the ")[0]
            assert row["x_b"].startswith(f"Which country is {person} located in?")
        else:
            good = [c for c in row["candidates"] if f"{c} " in row["x_a"]]
            assert len(good) == 3 and row["answer"] in row["x_b"]
    assert generate_games(7, {"dev": 30, "test": 200}).equals(games)


def test_a_duplicate_answer_is_rejected():
    games = generate_games(0, {"test": 2}).with_columns(
        pl.when(pl.col("game") == "tip_sheets")
        .then(pl.col("candidates").list.eval(pl.element().str.replace(r".*", "Same")))
        .otherwise(pl.col("candidates"))
        .alias("candidates")
    )
    with pytest.raises(
        ValueError, match=r"tip_sheets test item 0: answer .* not exactly one of the candidates"
    ):
        check_unique_answers(games)


def test_correctness_is_the_option_the_answer_chooses():
    countries = ["France", "United States", "United Arab Emirates"]
    assert is_correct("Anna is located in France.", "France", countries)
    assert is_correct("Not the United States but France", "France", countries)  # a rejected mention
    assert not is_correct("Frances", "France", countries)
    companies = ["Teklio", "Calkor", "Norgra"]
    assert is_correct("Calkor, not Teklio", "Calkor", companies)
    assert not is_correct("Teklio, not Calkor", "Calkor", companies)
    assert chosen_option("Avoid Teklio; buy Norgra rather than Calkor.", companies) == "Norgra"
    assert chosen_option("I do not know", companies) is None
    assert chosen_option("Not Teklio.", companies) is None


def test_flops_of_eq_1_and_2(lm):
    shape = lm.shape
    nl = natural_language_flops(shape, shape, p_a=10, p_b=8, m=4, t=3)
    assert nl == 4 * forward_flops(shape, 10) + 3 * forward_flops(shape, 12)
    ac = activation_flops(shape, shape, p_a=10, p_b=8, t=3, k=2, combination="mean")
    assert ac == forward_flops(shape, 10, layers=2, logits=False) + 3 * forward_flops(shape, 8) + 2 * 32
    assert combination_flops("replace", 32) == 0 and combination_flops("sum", 32, mapped_from=16) == 32 + 1024
    assert ac < nl


def test_every_method_answers_items_batched_as_one_at_a_time(lm):
    params = ActivationCommParams.model_validate(
        {"sender": {"source": "tiny"}, "decoding": {"max_new_tokens": 3, "max_message_tokens": 4}}
    )
    items = list(
        generate_games(0, {"test": 2}).iter_rows(named=True)
    )  # 2 games × 2: prompts of unequal length
    assert len({len(lm.chat_ids(item["x_b"])) for item in items}) > 1
    rows = answer_items(lm, lm, items, 3, torch.eye(32), params)
    assert [row["method"] for row in rows] == params.methods * len(items)
    width = len(params.methods)
    for index, item in enumerate(items):
        by_method = {row["method"]: row for row in rows[index * width : index * width + width]}
        assert by_method["natural_language"]["m"] >= 1 and by_method["replace"]["m"] == 0
        assert by_method["replace"]["flops"] < by_method["natural_language"]["flops"]
        assert by_method["silent"]["output"] == baselines.silent(lm, item["x_b"], 3).answer.text
        assert (
            by_method["skyline"]["output"] == baselines.skyline(lm, item["x_a"], item["x_b"], 3).answer.text
        )
        alone = baselines.natural_language(lm, lm, item["x_a"], item["x_b"], 3, 4)
        assert by_method["natural_language"]["output"] == alone.answer.text
        ids_a, ids_b = lm.chat_ids(item["x_a"]), lm.chat_ids(item["x_b"])
        gold = lm.tokenizer.encode(item["answer"])
        for method, graft in (
            ("sum", Graft(3, 3, "sum")),
            ("replace", Graft(3, 3, "replace")),
            ("all_tokens_replace", Graft(3, 3, "replace", all_tokens=True)),
            ("all_tokens_sum", Graft(3, 3, "sum", all_tokens=True)),
        ):
            assert by_method[method]["output"] == graft_generate(lm, lm, ids_a, ids_b, graft, 3).text
            expected = graft_logprob(lm, lm, ids_a, ids_b, gold, graft)
            assert by_method[method]["logprob"] == pytest.approx(expected, rel=1e-5)
        sky = continuation_logprob(lm, baselines.skyline_prompt(lm, item["x_a"], item["x_b"]), gold)
        assert by_method["skyline"]["logprob"] == pytest.approx(sky, rel=1e-5)
        heard = baselines.message_prompt(lm, alone.message.text, item["x_b"])
        assert by_method["natural_language"]["message"] == alone.message.text
        assert by_method["natural_language"]["logprob"] == pytest.approx(
            continuation_logprob(lm, heard, gold), rel=1e-5
        )
        assert by_method["silent"]["logprob"] == pytest.approx(
            continuation_logprob(lm, ids_b, gold), rel=1e-5
        )


def test_item_chunks_fit_the_batch():
    items = [{"item": i} for i in range(10)]
    assert [len(chunk) for chunk in item_chunks(items, 8, 32)] == [4, 4, 2]
    assert [len(chunk) for chunk in item_chunks(items, 8, 3)] == [1] * 10


def test_swept_depths_and_best_depth():
    assert swept_depths([0.15, 0.25, 0.45, 0.65, 0.85, 0.95], 30) == [4, 8, 14, 20, 26, 28]
    assert swept_depths([0.1, 0.2, 1.0], 4) == [1, 4]
    assert swept_depths(ActivationCommParams().grid.depth_fractions, 30) == list(range(1, 31))
    sweep = pl.DataFrame({"depth": [1, 1, 2, 2, 3, 3], "logprob": [-3.0, -2.0, -1.0, -1.0, -1.0, -1.0]})
    assert best_depth(sweep) == 2  # a tie goes to the shallower depth
    test_rows = sweep.with_columns(split=pl.lit("test"), logprob=pl.lit(0.0), depth=pl.lit(1, pl.Int64))
    assert best_depth(pl.concat([sweep.with_columns(split=pl.lit("dev")), test_rows])) == 2  # dev rows only


def _results(
    replace: list[float], silent: list[float], games: tuple[str, ...] = ("countries",)
) -> pl.DataFrame:
    """Per-item gold log-probabilities (exact match: log p > −1) of replace, silent and a skyline at 0."""
    rows = []
    for game in games:
        for method, values in (("replace", replace), ("silent", silent), ("skyline", [0.0] * len(replace))):
            rows += [
                {"game": game, "item": i, "method": method, "logprob": float(v), "correct": v > -1}
                for i, v in enumerate(values)
            ]
    return pl.DataFrame(rows)


def test_beats_silent_is_judged_on_the_gold_log_probability_and_keeps_per_item_values():
    params = ActivationCommParams()
    noise = [0.1 * ((7 * i) % 5 - 2) for i in range(20)]
    up = ac_claims.beats_silent(_results([-2 + e for e in noise], [-3.0] * 20), params)
    assert up.verdict == "holds" and up.unit == "item" and up.n == 20
    assert up.measured["gap_closed_logprob"]["countries"] == pytest.approx(1 / 3, abs=0.01)
    evidence = up.evidence[0]
    assert evidence.per_seed == {str(i): pytest.approx(1 + noise[i]) for i in range(20)}
    assert up.detectable[evidence.name] == pytest.approx(evidence.interval[1] - evidence.mean, abs=0.05)
    both = ("countries", "tip_sheets")
    down = ac_claims.beats_silent(_results([-4 + e for e in noise], [-3.0] * 20, both), params)
    assert down.verdict == "fails"
    flat = ac_claims.beats_silent(_results([-3 + e for e in noise], [-3.0] * 20, both), params)
    assert flat.verdict == "inconclusive"
    mixed = pl.concat(
        [_results([-2 + e for e in noise], [-3.0] * 20), _results([-4.0] * 20, [-3.0] * 20, ("tip_sheets",))]
    )
    assert ac_claims.beats_silent(mixed, params).verdict == "holds"  # on at least one game


def _flops_results(ratios: list[float], game: str = "countries") -> pl.DataFrame:
    rows = []
    for item, ratio in enumerate(ratios):
        rows.append({"game": game, "item": item, "method": "replace", "flops": 100.0 * ratio})
        rows.append({"game": game, "item": item, "method": "natural_language", "flops": 100.0})
    return pl.DataFrame(rows)


def test_flops_ratio_is_judged_on_the_log_scale():
    params = ActivationCommParams()
    claim = ac_claims.flops_claim(_flops_results([0.2, 0.3, 0.45, 0.25, 0.3]), params)
    evidence = claim.evidence[0]
    assert "log-ratio" in evidence.interval_kind and claim.verdict == "holds"
    geometric = float(np.exp(np.mean(np.log([0.2, 0.3, 0.45, 0.25, 0.3]))))
    assert evidence.mean == pytest.approx(geometric) and evidence.interval[0] > 0
    assert claim.measured["ratio"]["countries"]["geometric_mean"] == round(geometric, 4)
    assert claim.unit == "item" and claim.n == 5
    # one item far below 1 cannot pull a geometric mean over items that cost more than NL below 1
    assert ac_claims.flops_claim(_flops_results([1.5, 1.6, 1.4, 1.5, 0.1]), params).verdict == "inconclusive"
    assert ac_claims.flops_claim(_flops_results([1.5, 1.6, 1.4, 1.5, 1.7]), params).verdict == "fails"


def _sweep(depths: list[int], layers: int, best: int, items: int = 6) -> pl.DataFrame:
    rows = []
    for split in ("dev", "test"):
        for game in ("countries", "tip_sheets"):
            for item in range(items):
                base = -5.0 - 0.3 * item
                for depth in depths:
                    noise = 0.01 * ((item * 7 + depth * 3) % 5)
                    logprob = base - 0.5 * abs(depth - best) + noise
                    rows.append(
                        {"game": game, "split": split, "item": item, "depth": depth, "logprob": logprob}
                    )
    return pl.DataFrame(rows).with_columns(correct=pl.lit(False), layers=pl.lit(layers))


def test_best_depth_is_a_tested_best_setting_or_inconclusive_by_design():
    params = ActivationCommParams()  # band [0.5, 0.95]·L, shallow ≤ 0.25·L
    every = list(range(1, 11))
    holds = ac_claims.best_depth_claim(_sweep(every, 10, best=7), 7, params)
    assert holds.verdict == "holds" and holds.measured["chosen_on_dev"] == 7 and holds.n == 12
    assert len(holds.evidence) == 9  # against every other swept depth, on the test items
    fails = ac_claims.best_depth_claim(_sweep(every, 10, best=3), 3, params)
    assert fails.verdict == "fails"
    # a dev choice that the test items do not bear out is not separated from the depths beyond the band
    assert ac_claims.best_depth_claim(_sweep(every, 10, best=3), 6, params).verdict == "inconclusive"
    flat = _sweep(every, 10, best=7).sort("split", "game", "item", "depth")
    at_best = flat.filter(pl.col("depth") == 7)["logprob"].to_numpy()
    twin = at_best + np.where(np.arange(len(at_best)) % 2 == 0, 0.3, -0.3) - 0.001
    flat = flat.with_columns(
        pl.when(pl.col("depth") == 4)
        .then(pl.Series(np.repeat(twin, 10)))
        .otherwise(pl.col("logprob"))
        .alias("logprob")
    )  # depth 4 (outside the band) matches the best within the item noise: not separated from it
    assert ac_claims.best_depth_claim(flat, 7, params).verdict == "inconclusive"
    # a six-depth grid skips the band's 15–19 (and more): the choice is untested against them
    coarse = ac_claims.best_depth_claim(_sweep([4, 8, 14, 20, 26, 28], 30, best=14), 14, params)
    assert coarse.verdict == "inconclusive" and coarse.reason.startswith("Inconclusive by design")
    assert "15–19" in coarse.reason and coarse.measured["chosen_on_dev"] == 14
    assert len(coarse.evidence) == 5 and coarse.unit == "item"


def test_bootstrap_interval_covers_the_mean_and_is_seeded():
    values = np.array([1.0, 0.0, 1.0, 1.0, 0.0, 1.0, 1.0, 1.0])
    low, high = ac_claims.bootstrap_interval(values, 1000, 0.95, seed=3)
    assert low < values.mean() < high
    assert (low, high) == ac_claims.bootstrap_interval(values, 1000, 0.95, seed=3)
    assert ac_claims.bootstrap_interval(np.ones(5), 200, 0.95, seed=0) == (1.0, 1.0)


def test_batched_grafts_match_one_at_a_time(lm):
    ids_a, ids_b = lm.tokenizer.encode("Anna is at the Louvre."), lm.tokenizer.encode("Where is Anna?")
    states = sender_states(lm, ids_a, Graft(2, 2))
    grafts = [Graft(2, 2, "replace"), Graft(2, 2, "sum", all_tokens=True)]
    batched = graft_rows(lm, ids_b, [None, *((g, states) for g in grafts)], 5)
    assert batched[0].ids == generate(lm, ids_b, 5).ids
    for graft, out in zip(grafts, batched[1:], strict=True):
        assert out.ids == graft_generate(lm, lm, ids_a, ids_b, graft, 5).ids


def test_left_padded_and_shared_prefix_batches_match_one_prompt_at_a_time(lm):
    prompts = [lm.tokenizer.encode(text) for text in ("Where is Anna?", "Is Bo in Rome or in Oslo today?")]
    alone = [generate(lm, ids, 5).ids for ids in prompts]
    assert [out.ids for out in generate_batch(lm, prompts, 5)] == alone
    senders = [lm.tokenizer.encode(text) for text in ("Anna is at the Louvre.", "Bo is at the Colosseum.")]
    states = [sender_states(lm, ids, Graft(2, 2)) for ids in senders]
    answers = [lm.tokenizer.encode(text)[1:] for text in ("France", "Italy")]
    row_prompt, plans, expected, expected_logprob = [], [], [], []
    for index, ids_b in enumerate(prompts):
        for combination in ("replace", "sum", "mean"):
            graft = Graft(2, 2, combination)
            row_prompt.append(index)
            plans.append((graft, states[index]))
            expected.append(graft_generate(lm, lm, senders[index], ids_b, graft, 5).ids)
            expected_logprob.append(graft_logprob(lm, lm, senders[index], ids_b, answers[index], graft))
        row_prompt.append(index)
        plans.append(None)
        expected.append(alone[index])
        expected_logprob.append(continuation_logprob(lm, ids_b, answers[index]))
    assert [out.ids for out in graft_shared(lm, prompts, row_prompt, plans, 5)] == expected
    shared_logprobs = graft_logprobs_shared(lm, prompts, row_prompt, answers, plans)
    assert shared_logprobs == pytest.approx(expected_logprob, rel=1e-5)
    whole = Graft(2, 2, "sum", all_tokens=True)
    padded = graft_batch(lm, prompts, [(whole, state) for state in states], 5)
    assert [out.ids for out in padded] == [
        graft_generate(lm, lm, ids_a, ids_b, whole, 5).ids
        for ids_a, ids_b in zip(senders, prompts, strict=True)
    ]
    with pytest.raises(ValueError, match="all_tokens grafts edit the whole prompt"):
        graft_shared(lm, prompts, [0], [(whole, states[0])], 5)


def test_learned_map_trains_until_the_held_out_error_target():
    generator = torch.Generator().manual_seed(1)
    source = torch.randn(320, 6, generator=generator)
    training = MapTraining(epochs=500, batch_size=32, learning_rate=0.05)
    fit = train_map_until(source[:256], source[:256], source[256:], source[256:], training, target_error=0.05)
    assert fit.heldout_error[-1] <= 0.05 < fit.heldout_error[0]
    assert fit.epochs == len(fit.heldout_error) < 500  # stopped at the target
    assert relative_error(fit.weight, source[256:], source[256:]) == pytest.approx(fit.heldout_error[-1])
    capped = train_map_until(
        source[:256], source[:256], source[256:], source[256:], MapTraining(epochs=2), 0.05
    )
    assert capped.epochs == 2 and capped.heldout_error[-1] > 0.05  # the limit, short of the target


class _TemplateTokenizer:
    """The parts of a transformers tokenizer that TemplateTokenizer reads."""

    eos_token_id = 2

    def __init__(self, chat_template):
        self.chat_template = chat_template

    def __len__(self):
        return 10

    def convert_tokens_to_ids(self, token):
        return {"<|im_end|>": 7, "<end_of_turn>": 8, "<|eot_id|>": 9}.get(token)

    def apply_chat_template(self, messages, tokenize, add_generation_prompt):
        return "".join(f"[{m['role']}:{m['content']}]" for m in messages) + "[assistant:"


def test_the_chat_frame_is_read_from_the_model_not_assumed():
    chatml = "{% for m in messages %}{{'<|im_start|>' + m['role'] + '\\n' + m['content'] + '<|im_end|>'}}"
    tokenizer = TemplateTokenizer(_TemplateTokenizer(chatml))
    assert tokenizer.family == "chatml" and tokenizer.eos_ids == (2, 7)
    assert tokenizer.chat("Hi") == "[system:You are a helpful assistant. Answer briefly.][user:Hi][assistant:"
    gemma = "{{ bos_token }}{% for m in messages %}<start_of_turn>{{ m['role'] }}{% endfor %}"
    assert TemplateTokenizer(_TemplateTokenizer(gemma)).eos_ids == (2, 8)
    assert chat_family("<|start_header_id|>user<|end_header_id|>") == "llama3"
    with pytest.raises(ChatTemplateError, match="no chat template"):
        TemplateTokenizer(_TemplateTokenizer(None), where="base.gguf")
    with pytest.raises(ChatTemplateError, match="unknown chat template"):
        chat_family("{% for m in messages %}### {{ m['role'] }}: {{ m['content'] }}{% endfor %}")


def test_nl_sample_lists_message_answer_choice_and_gold():
    games = generate_games(0, {"test": 2}).filter(pl.col("split") == "test")
    rows = [
        {
            "game": g,
            "item": i,
            "method": "natural_language",
            "message": "Ana is | at the Louvre.",
            "output": o,
        }
        for g, i, o in zip(games["game"], games["item"], ["France", "x", "y", "z"], strict=True)
    ]
    results = pl.DataFrame(rows).with_columns(
        chosen=pl.Series(
            [chosen_option(r["output"], c) for r, c in zip(rows, games["candidates"], strict=True)]
        )
    )
    text = nl_sample_markdown(results, games, 1)
    lines = [line for line in text.splitlines() if line.startswith("| countries") or line.startswith("| tip")]
    assert len(lines) == 2 and "Ana is \\| at the Louvre." in lines[0]
    assert lines[0].endswith(f"| {games['answer'][0]} |")
