"""Independent training runs in worker processes, each on one torch thread.

The models a CPU-scale run trains are small: a second intra-op thread only adds synchronisation, and on a
shared 2-core machine a step can take many times longer at two threads than at one when another process holds
the second core. So each run trains on one thread, in `workers` spawned processes side by side. A run's result
depends only on its own arguments (its seeds among them), so the outputs are the same for any number of
workers.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from typing import Any, TypeVar

from stages.core.progress import progress

Result = TypeVar("Result")


def one_thread() -> int:
    """Set torch to one intra-op thread; returns the previous count."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    return threads


def map_runs(
    function: Callable[..., Result], tasks: Sequence[tuple[Any, ...]], workers: int, desc: str
) -> list[Result]:
    """`function(*task)` for every task, in task order: in `workers` spawned one-thread processes, or here on
    one thread (`workers` 1 or a single task). `function` and the tasks must be picklable."""
    if workers == 1 or len(tasks) <= 1:
        import torch

        threads = one_thread()
        try:
            return [function(*task) for task in progress(tasks, desc=desc)]
        finally:
            torch.set_num_threads(threads)
    with ProcessPoolExecutor(
        min(workers, len(tasks)), mp_context=get_context("spawn"), initializer=one_thread
    ) as pool:
        futures = [pool.submit(function, *task) for task in tasks]
        return [future.result() for future in progress(futures, desc=desc)]
