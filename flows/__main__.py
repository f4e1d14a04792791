"""`python -m flows ...` is the `icml25` command."""

from flows.cli import main

raise SystemExit(main())
