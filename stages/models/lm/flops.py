"""Analytic forward-pass FLOPs of a Llama-family decoder (Hoffmann et al. 2022, App. F), counted per part.

Hoffmann et al. count matrix multiplies at 2 FLOPs per multiply-add, the softmax at 3 per score, and the
embedding lookup as a multiply by the vocabulary (2·n·V·d); norms, rotary embeddings and activation functions
are left out. Adapted to Llama: keys and values have `kv_heads` heads (grouped-query attention) and the MLP
has three d×f matrices (SwiGLU). `n` is the number of tokens the pass processes, all attending causally to
each other within the pass as Hoffmann count it (n² scores, no KV cache).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class LMShape:
    """The sizes FLOPs depend on."""

    layers: int
    hidden: int
    heads: int
    kv_heads: int
    head_dim: int
    intermediate: int
    vocab: int

    @classmethod
    def from_config(cls, config: Any) -> LMShape:
        """From a transformers config (LlamaConfig and the like)."""
        heads = int(config.num_attention_heads)
        head_dim = getattr(config, "head_dim", None) or config.hidden_size // heads
        return cls(
            layers=int(config.num_hidden_layers),
            hidden=int(config.hidden_size),
            heads=heads,
            kv_heads=int(getattr(config, "num_key_value_heads", None) or heads),
            head_dim=int(head_dim),
            intermediate=int(config.intermediate_size),
            vocab=int(config.vocab_size),
        )


def embedding_flops(shape: LMShape, n: int) -> float:
    return 2.0 * n * shape.vocab * shape.hidden


def layer_flops(shape: LMShape, n: int) -> float:
    """One decoder block on n tokens: Q, K, V projections, scores, softmax, weighted sum, output, SwiGLU MLP."""
    d, q_width, kv_width = shape.hidden, shape.heads * shape.head_dim, shape.kv_heads * shape.head_dim
    projections = 2.0 * n * d * (q_width + 2 * kv_width)
    scores = 2.0 * n * n * q_width
    softmax = 3.0 * shape.heads * n * n
    weighted_sum = 2.0 * n * n * q_width
    output = 2.0 * n * q_width * d
    mlp = 2.0 * n * 3 * d * shape.intermediate
    return projections + scores + softmax + weighted_sum + output + mlp


def logits_flops(shape: LMShape, n: int) -> float:
    return 2.0 * n * shape.hidden * shape.vocab


def forward_flops(shape: LMShape, n: int, layers: int | None = None, logits: bool = True) -> float:
    """FLOPs of one pass on n tokens through the first `layers` blocks (all by default), with the output
    logits when `logits` (a pass stopped early has none)."""
    depth = shape.layers if layers is None else layers
    if not 0 <= depth <= shape.layers:
        raise ValueError(f"layers={depth}: the model has {shape.layers}")
    total = embedding_flops(shape, n) + depth * layer_flops(shape, n)
    return total + (logits_flops(shape, n) if logits else 0.0)
