"""One torch thread per training process in this paper's steps.

The matrices here are tiny (≤ 200 × 200; an MLP of width ≤ 128), so a second intra-op thread only adds
synchronisation: on the shared 2-core machine a Lanczos estimate took 8× longer at two threads than at one.
Running every training process on one thread also makes the outputs independent of `common.threads`
(as in RINGS' training processes); the practical networks use `common.threads` worker processes instead.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager


def one_thread_init() -> None:
    """Initializer of a worker process: one torch thread."""
    import torch

    torch.set_num_threads(1)


@contextmanager
def one_thread() -> Iterator[None]:
    """torch on one thread inside the block, the previous count restored after."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)
