"""The platform: what runs, records and reports the papers, as opposed to the library they are built from.

- `commands`: the `python -m stages` / `icml25` library commands and the own-data commands papers contribute.
- `pipelines`: every pipeline (params check, datasets, core-set, papers, report) and running one DVC stage.
- `params_check`: the `params` stage, which checks params.yaml and the user's files before DVC deletes anything.
- `dvc_yaml`: generates `dvc.yaml` from the step specs (code deps as import closures).
- `lock_status`: which stages `dvc.lock` no longer records for this workspace's code, params and data.
- `results`: the README and docs/results.md tables, generated from the locked claims outputs.
- `report`: the `report` stages that gather every paper's claims.
- `audit`: params, data hashes, code and claims of a run, from `dvc.lock`.
- `experiments`: `icml25 run`, a paper's params overrides as a DVC experiment.
- `smoke`: every pipeline at tiny sizes through `dvc repro` in a scratch copy.
- `benchmarks`, `startup_bench`: platform benchmarks (Parquet I/O, no-op repro, selection, stage start-up).
- `kernels`: the float kernels pinned before NumPy or torch load.
- `interpreter`: the check that a command runs on the workspace's own `.venv`.
"""
