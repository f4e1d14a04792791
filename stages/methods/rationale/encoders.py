"""The registered modalities: `gru` (text, token rationales) and `gcn` (graphs, edge rationales)."""

from __future__ import annotations

from stages.core.registry import Registry
from stages.methods.rationale.base import Encoder
from stages.methods.rationale.config import ENCODER_NAMES

ENCODERS: Registry[type[Encoder]] = Registry("encoder")


def _register() -> None:
    from stages.methods.rationale.graph import GraphEncoder
    from stages.methods.rationale.text import TextEncoder

    for encoder in (TextEncoder, GraphEncoder):
        ENCODERS.add(encoder.name, encoder)
    assert tuple(ENCODERS.names()) == tuple(sorted(ENCODER_NAMES)), "config.ENCODER_NAMES is out of date"


_register()


def get_encoder(name: str) -> Encoder:
    """A new encoder by name; an unknown name lists the valid ones."""
    return ENCODERS.get(name)()
