"""The shared pieces every paper uses: evaluators, Registry.build, the timing helper, catalogs, sources."""

from __future__ import annotations

import numpy as np
import pytest
from pydantic import Field

from stages.core.errors import ParamsError, PipelineError
from stages.core.evaluation import CLASSIFICATION, EVALUATORS, GRAPH_CLASSIFICATION
from stages.core.params import StrictModel
from stages.core.registry import Registry, UnknownNameError
from stages.core.steps import Catalog, Plot
from stages.core.timing import interleaved_seconds, median_seconds
from stages.datasets.registry import get_source, names_of, source_names


def test_classification_accuracy_by_hand():
    assert CLASSIFICATION.evaluate(np.array([0, 1, 1, 2]), predicted=np.array([0, 1, 0, 2])) == {
        "accuracy": 0.75
    }


def test_graph_classification_auroc_and_accuracy_by_hand():
    labels = np.array([0, 0, 1, 1])
    probabilities = np.array([[0.9, 0.1], [0.4, 0.6], [0.7, 0.3], [0.2, 0.8]])
    # positives score 0.3 and 0.8, negatives 0.1 and 0.6: 3 of 4 pairs ordered correctly
    assert GRAPH_CLASSIFICATION.evaluate(labels, probabilities=probabilities) == {
        "auroc": 0.75,
        "accuracy": 0.5,
    }
    assert np.isnan(GRAPH_CLASSIFICATION.evaluate(np.zeros(4, int), probabilities=probabilities)["auroc"])
    with pytest.raises(PipelineError, match="AUROC needs class probabilities"):
        GRAPH_CLASSIFICATION.evaluate(labels, predicted=labels)
    assert EVALUATORS.names() == ["classification", "graph_classification"]


class _Scaler:
    class Options(StrictModel):
        factor: float = Field(2.0, gt=0)

    def __init__(self, options: Options) -> None:
        self.options = options


def test_registry_build_validates_options_naming_the_key():
    registry: Registry = Registry("scaler")
    registry.add("scale", _Scaler)
    assert registry.build("scale", {"factor": 3}).options.factor == 3.0
    with pytest.raises(ParamsError, match=r"methods\.a\.options\.factr: Extra inputs are not permitted"):
        registry.build("scale", {"factr": 3}, key="methods.a.options")
    with pytest.raises(UnknownNameError, match="unknown scaler 'shift'; valid names: scale"):
        registry.build("shift")


def test_interleaved_timing_calls_each_function_once_per_round_in_seeded_random_order():
    calls: list[str] = []
    functions = {name: (lambda name=name: calls.append(name)) for name in "abcd"}
    seconds = interleaved_seconds(functions, repeats=5, seed=1)
    assert {name: len(times) for name, times in seconds.items()} == dict.fromkeys("abcd", 5)
    assert calls[:4] == list("abcd")  # warm-up, in order
    rounds = [calls[4 + 4 * index : 8 + 4 * index] for index in range(5)]
    assert all(sorted(order) == list("abcd") for order in rounds)
    assert len({tuple(order) for order in rounds}) > 1  # not always the same order
    calls.clear()
    interleaved_seconds(functions, repeats=5, seed=1)
    assert [calls[4 + 4 * index : 8 + 4 * index] for index in range(5)] == rounds  # same seed, same order


def test_median_seconds_returns_the_result_and_rejects_no_repeats():
    seconds, result = median_seconds(lambda: 41 + 1, repeats=3)
    assert result == 42 and seconds >= 0
    with pytest.raises(ValueError):
        median_seconds(lambda: None, repeats=0)


def test_catalog_names_each_path_once():
    data = Catalog("data/x/", pool="pool.parquet", timings="timings/a.json")
    assert data.pick("pool", times="timings") == {
        "pool": "data/x/pool.parquet",
        "times": "data/x/timings/a.json",
    }
    with pytest.raises(PipelineError, match="no artefact 'tset'; artefacts: pool, timings"):
        data["tset"]
    assert Plot("p.csv", x="a", y="b").dvc_entry() == {"p.csv": {"x": "a", "y": "b"}}
    assert Plot("p.png").dvc_entry() == "p.png"


def test_every_source_module_defines_its_named_source():
    for name in source_names():
        source = get_source(name)
        assert source.name == name and source.description
        assert set(source.outputs()) == set(source.modality.outs)
    assert {"b3db", "structure_control", "feature_control", "tu", "graph_table"} <= set(names_of("graphs"))
    assert {"fashion_mnist", "digits", "table"} <= set(names_of("classification"))
    with pytest.raises(UnknownNameError, match="unknown dataset 'zinc'"):
        get_source("zinc")


def test_dvc_yaml_refuses_a_stage_that_feeds_timings_into_a_data_output():
    from stages.platform.dvc_yaml import check_timings_isolated

    benchmark = {
        "deps": ["data/x/timings/train.json", "data/x/runs.parquet"],
        "outs": ["data/x/timings/claims.json"],
    }
    check_timings_isolated({"x-timing": benchmark})  # a benchmark step: reads and writes only timings/
    leaky = {
        "deps": ["data/x/runs.parquet", "data/x/timings/train.json"],
        "outs": ["data/x/summary.parquet"],
        "plots": [{"data/x/timings/plot.csv": {"x": "a"}}],
    }
    with pytest.raises(
        PipelineError, match=r"stage 'x-evaluate' reads wall-clock timings .*data/x/summary\.parquet"
    ):
        check_timings_isolated({"x-evaluate": leaky})
    plotted = {"deps": ["data/x/timings/train.json"], "outs": [], "plots": ["data/x/figures/time.png"]}
    with pytest.raises(PipelineError, match=r"data/x/figures/time\.png"):
        check_timings_isolated({"x-plot": plotted})


def test_seed_everything_turns_on_torch_deterministic_algorithms_in_warn_only_mode():
    import torch

    from stages.core.seeding import seed_everything

    before = (
        torch.are_deterministic_algorithms_enabled(),
        torch.is_deterministic_algorithms_warn_only_enabled(),
    )
    try:
        torch.use_deterministic_algorithms(False)
        seed_everything(3)
        assert torch.are_deterministic_algorithms_enabled()
        assert torch.is_deterministic_algorithms_warn_only_enabled()
        assert torch.initial_seed() == 3
    finally:
        torch.use_deterministic_algorithms(before[0], warn_only=before[1])
