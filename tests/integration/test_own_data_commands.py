"""Own-data commands on bad inputs (issue 37): `bandit`, `kindel-score`, `synthesize`, `rl-train`.

Each row: the command line a user types → exit code 2, one `error:` line naming the option, file or column,
no traceback, and nothing written (an earlier output is left as it was). Positive runs check what the
commands now do with inputs they used to mishandle (duplicate arms, `compose_factorized`, near-unique string
columns, Decimal columns, wide tables).
"""

from __future__ import annotations

import decimal
import json
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from stages.platform.commands import main

EARLIER = b"an earlier output"


def _files(folder: Path) -> dict[str, bytes]:
    return {str(path.relative_to(folder)): path.read_bytes() for path in folder.rglob("*") if path.is_file()}


def _run(folder: Path, monkeypatch, capsys, args: list[str]) -> tuple[int, str]:
    monkeypatch.chdir(folder)
    code = main(args)
    return code, capsys.readouterr().err


def _assert_refused(folder, monkeypatch, capsys, args, fragments):
    """Exit 2, a one-line error holding every fragment, no traceback, no file added or changed."""
    before = _files(folder)
    code, stderr = _run(folder, monkeypatch, capsys, args)
    assert code == 2, stderr
    errors = [line for line in stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, stderr
    assert all(fragment in errors[0] for fragment in fragments), stderr
    assert "Traceback" not in stderr
    assert _files(folder) == before


# ---- icml25 bandit ----


def _arms(folder: Path) -> None:
    pl.DataFrame(
        {"x0": [1.0, 1.0, 0.0, 0.5], "x1": [0.0, 0.0, 1.0, 0.5], "name": ["a", "b", "c", "d"]}
    ).write_parquet(folder / "arms.parquet")
    (folder / "theta.json").write_text(json.dumps({"theta": [1, 0]}))
    (folder / "runs").mkdir()
    (folder / "runs" / "summary.json").write_bytes(EARLIER)


BANDIT = ["bandit", "--arms", "arms.parquet", "--horizon", "200", "--output", "runs"]
BANDIT_CASES = {
    "θ too long": (["--theta", "1,0,3"], ["--theta", "exactly d = 2"]),
    "θ too short": (["--theta", "1"], ["--theta", "exactly d = 2"]),
    "θ with NaN": (["--theta", "nan,1"], ["--theta", "finite"]),
    "θ with inf in a list": (["--theta", "[1, Infinity]"], ["--theta", "finite"]),
    "θ with a bool": (["--theta", "[1, true]"], ["--theta", "list of numbers"]),
    "θ not numbers": (["--theta", "a,b"], ["--theta", "list of numbers"]),
    "θ empty": (["--theta", ""], ["--theta"]),
    "θ json not a list": (["--theta", "theta.json"], ["theta.json", "list of numbers"]),
    "θ json missing": (["--theta", "nope.json"], ["nope.json", "not found"]),
    "negative seed": (["--theta", "1,0", "--seed", "-1"], ["--seed", "-1"]),
    "huge seed": (["--theta", "1,0", "--seed", str(2**40)], ["--seed"]),
    "zero horizon": (["--theta", "1,0", "--horizon", "0"], ["--horizon", "T = 0"]),
    "huge horizon": (["--theta", "1,0", "--horizon", str(10**12)], ["--horizon"]),
    "negative noise": (["--theta", "1,0", "--noise-sd", "-1"], ["--noise-sd"]),
    "infinite noise": (["--theta", "1,0", "--noise-sd", "inf"], ["--noise-sd"]),
    "unknown algorithm": (["--theta", "1,0", "--algorithm", "nope"], ["'nope'"]),
    "unknown column": (["--theta", "1,0", "--feature-columns", "x0,zz"], ["arms.parquet", "zz"]),
    "string column": (["--theta", "1,0", "--feature-columns", "x0,name"], ["'name'", "not numeric"]),
    "a column twice": (["--theta", "1,0", "--feature-columns", "x0,x0"], ["--feature-columns"]),
}


@pytest.mark.parametrize(("extra", "fragments"), BANDIT_CASES.values(), ids=list(BANDIT_CASES))
def test_bandit_bad_inputs(tmp_path, monkeypatch, capsys, extra, fragments):
    _arms(tmp_path)
    args = list(BANDIT)
    if "--horizon" in extra:  # the case's horizon replaces the default one
        args[args.index("--horizon") : args.index("--horizon") + 2] = []
    _assert_refused(tmp_path, monkeypatch, capsys, [*args, *extra], fragments)


def test_bandit_all_identical_arms_are_refused(tmp_path, monkeypatch, capsys):
    pl.DataFrame({"x0": [1.0, 1.0, 1.0]}).write_parquet(tmp_path / "arms.parquet")
    _assert_refused(
        tmp_path,
        monkeypatch,
        capsys,
        [*BANDIT, "--theta", "1"],
        ["arms.parquet", "identical", "two distinct"],
    )


@pytest.mark.parametrize("algorithm", ["e4", "blae", "phaelimd", "rs_oful", "linucb"])
def test_bandit_duplicate_arms_are_merged_and_named(tmp_path, monkeypatch, capsys, algorithm):
    _arms(tmp_path)
    args = [*BANDIT, "--theta", "[1, 0]", "--algorithm", algorithm]
    code, stderr = _run(tmp_path, monkeypatch, capsys, args)
    assert code == 0, stderr
    assert "1 duplicate arm(s)" in stderr and "columns left out (not numeric or not listed): name" in stderr
    summary = json.loads((tmp_path / "runs" / "summary.json").read_text())  # valid JSON (E4 died on NaN)
    assert summary["n_arms"] == 4 and summary["distinct_arms"] == 3 and summary["duplicate_arms_dropped"] == 1
    assert summary["columns_left_out"] == ["name"] and summary["feature_columns"] == ["x0", "x1"]
    assert summary["best_arm"] == 0 and 1 not in summary["survivors"]  # row numbers of the file, row 1 merged
    trace = pl.read_parquet(tmp_path / "runs" / "trace.parquet")
    assert set(trace["arm"].unique().to_list()) <= {0, 2, 3}
    report = (tmp_path / "runs" / "report.md").read_text()
    assert "1 duplicate arm(s)" in report and "columns left out" in report and "name" in report


# ---- icml25 kindel-score ----


@pytest.fixture(scope="module")
def screen_folder(tmp_path_factory) -> Path:
    """A small simulated screen written in the KinDEL layout (64 compounds)."""
    from stages.methods.del_screens.config import SimulationOptions
    from stages.methods.del_screens.files import Screen, write_folder
    from stages.methods.del_screens.simulate import simulate

    folder = tmp_path_factory.mktemp("kindel") / "screen"
    screen = simulate(SimulationOptions(per_cycle=4, heldout=5, external=2, outside_blocks=1))
    write_folder(Screen(screen.library, screen.splits, screen.heldout), folder, "sim")
    return folder


def _smiles(folder: Path) -> None:
    pl.DataFrame({"smiles": ["CCOC(=O)c1ccccc1N", "CCO"]}).write_csv(folder / "mine.csv")
    pl.DataFrame({"smiles": ["CCO", "C1CC(("]}).write_csv(folder / "bad.csv")
    pl.DataFrame({"smiles": []}, schema={"smiles": pl.String}).write_csv(folder / "empty.csv")
    (folder / "blank.csv").write_text("")
    pl.DataFrame({"smiles": ["CCO"], "score": [1.0]}).write_csv(folder / "scored.csv")
    (folder / "out.csv").write_bytes(EARLIER)


KINDEL_CASES = {
    "negative seed": (["--input", "mine.csv", "--seed", "-1"], ["--seed", "-1"]),
    "unknown model": (
        ["--input", "mine.csv", "--model", "nope"],
        ["--model", "'nope'", "compose_factorized"],
    ),
    "SMILES RDKit cannot parse": (["--input", "bad.csv"], ["bad.csv", "row 1", "'smiles'", "C1CC(("]),
    "0 rows": (["--input", "empty.csv"], ["empty.csv", "0 rows"]),
    "empty file": (["--input", "blank.csv"], ["blank.csv", "not a readable"]),
    "missing file": (["--input", "nope.csv"], ["nope.csv", "not found"]),
    "missing column": (["--input", "mine.csv", "--smiles-column", "SMILES"], ["--smiles-column", "'SMILES'"]),
    "a score column already": (["--input", "scored.csv"], ["scored.csv", "'score'"]),
    "factorized without building blocks": (
        ["--input", "mine.csv", "--model", "compose_factorized"],
        ["compose_factorized", "smiles_a, smiles_b, smiles_c"],
    ),
    "output of another kind": (["--input", "mine.csv", "--output", "out.txt"], ["--output", "out.txt"]),
}


@pytest.mark.parametrize(("extra", "fragments"), KINDEL_CASES.values(), ids=list(KINDEL_CASES))
def test_kindel_score_bad_inputs_stop_before_training(
    tmp_path, monkeypatch, capsys, screen_folder, extra, fragments
):
    _smiles(tmp_path)
    args = ["kindel-score", "--library", str(screen_folder), "--target", "sim", "--output", "out.csv"]
    if "--output" in extra:
        args = args[:-2]
    with monkeypatch.context() as patch:  # nothing may train: the checks come first
        patch.setattr("stages.methods.del_screens.scoring.read_folder", _no_training)
        _assert_refused(tmp_path, monkeypatch, capsys, [*args, *extra], fragments)


def _no_training(*args, **kwargs):
    raise AssertionError("the screen was read (training would follow) before the input was checked")


def test_kindel_score_compose_factorized_scores_a_table_with_building_blocks(
    tmp_path, monkeypatch, capsys, screen_folder
):
    library = pl.read_parquet(screen_folder / "sim_1M.parquet")
    mine = library.select("smiles", "smiles_a", "smiles_b", "smiles_c").head(3)
    mine.write_csv(tmp_path / "mine.csv")
    args = ["kindel-score", "--library", str(screen_folder), "--target", "sim", "--input", "mine.csv"]
    code, stderr = _run(
        tmp_path, monkeypatch, capsys, [*args, "--output", "out.parquet", "--model", "compose_factorized"]
    )
    assert code == 0, stderr
    out = pl.read_parquet(tmp_path / "out.parquet")
    assert out.columns == [*mine.columns, "score"] and out.height == 3 and out["score"].is_finite().all()


def test_a_kindel_folder_is_read_as_the_official_code_reads_it(tmp_path, screen_folder):
    """NaN/null library counts are 0 (`fillna(0.0)`); a held-out CSV with only `smiles` and `kd` is read."""
    import shutil

    from stages.methods.del_screens.files import read_folder
    from stages.methods.del_screens.schema import heldout_path, library_path

    folder = tmp_path / "screen"
    shutil.copytree(screen_folder, folder)
    library = pl.read_parquet(folder / library_path("sim"))
    library.with_columns(
        pl.when(pl.int_range(pl.len()) == 0)
        .then(None)
        .otherwise(pl.col("seq_target_1"))
        .alias("seq_target_1"),
        pl.when(pl.int_range(pl.len()) == 1)
        .then(float("nan"))
        .otherwise(pl.col("seq_load"))
        .alias("seq_load"),
    ).write_parquet(folder / library_path("sim"))
    held = pl.read_csv(folder / heldout_path("sim", "ondna"))
    held.select("smiles", "kd").write_csv(folder / heldout_path("sim", "ondna"))
    screen, _ = read_folder(folder, "sim")
    assert screen.library["seq_target_1"][0] == 0.0 and screen.library["seq_load"][1] == 0.0
    heldout = screen.heldout["ondna"]
    assert heldout.height == held.height and heldout["seq_target_1"].null_count() == held.height


# ---- icml25 synthesize ----


def _tables(folder: Path, rows: int = 60) -> None:
    rng = np.random.default_rng(0)
    base = {"x": rng.normal(size=rows), "kind": rng.choice(["a", "b", "c"], rows)}
    pl.DataFrame({**base, "email": [f"user{i}@example.org" for i in range(rows)]}).write_csv(
        folder / "email.csv"
    )
    pl.DataFrame({**base, "when": [f"2024-01-{i % 28 + 1:02d}" for i in range(rows)]}).write_csv(
        folder / "date.csv"
    )
    (folder / "out.csv").write_bytes(EARLIER)


SYNTH = ["synthesize", "--output", "out.csv"]
SYNTH_CASES = {
    "near-unique e-mails": (["--input", "email.csv"], ["'email'", "near-unique", "--keep-verbatim email"]),
    "date strings": (["--input", "date.csv"], ["'when'", "dates", "--id-column when"]),
    "test fraction 0": (
        ["--input", "email.csv", "--id-column", "email", "--test-fraction", "0"],
        ["--test-fraction"],
    ),
    "test fraction 1": (
        ["--input", "email.csv", "--id-column", "email", "--test-fraction", "1"],
        ["--test-fraction"],
    ),
    "test fraction -0.5": (
        ["--input", "email.csv", "--id-column", "email", "--test-fraction", "-0.5"],
        ["--test-fraction"],
    ),
    "keep-verbatim of no column": (
        ["--input", "email.csv", "--keep-verbatim", "nope"],
        ["--keep-verbatim", "nope"],
    ),
}


@pytest.mark.parametrize(("extra", "fragments"), SYNTH_CASES.values(), ids=list(SYNTH_CASES))
def test_synthesize_bad_inputs(tmp_path, monkeypatch, capsys, extra, fragments):
    _tables(tmp_path)
    _assert_refused(tmp_path, monkeypatch, capsys, [*SYNTH, *extra, "--report", "r.md"], fragments)


def test_synthesize_keeps_a_near_unique_column_only_when_asked_and_says_how_much_is_copied(
    tmp_path, monkeypatch, capsys
):
    _tables(tmp_path)
    code, stderr = _run(
        tmp_path, monkeypatch, capsys, [*SYNTH, "--input", "email.csv", "--keep-verbatim", "email"]
    )
    assert code == 0, stderr
    assert (
        "warning: column 'email'" in stderr and "100% of its synthetic values are copied verbatim" in stderr
    )
    out = pl.read_csv(tmp_path / "out.csv")
    assert set(out["email"]) <= set(pl.read_csv(tmp_path / "email.csv")["email"])
    code, stderr = _run(
        tmp_path, monkeypatch, capsys, [*SYNTH, "--input", "email.csv", "--id-column", "email"]
    )
    assert code == 0, stderr
    assert pl.read_csv(tmp_path / "out.csv").columns == ["x", "kind"] and "warning" not in stderr


def test_synthesize_reads_decimals_as_floats_and_pictures_every_column(tmp_path, monkeypatch, capsys):
    rng = np.random.default_rng(1)
    columns = {f"c{j}": rng.normal(size=40) for j in range(13)}
    price = [decimal.Decimal(f"{value:.2f}") for value in rng.uniform(1, 9, 40)]
    pl.DataFrame({**columns, "price": price, "kind": rng.choice(["a", "b"], 40)}).write_parquet(
        tmp_path / "wide.parquet"
    )
    args = ["synthesize", "--input", "wide.parquet", "--output", "out/s.parquet", "--report", "out/r.md"]
    code, stderr = _run(tmp_path, monkeypatch, capsys, args)
    assert code == 0, stderr
    assert "Decimal column(s) synthesized as Float64: price" in stderr
    assert pl.read_parquet(tmp_path / "out" / "s.parquet").schema["price"] == pl.Float64
    report = (tmp_path / "out" / "r.md").read_text()
    assert "![marginals](r.marginals.png)" in report and "![marginals](r.marginals-2.png)" in report
    assert "| kind | 100.0% |" in report  # the verbatim share of every string column
    assert (tmp_path / "out" / "r.marginals-2.png").is_file()


def test_verbatim_risk_rules():
    from stages.methods.tabular.own_data import string_column_risk

    assert string_column_risk(pl.Series(["a", "b", "a", "c"] * 10)) is None
    assert "near-unique" in string_column_risk(pl.Series([f"id{i}" for i in range(40)]))
    assert "near-unique" in string_column_risk(pl.Series([f"id{i // 2}" for i in range(200)]))
    assert "dates" in string_column_risk(pl.Series(["2024-01-02", "2024-03-04"] * 10))
    assert "dates" in string_column_risk(pl.Series(["2024-01-02 10:00:00", "2024-03-04 11:30:00"] * 10))


# ---- icml25 rl-train ----

RL = ["rl-train", "--output", "model"]
RL_CASES = {
    "continuous actions": (
        ["--env-id", "Pendulum-v1", "--steps", "64"],
        ["--env-id Pendulum-v1", "Box", "continuous"],
    ),
    "zero steps": (["--env-id", "CartPole-v1", "--steps", "0"], ["--steps", "≥ 1"]),
    "negative steps": (["--env-id", "CartPole-v1", "--steps", "-5"], ["--steps", "-5"]),
    "unknown env": (["--env-id", "Nope-v0", "--steps", "64"], ["--env-id", "'Nope-v0'"]),
    "unknown wrapper": (["--env-id", "CartPole-v1", "--wrapper", "bogus"], ["--wrapper", "'bogus'"]),
    "module not importable": (
        ["--env-id", "CartPole-v1", "--import", "no_such_module_x"],
        ["--import no_such_module_x"],
    ),
    "negative seed": (["--env-id", "CartPole-v1", "--seed", "-1"], ["--seed", "-1"]),
    "zero envs": (["--env-id", "CartPole-v1", "--n-envs", "0"], ["--n-envs"]),
    "gamma above 1": (["--env-id", "CartPole-v1", "--gamma", "2"], ["--gamma"]),
    "NaN policy rate": (["--env-id", "CartPole-v1", "--policy-lr", "nan"], ["--policy-lr"]),
    "negative MLP rate": (["--env-id", "CartPole-v1", "--model", "mlp", "--lr", "-1"], ["--lr"]),
}


@pytest.mark.parametrize(("extra", "fragments"), RL_CASES.values(), ids=list(RL_CASES))
def test_rl_train_bad_inputs(tmp_path, monkeypatch, capsys, extra, fragments):
    (tmp_path / "model.gbrl_model").write_bytes(EARLIER)
    with monkeypatch.context() as patch:  # nothing may train: the checks come first
        patch.setattr("stages.methods.rl.run.train_policy", _no_training)
        _assert_refused(tmp_path, monkeypatch, capsys, [*RL, *extra], fragments)


def test_rl_train_trains_a_discrete_env(tmp_path, monkeypatch, capsys):
    args = [*RL, "--env-id", "CartPole-v1", "--steps", "64", "--n-envs", "2", "--n-steps", "32"]
    code, stderr = _run(tmp_path, monkeypatch, capsys, [*args, "--model", "mlp", "--output", "m.safetensors"])
    assert code == 0, stderr
    assert (tmp_path / "m.safetensors").is_file()


# ---- icml25 validate / select / audit: tables and paths (issue 39) ----


def _selection_tables(folder: Path) -> None:
    rng = np.random.default_rng(0)
    empty = {"f1": pl.Series([], dtype=pl.Float64), "label": pl.Series([], dtype=pl.Int64)}
    pl.DataFrame(empty).write_parquet(folder / "empty.parquet")
    huge = rng.normal(size=20)
    huge[3] = 1e300
    pl.DataFrame({"myfeat": huge, "f2": rng.normal(size=20), "label": np.arange(20) % 2}).write_parquet(
        folder / "huge.parquet"
    )
    pl.DataFrame(
        {
            "sample_id": np.arange(20),
            "features": rng.normal(size=(20, 3)).astype(np.float32),
            "label": (np.arange(20) % 2) * 10**15,
            "split": ["train"] * 20,
        }
    ).write_parquet(folder / "bigclass.parquet")
    pl.DataFrame({"f1": rng.normal(size=40), "label": np.arange(40) % 2}).write_parquet(
        folder / "good.parquet"
    )
    (folder / "userdir").mkdir()
    (folder / "userdir" / "mine.txt").write_bytes(EARLIER)


TABLE_CASES = {
    "validate, no rows": (["validate", "--input", "empty.parquet"], ["empty.parquet", "no rows"]),
    "select, no rows": (
        ["select", "--input", "empty.parquet", "--output", "out.parquet", "--feature-space", "raw"],
        ["empty.parquet", "no rows"],
    ),
    "validate, a class id of 10¹⁵": (["validate", "--input", "bigclass.parquet"], ["class ids 0..K-1"]),
    "validate, 1e300 in a column": (["validate", "--input", "huge.parquet"], ["huge.parquet"]),
    "validate, report under /proc": (
        ["validate", "--input", "good.parquet", "--report", "/proc/icml25.json"],
        ["/proc/icml25.json", "cannot write there"],
    ),
    "validate, report over a folder": (
        ["validate", "--input", "good.parquet", "--report", "userdir"],
        ["userdir", "folder"],
    ),
    "select, output over the input": (
        ["select", "--input", "good.parquet", "--output", "good.parquet", "--feature-space", "raw"],
        ["--output good.parquet", "is also --input"],
    ),
    "select, report over a folder": (
        [
            "select",
            "--input",
            "good.parquet",
            "--output",
            "o.parquet",
            "--feature-space",
            "raw",
            "--report",
            "userdir",
        ],
        ["userdir", "existing folder"],
    ),
    "select, two outputs on one path": (
        ["select", "--input", "good.parquet", "--output", "o.parquet", "--report", "o.parquet"],
        ["--report o.parquet", "same path"],
    ),
    "audit, not a workspace": (["audit", "blae", "--workspace", "/tmp"], ["nothing to audit"]),
}


@pytest.mark.parametrize("case", TABLE_CASES, ids=list(TABLE_CASES))
def test_tables_and_paths_are_refused_by_name(tmp_path, monkeypatch, capsys, case):
    _selection_tables(tmp_path)
    args, fragments = TABLE_CASES[case]
    _assert_refused(tmp_path, monkeypatch, capsys, args, fragments)


def test_the_1e300_value_is_reported_under_the_users_column(tmp_path, monkeypatch, capsys):
    _selection_tables(tmp_path)
    code, stderr = _run(tmp_path, monkeypatch, capsys, ["validate", "--input", "huge.parquet"])
    assert code == 2
    assert "column 'myfeat': 1 value(s) beyond" in stderr and "'features'" not in stderr
