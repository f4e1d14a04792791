"""Read and replace residual-stream vectors of a decoder at any layer and position, on the prefill pass only.

Layer j (1 ≤ j ≤ L) names the residual stream after decoder block j (the output of `layers[j - 1]`, before the
final norm). A hook acts on the first forward call made inside its `with` block (the prefill) and does
nothing on later calls (cached decoding steps); leaving the block removes it, so later forwards are untouched.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, ExitStack, contextmanager, suppress
from typing import Any

Edit = Callable[[Any], Any]  # a tensor (a vector or the (n, d) stream) -> its replacement, same shape


class StopForward(Exception):
    """Raised by a reading hook to end a pass once the wanted layer is reached."""


def block(lm: Any, layer: int) -> Any:
    """The decoder block whose output is the residual stream after `layer`."""
    if not 1 <= layer <= lm.n_layers:
        raise ValueError(f"layer {layer}: expected 1..{lm.n_layers} (the residual stream after that block)")
    return lm.layers[layer - 1]


def _hidden(output: Any) -> Any:
    return output[0] if isinstance(output, tuple) else output


def _with_hidden(output: Any, hidden: Any) -> Any:
    return (hidden, *output[1:]) if isinstance(output, tuple) else hidden


@contextmanager
def edit_rows(lm: Any, layer: int, edits: dict[int, Edit]) -> Iterator[None]:
    """Within the block, the prefill's residual stream after `layer` of each batch row r in `edits` (shape
    (n, d)) becomes `edits[r](stream)` (a new tensor of the same shape) before block `layer + 1` reads it;
    one hook serves every row."""
    state = {"calls": 0}

    def hook(_module: Any, _inputs: Any, output: Any) -> Any:
        state["calls"] += 1
        if state["calls"] > 1:
            return None
        hidden = _hidden(output).clone()
        for row, edit in edits.items():
            hidden[row] = edit(hidden[row])
        return _with_hidden(output, hidden)

    handle = block(lm, layer).register_forward_hook(hook)
    try:
        yield
    finally:
        handle.remove()


def edit_residual(lm: Any, layer: int, edit: Edit, row: int = 0) -> AbstractContextManager:
    """Within the block, the prefill's residual stream after `layer` (batch row `row`, shape (n, d)) becomes
    `edit(stream)` (a new tensor of the same shape) before block `layer + 1` reads it."""
    return edit_rows(lm, layer, {row: edit})


def replace_residual(lm: Any, layer: int, position: int, edit: Edit, row: int = 0) -> AbstractContextManager:
    """Within the block, the prefill's residual vector at (`layer`, `position`) becomes `edit(vector)`;
    positions may be negative (−1: the last token of the pass)."""

    def at_position(stream: Any) -> Any:
        stream = stream.clone()
        stream[position] = edit(stream[position])
        return stream

    return edit_residual(lm, layer, at_position, row)


@contextmanager
def read_residual(lm: Any, layer: int, stop: bool = False) -> Iterator[dict[str, Any]]:
    """Within the block, the prefill's residual stream after `layer` is stored in the yielded dict: batch
    row 0 (n, d) under "hidden", every row (rows, n, d) under "batch"; with `stop`, the pass ends there by
    raising :class:`StopForward` (the caller suppresses it)."""
    store: dict[str, Any] = {}

    def hook(_module: Any, _inputs: Any, output: Any) -> None:
        if "hidden" not in store:
            store["batch"] = _hidden(output).detach().clone()
            store["hidden"] = store["batch"][0]
            if stop:
                raise StopForward

    handle = block(lm, layer).register_forward_hook(hook)
    try:
        yield store
    finally:
        handle.remove()


def residuals(lm: Any, ids: list[int], layer: int) -> Any:
    """The residual stream after `layer` at every position of `ids` (n, d); the pass stops at that layer."""
    import torch

    with read_residual(lm, layer, stop=True) as store, torch.no_grad(), suppress(StopForward):
        lm.model(torch.tensor([ids]), use_cache=False)
    return store["hidden"]


def residuals_at(lm: Any, ids: list[int], layers: list[int]) -> dict[int, Any]:
    """The residual streams after each of `layers` (each (n, d)) from one pass, stopped at the deepest."""
    import torch

    deepest = max(layers)
    with ExitStack() as stack, torch.no_grad():
        stores = {
            layer: stack.enter_context(read_residual(lm, layer, stop=layer == deepest)) for layer in layers
        }
        with suppress(StopForward):
            lm.model(torch.tensor([ids]), use_cache=False)
    return {layer: store["hidden"] for layer, store in stores.items()}


def last_token_residuals(lm: Any, sequences: list[list[int]], layer: int, batch_size: int = 32) -> Any:
    """(len(sequences), d): the residual vector after `layer` at each sequence's last token, in batches.

    Shorter sequences are right-padded: under the causal mask no real token attends to a later pad, so the
    padding changes nothing that is read."""
    import torch

    rows = []
    for start in range(0, len(sequences), batch_size):
        chunk = sequences[start : start + batch_size]
        width = max(len(ids) for ids in chunk)
        padded = torch.tensor([ids + [ids[-1]] * (width - len(ids)) for ids in chunk])
        with read_residual(lm, layer, stop=True) as store, torch.no_grad(), suppress(StopForward):
            lm.model(padded, use_cache=False)
        rows += [store["batch"][index, len(ids) - 1] for index, ids in enumerate(chunk)]
    return torch.stack(rows)
