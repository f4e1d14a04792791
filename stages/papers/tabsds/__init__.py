"""TabSDS (Chaibub Neto, ICML 2025): rank and sequential-shuffling tabular synthesis."""
