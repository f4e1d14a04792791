"""Cooperative rationalization (RNP) and its A2I repair: a generator picks a rationale, a predictor classifies from it.

- `config.RationaleConfig`: sizes and loss weights (no torch import);
- `encoders.ENCODERS`: the modality a trainer runs on, `gru` (token rationales) or `gcn` (edge rationales), one
  interface (`base.Encoder`) so that `trainer.train_rationalizer` runs on text and on graphs alike;
- `objectives`: the RNP terms and A2I's attack (inspection) and one-sided instruction terms;
- `metrics`: rationale precision/recall/F1 against annotations, sparsity, the per-class selection-rate gap;
- `own_data.rationalize_file` (`icml25 rationalize`): rationales of your own labelled text table as token spans.
"""
