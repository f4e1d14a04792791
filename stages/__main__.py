"""`python -m stages ...` is the `icml25` command (dvc.yaml uses this form so a workspace runs its own code)."""

from stages.cli import main

raise SystemExit(main())
