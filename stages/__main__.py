"""`python -m stages ...`: the library's commands (dvc.yaml runs stages this way, so a workspace runs its own code).

`icml25` (`python -m flows`) adds the Prefect commands on top.
"""

import os

# Idle OpenMP threads sleep instead of spinning: on a shared, oversubscribed machine spinning torch threads cost
# ~10x the CPU time of an epoch (measured on the project's 2-core machine); results are unchanged.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

from stages.commands import main

raise SystemExit(main())
