"""Tabular data synthesis on Polars tables with numeric and categorical columns.

- `table`: column typing and input checks (errors name the column);
- `base`: the interface (`fit(table)`, `sample(rng)`) and the array encoding;
- `tabsds`: TabSDS's maths (IOS, SJPPDS, rank matching, category blocks) on arrays;
- `synthesizers`, `sdv_peers` (registry `SYNTHESIZERS` in `registry`): TabSDS, TabSJPPDS, SMOTE-style,
  additive noise, SDV's Gaussian copula, CTGAN and TVAE;
- `metrics`: utility, detection, membership inference, DCR, association error, KS/TV.

Nothing here knows about papers; `icml25 synthesize` runs any registered synthesizer on a user's table.
"""
