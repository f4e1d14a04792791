"""The shared causal-LM layer: offline loading (SmolLM2-135M-Instruct GGUF, a tiny random Llama), greedy and
nucleus decoding with token counts, analytic FLOPs, and hooks that read or replace residual-stream vectors.

Modules: `config` (the params model, no torch), `loading`, `tokenizer` (a byte tokenizer for the tiny model),
`hooks`, `decoding`, `flops`. Import the module you need; this package imports nothing heavy.
"""
