"""One intra-op thread for this paper's tiny models (a documented exception to `common.threads`).

Every tensor here is small (digits batches of 64 × 10, char batches of 512 × 97): torch's parallel kernels
gain nothing, and on the shared, loaded 2-core machine two threads made a digits epoch 10–50× slower than one
(0.12 s vs 1.5–6.8 s, measured side by side). Outputs are byte-identical run to run at one thread.
"""

from __future__ import annotations

import torch


def use_one_thread() -> None:
    """Pin torch to one intra-op thread for the rest of the step."""
    torch.set_num_threads(1)
