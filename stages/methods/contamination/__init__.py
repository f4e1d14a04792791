"""Benchmark data contamination (Sun et al., ICML 2025): judge a benchmark update by question-level agreement of
0/1 correctness vectors.

- `metrics`: fidelity, contamination resistance, the vanilla baseline, paired bootstrap intervals over questions;
- `items`: multiple-choice items and their key check; `strategies`: the registry of rewrite strategies (the two
  official rule-based ones exactly, rule-based analogues of the GPT-4o ones); `lexicon`: the synonym lexicon;
- `scoring`: the official MC scoring (label log-probabilities), batched, and the official loop;
- `lm`, `tiny_gpt`: the small word-level GPT, its training loop (answer-only loss) for pretraining and
  contamination; `figures`; `own_data` and `commands`: `icml25 bdc-assess`.

Nothing here knows about papers.
"""
