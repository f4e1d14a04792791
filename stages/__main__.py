"""`python -m stages ...`: the library's commands (dvc.yaml runs stages this way, so a workspace runs its own code).

`icml25` (`python -m flows`) adds the Prefect commands on top.

OpenMP threads sleep rather than spin while they wait (unless the caller chose a policy): on the shared,
oversubscribed 2-core machine spinning threads made two-thread torch training ~8x slower than one thread, and
sleeping ones match it. It must be set before torch loads its OpenMP runtime, hence here; it changes no result.
"""

import os

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

from stages.commands import main

raise SystemExit(main())
