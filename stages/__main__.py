"""`python -m stages ...`: the library's commands (dvc.yaml runs stages this way, so a workspace runs its own code).

`icml25` (`python -m flows`) adds the Prefect commands on top. The interpreter is checked before anything else
is imported: a stage started by another Python than the workspace's `.venv` stops at once.
"""

import os

from stages.platform.interpreter import require_project_interpreter
from stages.platform.kernels import pin_kernels

require_project_interpreter()

# Idle OpenMP threads sleep instead of spinning: on a shared, oversubscribed machine spinning torch threads cost
# ~10x the CPU time of an epoch (measured on the project's 2-core machine); results are unchanged.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
pin_kernels()  # before torch or NumPy loads: the same float kernels on every AVX2 machine (stages/platform/kernels.py)

from stages.platform.commands import main  # noqa: E402 - only once the interpreter is known to be the project's

raise SystemExit(main())
