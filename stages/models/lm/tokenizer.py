"""A byte-level tokenizer for the tiny random Llama: ids 0–255 are UTF-8 bytes, then BOS and EOS.

It needs no vocabulary file, so tests and smoke runs tokenise any text offline in microseconds."""

from __future__ import annotations

BOS, EOS = 256, 257
VOCAB_SIZE = 258


class ByteTokenizer:
    """encode/decode text as UTF-8 bytes; `chat` wraps a prompt in a plain User/Assistant frame."""

    bos_id = BOS
    eos_ids = (EOS,)
    vocab_size = VOCAB_SIZE

    def encode(self, text: str) -> list[int]:
        return [BOS, *text.encode("utf-8")]

    def decode(self, ids: list[int]) -> str:
        return bytes(i for i in ids if i < 256).decode("utf-8", errors="replace")

    def chat(self, user: str) -> str:
        return f"User: {user}\nAssistant:"
