"""RL environments as a data source: an environment is an id, a chain of named wrappers and seeds.

`EnvSpec` is the params-side description (validated, no gymnasium import); `make_env` builds one seeded
gymnasium environment from it and `make_vector` a seeded synchronous vector of them. Wrappers are looked up
in `WRAPPERS` by name; an unknown environment id or wrapper name is an error that lists the valid ones.

Wrappers:
- `minigrid_categorical`: MiniGrid's partial view as 51 categorical (string) features, GBRL's encoding: the
  7×7 cells as "object,color,state", the agent's direction and the mission text;
- `minigrid_flat`: minigrid's own `FlatObsWrapper` (cell codes + one-hot mission characters), for networks;
- `input_noise`: the input shift s + ε·|s|, ε ~ N(0, σ) one scalar per step (continuous observations).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import Field

from stages.core.params import StrictModel


class WrapperSpec(StrictModel):
    """One wrapper by registered name, with its options."""

    name: str = Field(min_length=1)
    options: dict[str, Any] = Field(default_factory=dict)


class EnvSpec(StrictModel):
    """An environment: a gymnasium id, wrappers applied in order, and keyword arguments for `gymnasium.make`."""

    env_id: str = Field(min_length=1)
    wrappers: list[WrapperSpec] = Field(default_factory=list)
    kwargs: dict[str, Any] = Field(default_factory=dict)

    def with_wrapper(self, name: str, **options: Any) -> EnvSpec:
        """This spec with one more wrapper at the end."""
        return self.model_copy(update={"wrappers": [*self.wrappers, WrapperSpec(name=name, options=options)]})


def _minigrid_categorical(env, **options):
    from stages.datasets.env_wrappers import CategoricalObsWrapper

    return CategoricalObsWrapper(env, **options)


def _minigrid_flat(env, **options):
    from minigrid.wrappers import FlatObsWrapper

    return FlatObsWrapper(env, **options)


def _input_noise(env, **options):
    from stages.datasets.env_wrappers import InputNoiseWrapper

    return InputNoiseWrapper(env, **options)


WRAPPERS: dict[str, Callable[..., Any]] = {
    "minigrid_categorical": _minigrid_categorical,
    "minigrid_flat": _minigrid_flat,
    "input_noise": _input_noise,
}


class EnvSpecError(ValueError):
    """An environment id or wrapper that cannot be built."""


def _register_families() -> None:
    import minigrid  # noqa: F401  (registers the MiniGrid-* ids with gymnasium)


def check_spec(spec: EnvSpec, key: str = "env") -> None:
    """Fail naming `key` when the id is not registered with gymnasium or a wrapper name is unknown."""
    import gymnasium

    _register_families()
    if spec.env_id not in gymnasium.registry:
        close = sorted(name for name in gymnasium.registry if spec.env_id.lower()[:6] in name.lower())[:8]
        hint = f"; close ids: {', '.join(close)}" if close else ""
        raise EnvSpecError(f"{key}.env_id: unknown environment id {spec.env_id!r}{hint}")
    for index, wrapper in enumerate(spec.wrappers):
        if wrapper.name not in WRAPPERS:
            raise EnvSpecError(
                f"{key}.wrappers[{index}]: unknown wrapper {wrapper.name!r}; known: {', '.join(sorted(WRAPPERS))}"
            )


def make_env(spec: EnvSpec, key: str = "env"):
    """One gymnasium environment with the spec's wrappers (seed it through `reset(seed=...)`)."""
    import gymnasium

    check_spec(spec, key)
    env = gymnasium.make(spec.env_id, **spec.kwargs)
    for wrapper in spec.wrappers:
        try:
            env = WRAPPERS[wrapper.name](env, **wrapper.options)
        except TypeError as error:
            raise EnvSpecError(
                f"{key}: wrapper {wrapper.name!r} options {wrapper.options}: {error}"
            ) from error
    return env
