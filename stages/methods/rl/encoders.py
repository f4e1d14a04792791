"""Observation encoders: turn a batch of environment observations into a model's input array.

- `continuous`: finite numbers → float32 (N, d) (CartPole's state, minigrid's flat observation);
- `categorical`: strings (≤ 128 bytes each, GBRL's limit) → an object array (N, d) that GBRL splits by equality.

`ENCODERS[name]()` builds one; `encoder.dim(sample)` gives the input width from one observation.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import ClassVar

import numpy as np

MAX_CATEGORY_BYTES = 128


class Encoder(ABC):
    """Encodes a batch of observations (first axis: samples)."""

    name: ClassVar[str]

    @abstractmethod
    def __call__(self, observations: np.ndarray) -> np.ndarray: ...

    def dim(self, observation: np.ndarray) -> int:
        """Input width for one observation."""
        return int(self(np.asarray(observation)[None]).shape[1])


class ContinuousEncoder(Encoder):
    """Flattens each observation to float32 and rejects NaN / ±inf."""

    name: ClassVar[str] = "continuous"

    def __call__(self, observations: np.ndarray) -> np.ndarray:
        array = np.asarray(observations)
        if array.dtype == object or array.dtype.kind in "US":
            raise ValueError("continuous encoder: observations are strings; use the `categorical` encoder")
        array = array.reshape(len(array), -1).astype(np.float32)
        if not np.isfinite(array).all():
            raise ValueError("continuous encoder: observations contain NaN or ±inf")
        return array


class CategoricalEncoder(Encoder):
    """Each feature is a category string; numbers are written as their text. Strings over 128 bytes fail."""

    name: ClassVar[str] = "categorical"

    def __call__(self, observations: np.ndarray) -> np.ndarray:
        array = np.asarray(observations, dtype=object)
        array = array.reshape(len(array), -1)
        texts = [value if isinstance(value, str) else str(value) for value in array.ravel()]
        for flat, text in enumerate(texts):
            if len(text) * 4 > MAX_CATEGORY_BYTES and len(text.encode()) > MAX_CATEGORY_BYTES:
                sample, feature = divmod(flat, array.shape[1])
                raise ValueError(
                    f"categorical encoder: feature {feature} of sample {sample} is longer than "
                    f"{MAX_CATEGORY_BYTES} bytes ({text[:40]!r}...)"
                )
        encoded = np.empty(len(texts), dtype=object)
        encoded[:] = texts
        return encoded.reshape(array.shape)


ENCODERS: dict[str, type[Encoder]] = {cls.name: cls for cls in (ContinuousEncoder, CategoricalEncoder)}


def build_encoder(name: str) -> Encoder:
    """The encoder registered as `name` (the error lists the valid names)."""
    if name not in ENCODERS:
        raise ValueError(f"unknown encoder {name!r}; known: {', '.join(sorted(ENCODERS))}")
    return ENCODERS[name]()
