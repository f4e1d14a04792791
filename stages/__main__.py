"""`python -m stages ...`: the library's commands (dvc.yaml runs stages this way, so a workspace runs its own code).

`icml25` (`python -m flows`) adds the Prefect commands on top. The interpreter is checked before anything else
is imported: a stage started by another Python than the workspace's `.venv` stops at once.
"""

from stages.interpreter import require_project_interpreter

require_project_interpreter()

from stages.commands import main  # noqa: E402 - only once the interpreter is known to be the project's

raise SystemExit(main())
