"""Torch is prepared when a stage imports it, not before: seeded, deterministic and pinned at first use."""

from __future__ import annotations

import subprocess
import sys
import textwrap


def _run(code: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


def test_a_stage_that_imports_torch_late_is_seeded_pinned_and_deterministic():
    out = _run(
        """
        import sys
        from stages.core.seeding import seed_and_pin
        seed_and_pin(7, 1)
        assert "torch" not in sys.modules
        import torch
        late = torch.rand(3).tolist()
        torch.manual_seed(7)
        print(late == torch.rand(3).tolist(), torch.get_num_threads(),
              torch.are_deterministic_algorithms_enabled())
        """
    )
    assert out == "True 1 True"


def test_a_stage_that_already_imported_torch_is_prepared_at_once():
    out = _run(
        """
        import torch
        torch.set_num_threads(2)
        from stages.core.seeding import seed_and_pin
        seed_and_pin(3, 1)
        first = torch.rand(2).tolist()
        torch.manual_seed(3)
        print(first == torch.rand(2).tolist(), torch.get_num_threads())
        """
    )
    assert out == "True 1"


def test_a_stage_that_never_imports_torch_never_loads_it():
    out = _run(
        """
        import sys
        import numpy as np
        from stages.core.seeding import seed_and_pin
        seed_and_pin(5, 2)
        draw = np.random.rand()
        np.random.seed(5)
        print(draw == np.random.rand(), "torch" in sys.modules)
        """
    )
    assert out == "True False"


def test_the_stage_runner_imports_only_its_own_paper():
    out = _run(
        """
        import sys
        from stages.papers.registry import PAPER_SPECS
        from stages.platform.pipelines import find_stage
        pipeline, step = find_stage("blae-claims", {})
        papers = {spec.split(".")[2] for spec in PAPER_SPECS}
        loaded = {name.split(".")[2] for name in sys.modules if name.startswith("stages.papers.")}
        others = sorted(loaded & papers - {"blae"})
        print(pipeline.id, step.name, others)
        """
    )
    assert out == "blae claims []"
