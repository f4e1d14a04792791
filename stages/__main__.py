"""`python -m stages ...`: the library's commands (dvc.yaml runs stages this way, so a workspace runs its own code).

`icml25` (`python -m flows`) adds the Prefect commands on top.
"""

from stages.commands import main

raise SystemExit(main())
