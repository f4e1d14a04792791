"""One package per paper: its params model, steps and README. `stages.papers.registry` lists them."""
