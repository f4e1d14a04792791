"""The rationalization method: hard masks, the RNP/A2I terms, metrics, the generators, readers and bad input."""

from __future__ import annotations

import gzip
import json
import math

import numpy as np
import polars as pl
import pytest
import torch

from stages.core.errors import DataValidationError
from stages.core.registry import UnknownNameError
from stages.datasets.rationales.annotations import read_beer_annotations, read_beer_reviews, read_hotel
from stages.datasets.rationales.motifs import MotifParams, generate_motif_graphs
from stages.datasets.rationales.reviews import INDEPENDENT, NEGATIVE, POSITIVE, ReviewParams, generate_reviews
from stages.methods.rationale.base import hard_gumbel_mask
from stages.methods.rationale.config import RationaleConfig
from stages.methods.rationale.encoders import get_encoder
from stages.methods.rationale.graph import make_graph_data
from stages.methods.rationale.metrics import (
    attack_success_by_class,
    rationale_prf,
    selection_gap,
    share_without_label_token,
)
from stages.methods.rationale.objectives import instruction_loss, sparsity_loss
from stages.methods.rationale.own_data import (
    CHANCE_MARGIN,
    SPARSITY_TOLERANCE,
    accuracy_warnings,
    rationalize_file,
    spans_of,
    tokenize,
)
from stages.methods.rationale.text import build_vocab, encode_texts, random_embeddings
from stages.methods.rationale.trainer import build, instruction_term, train_rationalizer
from stages.platform.commands import main


def tiny_text(n: int = 16, length: int = 12, seed: int = 0):
    frame = generate_reviews(ReviewParams(n_train=n, n_dev=2, n_test=2, length=length), seed)
    train = frame.filter(pl.col("split") == "train")
    vocab = build_vocab(train["tokens"].to_list())
    embeddings = random_embeddings(len(vocab), 8, 0)
    data = encode_texts(
        train["tokens"].to_list(), train["label"].to_list(), vocab, embeddings, 32, train["gold"].to_list()
    )
    return data, train


def test_masks_are_exactly_binary_with_straight_through_gradients():
    torch.manual_seed(0)
    logits = torch.randn(4, 7, 2, requires_grad=True)
    mask = torch.ones(4, 7)
    mask[:, 5:] = 0
    z = hard_gumbel_mask(logits, mask, tau=1.0)
    assert set(torch.unique(z).tolist()) <= {0.0, 1.0}
    assert z[:, 5:].sum() == 0  # padding never selected
    (z * torch.arange(7.0)).sum().backward()
    assert logits.grad is not None and logits.grad[:, :5].abs().sum() > 0


def test_sparsity_term_reaches_its_target_on_a_toy():
    torch.manual_seed(0)
    logits = torch.zeros(32, 20, 2, requires_grad=True)
    mask = torch.ones(32, 20)
    optimizer = torch.optim.Adam([logits], lr=0.05)
    for _ in range(300):
        optimizer.zero_grad()
        sparsity_loss(hard_gumbel_mask(logits, mask, 1.0), mask, 0.15).backward()
        optimizer.step()
    with torch.no_grad():
        rates = [hard_gumbel_mask(logits, mask, 1.0).mean().item() for _ in range(20)]
    assert abs(np.mean(rates) - 0.15) < 0.03


def test_instruction_reaches_only_the_predictor():
    data, _ = tiny_text()
    encoder = get_encoder("gru")
    torch.manual_seed(0)
    model = build(encoder, data, RationaleConfig(hidden=4), "a2i", 0.2)
    instruction_term(model, encoder.batch(data, list(range(len(data))))).backward()
    for net in (model.generator, model.attacker):
        assert all(p.grad is None or p.grad.abs().sum() == 0 for p in net.parameters())
    assert sum(p.grad.abs().sum() for p in model.predictor.parameters() if p.grad is not None) > 0


def test_instruction_gradient_is_zero_once_the_flip_is_unlikely():
    labels = torch.tensor([0, 1])
    p_flip = torch.tensor([0.3, 0.45])  # p(1 − Y | Z_A) ≤ 1/2 for both rows
    logits = torch.stack([torch.log(1 - p_flip), torch.log(p_flip)], dim=1)
    logits[1] = logits[1].flip(0)  # row 1: the flipped label is 0
    logits.requires_grad_(True)
    instruction_loss(logits, labels).backward()
    assert torch.all(logits.grad == 0)
    flipped = torch.tensor([[math.log(0.2), math.log(0.8)]], requires_grad=True)  # p(1 − 0) = 0.8 > 1/2
    instruction_loss(flipped, torch.tensor([0])).backward()
    assert flipped.grad.abs().sum() > 0


def test_f1_on_hand_made_annotations():
    selected = [np.array([1, 1, 0, 0]), np.array([0, 0, 1])]
    gold = [np.array([0, 1, 1, 0]), np.array([0, 0, 1])]
    scores = rationale_prf(selected, gold)  # hits 2, selected 3, gold 3
    assert scores == pytest.approx({"precision": 2 / 3, "recall": 2 / 3, "f1": 2 / 3})
    assert rationale_prf([np.zeros(3)], [np.ones(3)])["f1"] == 0.0


def test_selection_gap_by_class():
    tokens = [["a", "-", "-"], ["-", "b", "-"]]
    selected = [np.array([0, 1, 1]), np.array([0, 0, 0])]
    gaps = selection_gap(selected, tokens, np.array([1, 0]), ["-", "."])
    assert gaps["-"] == pytest.approx(1.0) and math.isnan(gaps["."]) and gaps["max"] == pytest.approx(1.0)


@pytest.mark.parametrize("opposite", [0, 1, 2])
def test_generated_reviews_plant_what_they_say(opposite):
    frame = generate_reviews(ReviewParams(n_train=600, n_dev=2, n_test=2, opposite_words=opposite), 3)
    polarity = {**dict.fromkeys(POSITIVE, 1), **dict.fromkeys(NEGATIVE, 0)}
    for tokens, gold, label in zip(frame["tokens"], frame["gold"], frame["label"], strict=True):
        inside = [t for t, g in zip(tokens, gold, strict=True) if g and t in polarity]
        outside = [t for t, g in zip(tokens, gold, strict=True) if not g and t in polarity]
        assert len(inside) == 3 and all(polarity[t] == label for t in inside)  # gold carries the label
        # outside the gold only the other aspect's words of the opposite polarity ("bad aroma")
        assert len(outside) == opposite and all(polarity[t] == 1 - label for t in outside)
    for token in INDEPENDENT:  # filler separators: equally frequent in both classes
        counts = [
            np.mean(
                [list(t).count(token) for t, y in zip(frame["tokens"], frame["label"], strict=True) if y == c]
            )
            for c in (0, 1)
        ]
        assert abs(counts[0] - counts[1]) < 0.15 * max(counts)
    assert frame["label"].mean() == pytest.approx(0.5, abs=0.01)


def test_motif_graphs_gold_is_the_motif():
    graphs = generate_motif_graphs(MotifParams(n_train=10, n_dev=2, n_test=2, base_nodes=10), 0)
    for graph in graphs:
        motif = graph["edges"][graph["gold"] == 1]
        assert len(motif) == (6 if graph["label"] == 1 else 5)
        assert motif.min() >= 10 and (graph["edges"][:, 0] < graph["edges"][:, 1]).all()


def test_trainer_runs_on_text_and_graphs():
    data, _ = tiny_text()
    config = RationaleConfig(hidden=4, epochs=1, batch_size=8, layers=2)
    text = train_rationalizer(get_encoder("gru"), data, data, config, "a2i", 0)
    prediction = text.predict(data)
    assert [len(z) for z in prediction.selected] == data.mask.sum(dim=1).int().tolist()
    assert 0 <= text.history[-1]["attack_success"] <= 1
    graphs = generate_motif_graphs(MotifParams(n_train=8, n_dev=2, n_test=2, base_nodes=6), 0)
    graph_data = make_graph_data(
        [np.ones((g["nodes"], 1)) for g in graphs],
        [g["edges"] for g in graphs],
        [g["label"] for g in graphs],
        [g["gold"] for g in graphs],
    )
    model = train_rationalizer(get_encoder("gcn"), graph_data, graph_data, config, "rnp", 0)
    selected = model.predict(graph_data).selected
    assert [len(z) for z in selected] == [len(g["edges"]) for g in graphs]
    assert model.predict(graph_data, seed=1).summary() == model.predict(graph_data, seed=1).summary()


def test_bad_input_is_named():
    embeddings = random_embeddings(4, 2, 0)
    with pytest.raises(DataValidationError, match="row 1 has an empty text"):
        encode_texts([["a"], []], [0, 1], {"<pad>": 0, "<unk>": 1}, embeddings, 4)
    with pytest.raises(DataValidationError, match="row 0 has label 2"):
        encode_texts([["a"]], [2], {"<pad>": 0, "<unk>": 1}, embeddings, 4)
    with pytest.raises(UnknownNameError, match="gcn, gru"):
        get_encoder("lstm")


def test_rationalize_a_users_table(tmp_path):
    rng = np.random.default_rng(0)
    texts = [
        f"the film was {'great fun' if i % 2 else 'dull stuff'} , {'and' if rng.random() < 0.5 else 'so'} long"
        for i in range(40)
    ]
    table = tmp_path / "reviews.csv"
    pl.DataFrame({"review": texts, "verdict": ["good" if i % 2 else "bad" for i in range(40)]}).write_csv(
        table
    )
    out = tmp_path / "spans.parquet"
    summary = rationalize_file(table, out, "review", "verdict", epochs=1, max_len=16)
    spans = pl.read_parquet(out)
    assert summary["labels"] == {"bad": 0, "good": 1} and spans.height == summary["spans"]
    for row in spans.iter_rows(named=True):
        assert texts[row["row"]][row["char_start"] : row["char_end"]] == row["text"]
    three = tmp_path / "three.csv"
    pl.DataFrame({"text": ["a b", "c d", "e f"], "label": [0, 1, 2]}).write_csv(three)
    with pytest.raises(DataValidationError, match="3 distinct value"):
        rationalize_file(three, tmp_path / "x.parquet")
    empty = tmp_path / "empty.csv"
    pl.DataFrame({"text": ["a b", "  ", "e f"], "label": [0, 1, 0]}).write_csv(empty)
    with pytest.raises(DataValidationError, match="row 1 is empty"):
        rationalize_file(empty, tmp_path / "x.parquet")
    assert not (tmp_path / "x.parquet").exists()


def test_tokens_and_spans():
    assert [t for t, _, _ in tokenize("Great, FUN!")] == ["great", ",", "fun", "!"]
    assert spans_of(np.array([1, 1, 0, 1, 0, 0, 1])) == [(0, 2), (3, 4), (6, 7)]


def test_beer_and_hotel_formats(tmp_path):
    reviews = tmp_path / "reviews.aspect0.train.txt.gz"
    with gzip.open(reviews, "wt") as handle:
        handle.write(
            "0.8 0.5 0.4\tgolden pour\n0.2 0.9 0.9\tmurky look\n0.5 0.1 0.1\tmeh\n0.9 0.1 0.2\tnice head\n"
        )
    frame = read_beer_reviews(reviews, aspect=0)
    assert frame["label"].to_list() == [1, 0, 1] and frame["tokens"][0].to_list() == ["golden", "pour"]
    assert sorted(read_beer_reviews(reviews, 0, balance=True)["label"].to_list()) == [0, 1]
    annotations = tmp_path / "annotations.json"
    records = [
        {
            "x": ["clear", "gold", "smells", "sweet"],
            "y": [0.9, 0.3, 0.5],
            "0": [[0, 2]],
            "1": [[2, 4]],
            "2": [],
        },
        {"x": ["flat", "and", "dull"], "y": [0.5, 0.3, 0.2], "0": [[0, 1]], "1": [], "2": [[0, 3]]},
    ]
    annotations.write_text("\n".join(json.dumps(r) for r in records) + "\n")
    beer = read_beer_annotations(annotations, aspect=0)  # row 2: score 0.5 is neither class
    assert beer["label"].to_list() == [1] and beer["gold"][0].to_list() == [1, 1, 0, 0]
    assert read_beer_annotations(annotations, aspect=2)["gold"][0].to_list() == [1, 1, 1]
    annotations.write_text('{"x": ["a"], "y": [0.9], "0": [[0, 5]]}\n')
    with pytest.raises(DataValidationError, match="line 1: span"):
        read_beer_annotations(annotations, 0)
    hotel = tmp_path / "hotel_Location.train"
    hotel.write_text("id\tlabel\ttext\trationale\n0\t1\tgreat location\t1 1\n1\t0\tfar away\t0 1\n")
    assert read_hotel(hotel)["gold"].to_list() == [[1, 1], [0, 1]]
    hotel.write_text("id\tlabel\ttext\n0\t3\tgreat location\n")
    with pytest.raises(DataValidationError, match="line 2: label '3'"):
        read_hotel(hotel)


def test_attack_success_per_class_shows_a_defaulting_predictor():
    labels = np.array([0, 0, 0, 1, 1, 1])
    always_positive = np.ones(6, dtype=int)  # flips every negative row, no positive one
    assert attack_success_by_class(always_positive, labels) == {0: 1.0, 1: 0.0}
    assert math.isnan(attack_success_by_class(np.array([1]), np.array([0]))[1])


def test_share_of_rationales_without_a_label_bearing_token():
    tokens = [["great", "bad", "."], ["bad", "head", "."], ["great", "x", "."], ["bad", "great", "."]]
    selected = [np.array([0, 1, 0]), np.array([1, 1, 0]), np.array([1, 0, 0]), np.array([0, 0, 1])]
    labels = np.array([1, 0, 1, 0])
    shares = share_without_label_token(selected, tokens, labels, {0: {"bad"}, 1: {"great"}})
    assert shares == {0: 0.5, 1: 0.5}  # row 0 selects only the opposite word; row 3 only "."


BAD_OPTIONS = [
    (["--sparsity", "1.5"], "--sparsity"),
    (["--sparsity", "0"], "--sparsity"),
    (["--sparsity", "nan"], "--sparsity"),
    (["--epochs", "0"], "--epochs"),
    (["--max-len", "0"], "--max-len"),
    (["--dev-fraction", "-0.5"], "--dev-fraction"),
    (["--dev-fraction", "1"], "--dev-fraction"),
    (["--seed", "-1"], "--seed"),
]


@pytest.mark.parametrize(("extra", "option"), BAD_OPTIONS)
def test_rationalize_refuses_bad_values_in_one_line(tmp_path, capsys, extra, option):
    table = tmp_path / "t.csv"
    pl.DataFrame({"text": ["a good film", "a bad film"] * 5, "label": [1, 0] * 5}).write_csv(table)
    out = tmp_path / "o.parquet"
    code = main(["rationalize", "--input", str(table), "--output", str(out), *extra])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1 and option in err and "Traceback" not in err
    assert not out.exists()


def test_rationalize_short_texts_reaches_the_target_or_warns(tmp_path):
    rng = np.random.default_rng(1)
    words = ["the", "film", "was", "a", "story", "of", "two", "and", "with", "some", "long", "scenes"]
    texts, labels = [], []
    for i in range(120):  # ~17-token reviews, one sentiment word carries the label
        body = list(rng.choice(words, size=16))
        body.insert(int(rng.integers(0, 16)), "superb" if i % 2 else "awful")
        texts.append(" ".join(body))
        labels.append(i % 2)
    table = tmp_path / "short.csv"
    pl.DataFrame({"text": texts, "label": labels}).write_csv(table)
    summary = rationalize_file(table, tmp_path / "spans.parquet", sparsity=0.15, epochs=3, max_len=32)
    assert summary["mean_length"] == pytest.approx(17.0)
    assert summary["weights"]["sparsity"] == pytest.approx(12 * 17 / 150, abs=1e-3)  # scaled to the length
    assert summary["weights"]["continuity"] == pytest.approx(10 * 17 / 150, abs=1e-3)
    off = abs(summary["sparsity"] - 0.15) > SPARSITY_TOLERANCE
    sparsity_warnings = [w for w in summary["warnings"] if "--sparsity" in w]
    assert bool(sparsity_warnings) == off
    chance = summary["dev"]["accuracy"] < 0.5 + CHANCE_MARGIN  # balanced labels
    assert any("held-out accuracy" in w for w in summary["warnings"]) == chance


def test_rationalize_warns_when_held_out_accuracy_is_near_chance():
    assert accuracy_warnings({"accuracy": 0.55}, [0, 1, 0, 1]) and not accuracy_warnings(
        {"accuracy": 0.9}, [0, 1]
    )
    assert accuracy_warnings({"accuracy": 0.8}, [1, 1, 1, 0])  # majority share 0.75
    assert not accuracy_warnings({}, [])
