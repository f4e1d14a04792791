"""Running one step: seed, call its function on a context, publish its outputs only if all were written.

Part of every step's code closure: what happens here (seeding, the atomic output transaction) can change
outputs, so editing it reruns every stage.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from stages.core.context import StepContext
from stages.core.errors import PipelineError
from stages.core.io import OutputTransaction
from stages.core.seeding import seed_and_pin


def execute(
    stage: str,
    function: Callable[..., None],
    args: Mapping[str, Any],
    params: Any,
    common: Any,
    inputs: dict[str, Path],
    outputs: dict[str, Path],
    root: Path,
) -> None:
    """Seed from `common.seed`, pin `common.threads`, run `function(ctx, **args)`, publish outputs atomically."""
    seed_and_pin(common.seed, common.threads)  # steps derive their own seeds; this pins library-level ones
    with OutputTransaction(root) as transaction:
        context = StepContext(
            stage=stage,
            params=params,
            common=common,
            inputs=inputs,
            outputs=transaction,
            output_paths=outputs,
        )
        function(context, **args)
        unwritten = [role for role, path in outputs.items() if path not in transaction.requested]
        if unwritten:
            raise PipelineError(f"stage '{stage}' did not write its declared outputs: {', '.join(unwritten)}")
    print(f"[{stage}] done", file=sys.stderr)
