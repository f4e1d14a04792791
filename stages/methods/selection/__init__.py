"""Data selection families. Static core-sets: `stages.methods.selection.coreset` (`SELECTORS` registry)."""
