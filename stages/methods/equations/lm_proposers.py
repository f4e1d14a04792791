"""Language-model proposers for the LLM-SR loop and the data-blind baseline (opt-in; the grammar proposer is
the default): the shipped SmolLM2-135M-Instruct (or any GGUF / the tiny test model, through
`stages.models.lm`), and an OpenAI-compatible chat endpoint when one is configured.

Both write the LLM-SR prompt — the variables with their descriptions, up to two in-context skeletons (best
first) — and read back the first line of each answer that parses as an expression over the inputs and
constants `cst0 … cst9` (`params[i]` is accepted and renamed). An answer that does not parse is still a spent
proposal: the loop counts it and moves on.
"""

from __future__ import annotations

import json
import os
import re
import urllib.request
from collections.abc import Sequence

import numpy as np

from stages.core.errors import PipelineError
from stages.methods.equations.parsing import ExpressionError, parse_expression
from stages.methods.equations.proposers import MAX_PARAMS, PREFIX, Context

PARAMS = re.compile(r"params\s*\[\s*(\d+)\s*\]")


def prompt_text(context: Context, examples: Sequence[str]) -> str:
    """The LLM-SR-style prompt: the task, the variables, the in-context skeletons (best first)."""
    described = ", ".join(
        f"{name} ({desc})" if desc and desc != name else name
        for name, desc in zip(
            context.inputs, list(context.descriptions) + [""] * len(context.inputs), strict=False
        )
    )
    lines = [
        "Find a mathematical expression for the output in terms of the variables "
        f"{described}, with up to {MAX_PARAMS} constants written {PREFIX}0, {PREFIX}1, ... "
        "Answer with one expression on one line, Python syntax, nothing else.",
    ]
    for rank, example in enumerate(examples):
        lines.append(f"Good expression {rank + 1}: {example}")
    if examples:
        lines.append("Write a better expression.")
    return "\n".join(lines)


def extract_skeleton(text: str, context: Context) -> str:
    """The first line of `text` that parses over the inputs and `cst<i>` (after `params[i]` → `cst<i>`, a
    leading `y =` or `return` dropped); '' when none does."""
    names = [*context.inputs, *(f"{PREFIX}{i}" for i in range(MAX_PARAMS))]
    for line in text.replace("`", "\n").splitlines():
        candidate = PARAMS.sub(lambda m: f"{PREFIX}{m.group(1)}", line.strip())
        candidate = re.sub(r"^(return\s+|[A-Za-z_][A-Za-z0-9_]*\s*=\s*)", "", candidate).strip().rstrip(".;")
        if not candidate:
            continue
        try:
            parse_expression(candidate, names)
        except ExpressionError:
            continue
        return candidate
    return ""


class LMProposer:
    """Proposals sampled from a local causal LM (nucleus sampling, seeded from the loop's generator)."""

    def __init__(
        self,
        source: str = "smollm2",
        path: str | None = None,
        max_new_tokens: int = 48,
        top_p: float = 0.95,
        threads: int = 2,
    ) -> None:
        from stages.models.lm.config import LMConfig

        self.config = LMConfig(source=source, path=path, threads=threads)
        self.max_new_tokens = max_new_tokens
        self.top_p = top_p
        self._lm = None

    @property
    def lm(self):
        if self._lm is None:
            from stages.models.lm.loading import load_lm

            self._lm = load_lm(self.config)
        return self._lm

    def propose(
        self, context: Context, examples: Sequence[str], count: int, rng: np.random.Generator
    ) -> list[str]:
        from stages.models.lm.decoding import generate_batch

        ids = self.lm.chat_ids(prompt_text(context, examples))
        seed = int(rng.integers(2**31))
        generations = generate_batch(self.lm, [ids] * count, self.max_new_tokens, self.top_p, seed)
        return [extract_skeleton(g.text, context) for g in generations]


class EndpointProposer:
    """Proposals from an OpenAI-compatible `/chat/completions` endpoint: `base_url` (or the environment
    variable `LLM_SRBENCH_ENDPOINT`), `model`, and the key in `LLM_SRBENCH_API_KEY` if the server needs one.
    Temperature 0.8 as LLM-SR; the reply need not be deterministic (a server's sampling is its own)."""

    def __init__(
        self, model: str, base_url: str | None = None, temperature: float = 0.8, timeout: float = 60.0
    ) -> None:
        self.base_url = (base_url or os.environ.get("LLM_SRBENCH_ENDPOINT") or "").rstrip("/")
        if not self.base_url:
            raise PipelineError("endpoint proposer: give base_url or set LLM_SRBENCH_ENDPOINT")
        self.model = model
        self.temperature = temperature
        self.timeout = timeout

    def propose(
        self, context: Context, examples: Sequence[str], count: int, rng: np.random.Generator
    ) -> list[str]:
        body = {
            "model": self.model,
            "messages": [{"role": "user", "content": prompt_text(context, examples)}],
            "temperature": self.temperature,
            "n": count,
            "seed": int(rng.integers(2**31)),
        }
        headers = {"Content-Type": "application/json"}
        key = os.environ.get("LLM_SRBENCH_API_KEY")
        if key:
            headers["Authorization"] = f"Bearer {key}"
        request = urllib.request.Request(
            f"{self.base_url}/chat/completions", json.dumps(body).encode(), headers
        )
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                reply = json.loads(response.read())
        except (OSError, ValueError) as error:
            raise PipelineError(f"endpoint proposer: {self.base_url}: {error}") from None
        texts = [choice.get("message", {}).get("content", "") for choice in reply.get("choices", [])]
        texts = (texts + [""] * count)[:count]
        return [extract_skeleton(text, context) for text in texts]


def build_proposer(spec: str | dict | None):
    """A proposer from a params value: None or 'grammar' (default), 'smollm2', or a dict
    `{kind: lm|endpoint, ...keywords}`."""
    from stages.methods.equations.proposers import GrammarProposer

    if spec is None or spec == "grammar":
        return GrammarProposer()
    if spec == "smollm2":
        return LMProposer()
    if isinstance(spec, dict):
        options = dict(spec)
        kind = options.pop("kind", None)
        if kind == "lm":
            return LMProposer(**options)
        if kind == "endpoint":
            return EndpointProposer(**options)
    raise ValueError(
        f"unknown proposer {spec!r}: grammar, smollm2, {{kind: lm, ...}} or {{kind: endpoint, ...}}"
    )
