"""The activation-communication pipeline: its artefacts and steps (the source `dvc.yaml` is generated from)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from stages.core.inputs import file_problems
from stages.core.steps import Catalog, Pipeline, Plot, Step
from stages.papers.paper import Paper

DATA = Catalog(
    "data/activation_comm",
    games="games.parquet",
    sentences="sentences.parquet",
    sweep="sweep.parquet",
    results="results.parquet",
    setup="setup.json",
    nl_messages="nl_messages.md",
    metrics="metrics.json",
    plot_data="plots/accuracy_flops.csv",
    figures="figures",
    claims="claims.json",
    headline="headline.json",
)
SCALE = ("activation_comm.scale", "activation_comm.default", "activation_comm.full")
MODELS = ("activation_comm.sender", "activation_comm.receiver", "activation_comm.decoding")


def corpus_deps(raw_params: Mapping[str, Any]) -> dict[str, str]:
    """A sentence corpus of the user's is a DVC dep of the tasks step (editing it reruns the pipeline)."""
    path = (raw_params.get("activation_comm") or {}).get("corpus_path")
    return {"corpus": path} if path else {}


def corpus_problems(params: Any) -> list[str]:
    """A corpus of the user's must be a review CSV (plain or .bz2)."""
    if params.corpus_path is None:
        return []
    return file_problems(params.corpus_path, "activation_comm.corpus_path", (".csv", ".csv.bz2"))


STEPS = (
    Step(
        name="tasks",
        deps={},
        dynamic_deps=corpus_deps,
        outs=DATA.pick("games", "sentences"),
        params=(*SCALE, "activation_comm.corpus_path"),
        description="generate Countries and Tip Sheets items (dev, test) and read the sentence corpus for AC(W)",
    ),
    Step(
        name="sweep",
        deps=DATA.pick("games"),
        outs=DATA.pick("sweep"),
        params=(*SCALE, *MODELS),
        description="f = replace at each swept k = j: gold-answer log-prob on dev and test items, greedy accuracy "
        "on dev items",
    ),
    Step(
        name="evaluate",
        deps=DATA.pick("games", "sentences", "sweep"),
        outs=DATA.pick("results", "setup", "nl_messages"),
        params=(*SCALE, *MODELS, "activation_comm.map", "activation_comm.methods"),
        description="at the best k = j: train AC(W) to a held-out error, then every method on the test items: "
        "answer, gold log-prob, tokens and FLOPs; a sample of natural-language messages",
    ),
    Step(
        name="figures",
        deps=DATA.pick("results", "sweep"),
        outs=DATA.pick("figures"),
        metrics=DATA.pick("metrics"),
        plots={"plot_data": Plot(DATA["plot_data"], x="flops", y="accuracy", title="accuracy vs FLOPs")},
        params=(),
        description="accuracy vs layer (dev sweep), accuracy vs FLOPs per method and game",
    ),
    Step(
        name="claims",
        deps=DATA.pick("results", "sweep", "setup"),
        outs=DATA.pick("claims"),
        headline=DATA.pick("headline"),
        params=("activation_comm.claims",),
        description="the card's six claims with paired bootstrap intervals over items",
    ),
)

PAPER = Paper(
    id="activation_comm",
    title="Communicating activations between LM agents: grafting A's last-token activation into B",
    pipeline=Pipeline.of_paper("activation_comm", "ActivationCommParams", STEPS),
    benchmarks="stages.papers.activation_comm.benchmarks:run_benchmarks",
    input_check="stages.papers.activation_comm.pipeline:corpus_problems",
)
