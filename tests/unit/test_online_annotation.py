"""Online annotation: fusion rule and gain on hand-computed cases, sampling, neighbour re-scoring, stop rule."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stages.core.errors import PipelineError
from stages.core.registry import UnknownNameError
from stages.methods.selection.online.fusion import Views, confidence_gain, dataset_view, fuse, model_view
from stages.methods.selection.online.loop import Schedule, check_schedule, run_online_annotation
from stages.methods.selection.online.neighbours import CosineIndex
from stages.methods.selection.online.registry import STRATEGIES, make_strategy
from stages.methods.selection.online.strategy import PoolView
from stages.models.training import TrainConfig


def views(classes, confidences) -> Views:
    return Views(np.asarray(classes), np.asarray(confidences, dtype=float))


def test_model_view_normalises_confidence():
    result = model_view(np.array([[0.7, 0.2, 0.1], [1 / 3, 1 / 3, 1 / 3], [0.0, 1.0, 0.0]]))
    assert result.classes.tolist() == [0, 0, 1]
    assert result.confidences == pytest.approx([(0.7 - 1 / 3) / (2 / 3), 0.0, 1.0])


@pytest.mark.parametrize(
    ("first", "second", "expected_class", "expected_confidence"),
    [
        (((1,), (0.9,)), ((1,), (0.8,)), 1, 0.72 / (0.72 + 0.1 * 0.2)),  # agree, both > 0.5: reinforce
        (((1,), (0.9,)), ((1,), (0.4,)), 1, 0.9),  # agree, one ≤ 0.5: keep the larger
        (((1,), (0.9,)), ((2,), (0.6,)), 1, 0.9 * 0.4 / (0.9 * 0.4 + 0.1 * 0.6)),  # clash: decay
        (((1,), (0.3,)), ((2,), (0.7,)), 2, 0.7),  # clash, one ≤ 0.5: the larger wins unchanged
        (((1,), (1.0,)), ((2,), (1.0,)), 1, 0.5),  # two certain views that disagree
    ],
)
def test_fusion_hand_computed(first, second, expected_class, expected_confidence):
    fused = fuse(views(*first), views(*second))
    assert fused.classes.tolist() == [expected_class]
    assert fused.confidences[0] == pytest.approx(expected_confidence)


@settings(max_examples=50, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 3), st.floats(0, 1), st.integers(0, 3), st.floats(0, 1)), min_size=1)
)
def test_fusion_is_symmetric_and_bounded(pairs):
    first = views([p[0] for p in pairs], [p[1] for p in pairs])
    second = views([p[2] for p in pairs], [p[3] for p in pairs])
    forward, backward = fuse(first, second), fuse(second, first)
    assert np.allclose(forward.confidences, backward.confidences)
    assert np.all((forward.confidences >= 0) & (forward.confidences <= 1))
    agree = first.classes == second.classes
    larger = np.maximum(first.confidences, second.confidences)
    assert np.all(forward.confidences[agree] >= larger[agree] - 1e-12)  # agreement never lowers confidence


def test_dataset_view_weighted_vote_within_radius():
    classes = np.array([0, 1, 1, 0])
    confidences = np.array([0.0, 1.0, 0.5, 1.0])
    ids = np.array([[1, 2, 3]])
    result = dataset_view(ids, np.array([[0.05, 0.1, 0.3]]), classes, confidences, 2, radius=0.15)
    assert result.classes.tolist() == [1] and result.confidences[0] == pytest.approx(1.0)
    classes[2] = 0  # now 0.95 for class 1 against 0.45 for class 0
    result = dataset_view(ids, np.array([[0.05, 0.1, 0.3]]), classes, confidences, 2, radius=0.15)
    assert result.classes.tolist() == [1] and result.confidences[0] == pytest.approx(0.95 / 1.4)
    alone = dataset_view(ids, np.array([[0.2, 0.3, 0.4]]), classes, confidences, 2, radius=0.15)
    assert alone.confidences[0] == 0.0


def test_confidence_gain():
    assert confidence_gain(np.array([1.0, 0.3, 0.0])).tolist() == pytest.approx([0.0, 0.7, 1.0])


def test_indexes_agree_and_exclude_self():
    rng = np.random.default_rng(0)
    points = rng.normal(size=(300, 8)).astype(np.float32)
    rows = np.arange(300)
    exact_ids, exact_distances = CosineIndex(points, "exact").neighbours(rows, 5)
    hnsw_ids, hnsw_distances = CosineIndex(points, "hnsw").neighbours(rows, 5)
    assert not (exact_ids == rows[:, None]).any() and not (hnsw_ids == rows[:, None]).any()
    recall = np.mean([len(set(a) & set(b)) / 5 for a, b in zip(exact_ids, hnsw_ids, strict=True)])
    assert recall > 0.95
    assert np.allclose(
        np.sort(exact_distances, axis=1)[:, 0], np.sort(hnsw_distances, axis=1)[:, 0], atol=1e-4
    )
    unit = points / np.linalg.norm(points, axis=1, keepdims=True)
    assert exact_distances[0, 0] == pytest.approx(1 - unit[0] @ unit[exact_ids[0, 0]], abs=1e-5)


def clustered_view(confidence: float = 0.6, seed: int = 0) -> tuple[PoolView, np.ndarray]:
    """Two tight, far-apart clusters of 12 rows (true classes 0 and 1). The model predicts the cluster's
    class for 9 rows and the other class for 3, each with normalised `confidence`, so every row's
    neighbourhood vote is split and every gain is positive."""
    rng = np.random.default_rng(seed)
    truth = np.repeat([0, 1], 12)
    embeddings = np.eye(3)[truth] + rng.normal(0, 0.01, (24, 3))
    predicted = np.where(np.arange(24) % 12 < 9, truth, 1 - truth)
    top = confidence / 2 + 1 / 2  # normalised confidence → max probability (K = 2)
    probabilities = np.where(np.eye(2)[predicted] == 1, top, 1 - top)
    return PoolView(embeddings, probabilities, np.zeros(24, bool), np.full(24, -1)), truth


def test_sampling_without_replacement_never_repeats_or_relabels():
    view, truth = clustered_view()
    strategy = make_strategy("info_coevolution", {"stop_gain": 0.0, "rescore_neighbours": 0})
    strategy.begin_round(view, np.random.default_rng(0))
    assert (strategy.gain > 0).all()
    seen: list[int] = []
    while True:
        batch = strategy.propose(5)
        if len(batch) == 0:
            break
        assert not set(batch) & set(seen)
        seen += batch.tolist()
        strategy.observe(batch, truth[batch])
    assert sorted(seen) == list(range(24))  # every positive-gain row is drawn exactly once


def test_zero_gain_rows_are_never_drawn():
    view, _ = clustered_view()
    view.probabilities[:12] = [[1.0, 0.0]]  # certain model, unanimous neighbours: gain 0
    strategy = make_strategy("info_coevolution", {"stop_gain": 0.0})
    strategy.begin_round(view, np.random.default_rng(0))
    assert (strategy.gain[:12] == 0).all() and (strategy.gain[12:] > 0).all()
    assert (strategy.propose(12) >= 12).all()


def test_hand_computed_gain_of_a_split_neighbourhood():
    view, _ = clustered_view(confidence=0.6)
    strategy = make_strategy("info_coevolution")
    strategy.begin_round(view, np.random.default_rng(0))
    # row 0 (predicted 0): 8 of its 11 voting neighbours say 0 → dataset view 0 with 8/11 (±similarity)
    y = 8 / 11
    assert strategy.gain[0] == pytest.approx(1 - 0.6 * y / (0.6 * y + 0.4 * (1 - y)), abs=1e-3)
    # row 9 (predicted 1): 9 of 11 say 0 → the dataset view wins with its confidence decayed by the model's
    x = 9 / 11
    assert strategy.gain[9] == pytest.approx(1 - x * 0.4 / (x * 0.4 + (1 - x) * 0.6), abs=1e-3)


def test_annotation_rescores_close_neighbours_only():
    view, truth = clustered_view()
    strategy = make_strategy("info_coevolution", {"rescore_neighbours": 8})
    strategy.begin_round(view, np.random.default_rng(0))
    before = strategy.gain.copy()
    neighbours = strategy.index.neighbours(np.array([0]), 8)[0][0]
    strategy.observe(np.array([0]), truth[[0]])
    agreeing = neighbours[strategy.known.classes[neighbours] == 0]
    clashing = neighbours[strategy.known.classes[neighbours] == 1]
    assert strategy.gain[0] == 0
    assert len(agreeing) and (strategy.gain[agreeing] < before[agreeing]).all()  # a certain vote joins
    assert (strategy.gain[clashing] >= before[clashing]).all()  # a clash never lowers a gain
    assert np.array_equal(strategy.gain[12:], before[12:])  # the other cluster is out of reach


def test_stop_rule_fires_when_little_gain_remains():
    view, _ = clustered_view()
    unsure = make_strategy("info_coevolution", {"stop_gain": 1.0})
    unsure.begin_round(view, np.random.default_rng(0))
    assert unsure.remaining_gain() > 1.0 and not unsure.should_stop()
    truth_view, truth = clustered_view()
    truth_view.probabilities[:] = np.eye(2)[truth] * 0.99998 + 0.00001
    confident = make_strategy("info_coevolution", {"stop_gain": 1.0})
    confident.begin_round(truth_view, np.random.default_rng(0))
    assert confident.remaining_gain() <= 1.0 and confident.should_stop()


def test_semi_supervised_distance_gain_and_no_stale_pseudo_labels():
    view, _ = clustered_view()
    view.probabilities[:12] = [[1.0, 0.0]]  # cluster 0 is certain: clean, no distance gain
    view.labelled[12], view.labels[12] = True, 1
    strategy = make_strategy("info_coevolution_semi")
    strategy.begin_round(view, np.random.default_rng(0))
    rows = strategy.propose(3)
    strategy.observe(rows, np.ones(3, np.int64))
    targets = (
        strategy.training_targets()
    )  # annotations only: pseudo-labels are made later, by a fresh teacher
    assert sorted(targets.rows.tolist()) == sorted([12, *rows.tolist()])
    assert (strategy.gain[:12] == 0).all()
    unlabelled = np.setdiff1d(np.arange(13, 24), rows)
    assert (strategy.gain[unlabelled] > 0).all() and strategy.gain[unlabelled].max() <= 1.5


def test_baselines_propose_valid_rows():
    view, _ = clustered_view()
    view.probabilities[5] = [0.5, 0.5]
    view.labelled[:3] = True
    least = make_strategy("least_confidence")
    least.begin_round(view, np.random.default_rng(0))
    assert least.propose(1).tolist() == [5]
    random = make_strategy("random")
    random.begin_round(view, np.random.default_rng(0))
    batch = random.propose(200)
    assert len(batch) == 21 and not view.labelled[batch].any()


def test_registry_and_options_errors():
    assert {"random", "least_confidence", "info_coevolution", "info_coevolution_semi"} <= set(STRATEGIES)
    with pytest.raises(UnknownNameError, match=r"valid names: .*least_confidence"):
        make_strategy("entropy")
    with pytest.raises(PipelineError, match=r"strategies\.x\.options\.stop_gian"):
        make_strategy("info_coevolution", {"stop_gian": 1}, key="strategies.x.options")


@pytest.mark.parametrize(
    ("schedule", "pool", "message"),
    [
        (Schedule(seed_size=5, round_size=5, budget=200), 100, "budget 200 exceeds the pool size 100"),
        (Schedule(seed_size=50, round_size=5, budget=50), 100, "seed set 50 must be smaller than the budget"),
        (Schedule(seed_size=1, round_size=1, budget=1), 0, "pool has 0 rows"),
    ],
)
def test_schedule_errors(schedule, pool, message):
    with pytest.raises(PipelineError, match=message):
        check_schedule(schedule, pool)


def test_loop_is_deterministic_and_stops_by_itself(tiny_table):
    from stages.datasets.classification import to_arrays

    pool = to_arrays(tiny_table)
    schedule = Schedule(seed_size=9, round_size=9, batch_size=3, budget=80, min_steps=50)
    config = TrainConfig(epochs=5, hidden=(16,))

    def run():
        return run_online_annotation(pool.features, pool.labels, make_strategy("info_coevolution"), schedule,
                                     config, seed=3)  # fmt: skip

    first, second = run(), run()
    assert first.annotated_rows == second.annotated_rows
    assert len(set(first.annotated_rows)) == len(first.annotated_rows)
    counts = [record.n_annotated for record in first.records]
    assert counts == sorted(set(counts))  # every recorded round added annotations
    assert first.records[-1].stopped and counts[-1] < 80  # separable blobs: the stop rule ends it early


@pytest.mark.parametrize("quantile", [0.25, 0.5, 0.75])
def test_radii_from_neighbour_distance_quantiles(quantile):
    view, _ = clustered_view()
    strategy = make_strategy(
        "info_coevolution", {"vote_radius_quantile": quantile, "rescore_radius_quantile": quantile}
    )
    strategy.begin_round(view, np.random.default_rng(0))
    _, distances = strategy.index.neighbours(np.arange(24), 16)
    diagnostics = strategy.diagnostics()
    assert diagnostics["vote_radius"] == pytest.approx(np.quantile(distances, quantile))
    assert diagnostics["rescore_radius"] == pytest.approx(np.quantile(distances[:, :8], quantile))
    assert diagnostics["vote_inside"] == pytest.approx((distances <= diagnostics["vote_radius"]).mean())
    assert abs(diagnostics["vote_inside"] - quantile) <= 0.1


def test_fixed_radii_report_how_many_neighbours_they_hold():
    view, _ = clustered_view()  # two tight clusters of 12: 11 of 16 neighbours lie within 0.15, none beyond
    strategy = make_strategy("info_coevolution")
    strategy.begin_round(view, np.random.default_rng(0))
    diagnostics = strategy.diagnostics()
    assert diagnostics["vote_radius"] == 0.15 and diagnostics["rescore_radius"] == 0.1
    assert diagnostics["vote_inside"] == pytest.approx(11 / 16)
    assert diagnostics["rescore_inside"] == pytest.approx(1.0)
