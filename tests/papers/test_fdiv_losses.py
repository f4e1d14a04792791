"""fdiv_losses: params validation, the SFT data, the char LM pieces and the claims logic on synthetic results."""

from __future__ import annotations

import polars as pl
import pytest
import torch
from pydantic import ValidationError

from stages.core.claims import DesignError
from stages.methods.losses import LossSpec
from stages.papers.fdiv_losses.claims import alpha_claim, exact, operator_claim
from stages.papers.fdiv_losses.lm import (
    VOCAB,
    CharTransformer,
    decode,
    encode,
    held_out_windows,
    loss_module,
    token_loss,
)
from stages.papers.fdiv_losses.params import FdivParams
from stages.papers.fdiv_losses.sft import IGNORE, PROMPT, arithmetic_strings, sequences, split_strings

LOSSES = {"ce": {"divergence": "kl"}, "alpha15": {"divergence": "alpha", "alpha": 1.5}}
LISTS = {name: ["ce", "alpha15"] for name in ("classify_losses", "lm_losses", "sft_losses", "distil_losses")}


def params(**overrides) -> FdivParams:
    return FdivParams(**({"losses": LOSSES} | LISTS | overrides))


def test_params_errors_name_the_key():
    with pytest.raises(ValidationError, match="alpha"):
        params(losses=LOSSES | {"bad": {"divergence": "alpha", "alpha": 0.0}})
    with pytest.raises(ValidationError, match="divergence: unknown f 'tsallis'"):
        params(losses=LOSSES | {"bad": {"divergence": "tsallis"}})
    with pytest.raises(ValidationError, match="lm_losses"):
        params(lm_losses=["ce"])
    with pytest.raises(ValidationError, match="baseline"):
        params(baseline="alpha15")
    assert params(scale="full").lm_config().d_model == 128 and len(params(scale="full").run_seeds()) == 5


def test_arithmetic_strings_and_answer_only_targets():
    strings = arithmetic_strings(9)
    assert len(strings) == 100 and strings[23] == "02+03=005\n"
    train, test = split_strings(strings, 20, seed=0)
    assert len(test) == 20 and not set(train) & set(test)
    inputs, targets = sequences(["12+34=046\n"])
    assert decode(inputs[0].tolist()) == "12+34=046"
    assert (targets[0, : PROMPT - 1] == IGNORE).all() and decode(targets[0, PROMPT - 1 :].tolist()) == "046\n"
    with pytest.raises(ValueError, match=r"sft\.test_size"):
        split_strings(strings, 100, seed=0)


def test_char_model_is_causal_and_vocab_round_trips():
    assert decode(encode("def f(x):\n\treturn x é")) == "def f(x):\n\treturn x ?" and len(VOCAB) == 97
    torch.manual_seed(0)
    model = CharTransformer(16, 1, 2, 12).eval()
    tokens = torch.randint(0, len(VOCAB), (1, 12))
    changed = tokens.clone()
    changed[0, -1] = (changed[0, -1] + 1) % len(VOCAB)
    assert torch.allclose(model(tokens)[:, :-1], model(changed)[:, :-1], atol=1e-6)
    inputs, targets = held_out_windows(torch.arange(50), 10, 8)
    assert inputs.shape == (6, 8) and (targets == inputs + 1).all()


def test_alpha_claim_verdicts_from_paired_seeds():
    def frame(method):
        return pl.DataFrame({"loss": ["ce"] * 3 + ["alpha15"] * 3, "seed": [0, 1, 2] * 2,
                             "accuracy": [0.40, 0.41, 0.42, *method]})  # fmt: skip

    p = params()
    assert alpha_claim("x", "t", frame([0.41, 0.42, 0.43]), "accuracy", 0.005, p).verdict == "holds"
    assert alpha_claim("x", "t", frame([0.30, 0.31, 0.32]), "accuracy", 0.005, p).verdict == "fails"
    assert alpha_claim("x", "t", frame([0.40, 0.39, 0.43]), "accuracy", 0.005, p).verdict == "inconclusive"
    claim = alpha_claim("alpha15_pretraining", "t", frame([0.41, 0.42, 0.43]), "accuracy", 0.005, p)
    assert claim.unit == "seed" and claim.n == 3 and "0.5 pt" in claim.could_hold
    two = pl.DataFrame({"loss": ["ce", "ce", "alpha15", "alpha15"], "seed": [0, 1] * 2,
                        "accuracy": [0.40, 0.41, 0.41, 0.42]})  # fmt: skip
    with pytest.raises(DesignError, match="alpha15_sft"):  # a t interval over 2 seeds is refused
        alpha_claim("alpha15_sft", "t", two, "accuracy", 0.01, p)


def test_operator_claim_fails_on_a_wrong_zero_pattern():
    checks = {
        "iterations": 30,
        "closed_form_errors": {"softmax": 1e-9, "sparsemax": 1e-9, "entmax15": 1e-9, "entmax_bisect_1.3": 1e-9},
        "per_f": {"ce": {"simplex_error": 1e-12, "has_zeros": True, "sparse_f": False,
                         "masked_entries_zero": True, "adversarial_finite": True}},
    }  # fmt: skip
    assert operator_claim(checks, params()).verdict == "fails"
    checks["per_f"]["ce"]["has_zeros"] = False
    claim = operator_claim(checks, params())
    assert claim.verdict == "holds" and claim.unit == "instance" and claim.n == 1
    assert set(claim.detectable.values()) == {0.0}
    assert exact("e", 2e-5, 1e-5).verdict == "fails"


def test_token_loss_flattens_positions_like_the_class_dim_one_layout():
    """(B, T, V) char-LM scores: the flattened rows give the loss of torch's (B, V, T) layout."""
    torch.manual_seed(0)
    logits, targets = torch.randn(2, 6, len(VOCAB)), torch.randint(0, len(VOCAB), (2, 6))
    targets[0, 0] = IGNORE
    spec = LossSpec(divergence="alpha", alpha=1.5)
    criterion = loss_module(spec, "unit", 30, ignore_index=IGNORE)
    assert torch.allclose(token_loss(criterion, logits, targets), criterion(logits.transpose(1, 2), targets))
    teacher = torch.softmax(torch.randn(2, 6, len(VOCAB)), dim=-1)
    assert torch.allclose(
        token_loss(criterion, logits, teacher), criterion(logits.transpose(1, 2), teacher.transpose(1, 2))
    )
    with pytest.raises(ValueError, match="target"):
        criterion(logits, targets)  # (B, T, V) as (N, C, d1) would read T as the classes
