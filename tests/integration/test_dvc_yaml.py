"""dvc.yaml is generated from the step specs; code deps are each step's computed import closure."""

from __future__ import annotations

import shutil

import pytest
import yaml

from stages.core.closure import NO_OUTPUT_EFFECT, code_files, module_closure
from stages.platform.dvc_yaml import render
from stages.platform.pipelines import all_pipelines
from tests.conftest import run_cli


def _stages(repo_root):
    return yaml.safe_load((repo_root / "dvc.yaml").read_text())["stages"]


def test_committed_dvc_yaml_matches_the_specs(repo_root):
    result = run_cli(["dvc-yaml", "--check"], repo_root)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "up to date" in result.stdout


def test_check_fails_with_a_diff_when_dvc_yaml_is_edited(tmp_path, repo_root):
    for name in ("dvc.yaml", "params.yaml"):
        shutil.copy(repo_root / name, tmp_path / name)
    edited = (tmp_path / "dvc.yaml").read_text().replace("- mrmc.pool_size\n", "", 1)
    (tmp_path / "dvc.yaml").write_text(edited)
    result = run_cli(["dvc-yaml", "--check", "--workspace", str(tmp_path)], repo_root)
    assert result.returncode == 2
    assert "+    - mrmc.pool_size" in result.stdout and "run `icml25 dvc-yaml`" in result.stderr
    assert (tmp_path / "dvc.yaml").read_text() == edited  # --check never writes


def test_params_keys_exist_in_params_yaml(repo_root):
    params = yaml.safe_load((repo_root / "params.yaml").read_text())
    for name, stage in _stages(repo_root).items():
        for key in stage.get("params", []):
            node = params
            for part in key.split("."):
                assert isinstance(node, dict) and part in node, f"{name}: params key {key} not in params.yaml"
                node = node[part]


def test_code_deps_are_files_that_exist_never_folders(repo_root):
    for name, stage in _stages(repo_root).items():
        code = [path for path in stage["deps"] if path.startswith("stages/")]
        assert code, name
        for path in code:
            assert (repo_root / path).is_file(), f"{name}: {path}"


def test_each_stage_depends_on_the_module_that_runs_it(repo_root):
    stages = _stages(repo_root)
    for pipeline in all_pipelines():
        for step in pipeline.steps:
            module = pipeline.run_ref(step).partition(":")[0]
            assert module.replace(".", "/") + ".py" in stages[pipeline.stage_name(step)]["deps"]


@pytest.mark.parametrize(
    ("stage", "needed"),
    [
        ("mrmc-evaluate", {"stages/models/mlp.py", "stages/models/training.py", "stages/datasets/classification.py"}),
        ("mrmc-claims", {"stages/core/claims.py"}),
        ("rings-separability", {"stages/methods/graphs/separability.py", "stages/methods/graphs/figures.py"}),
        ("data-digits", {"stages/datasets/sources/digits.py", "stages/core/seeding.py", "stages/core/validate.py"}),
    ],
)  # fmt: skip
def test_real_imports_are_declared(repo_root, stage, needed):
    assert needed <= set(_stages(repo_root)[stage]["deps"])


@pytest.mark.parametrize(
    ("stage", "absent"),
    [
        ("rings-separability", {"stages/methods/graphs/audit.py", "stages/models/graph_training.py"}),
        ("rings-prepare", {"stages/methods/graphs/perturbations.py", "stages/models/training.py"}),
        ("data-digits", {"stages/datasets/sources/fashion_mnist.py", "stages/models/training.py"}),
        ("report", {"stages/papers/registry.py", "stages/core/steps.py"}),
    ],
)  # fmt: skip
def test_unrelated_code_is_not_a_dep(repo_root, stage, absent):
    assert not absent & set(_stages(repo_root)[stage]["deps"])


def test_modules_without_effect_on_outputs_are_never_deps(repo_root):
    files = {module.replace(".", "/") + ".py" for module in NO_OUTPUT_EFFECT}
    for name, stage in _stages(repo_root).items():
        assert not files & set(stage["deps"]), name


def test_closure_follows_imports_inside_functions():
    # commands.py imports the audit only inside its handler: running it runs that code too
    assert "stages.methods.graphs.standalone" in module_closure(["stages.methods.graphs.commands"])
    files = code_files(["stages.methods.graphs.commands"])
    assert "stages/methods/__init__.py" in files and "stages/methods/graphs/__init__.py" in files


def test_an_optional_source_gets_its_stage_when_configured(repo_root):
    params = yaml.safe_load((repo_root / "params.yaml").read_text())
    assert "data-tu:" not in render(params, repo_root)
    params["common"]["datasets"]["tu"] = {"path": "my/tu", "name": "MUTAG"}
    params["rings"]["datasets"] = ["tu", "structure_control"]
    stages = yaml.safe_load(render(params, repo_root))["stages"]
    assert stages["data-tu"]["deps"][:2] == ["data/params.checked", "${common.datasets.tu.path}"]
    assert stages["data-tu"]["outs"] == ["data/raw/tu/graphs", "data/raw/tu/summary.json"]
    assert "data/raw/tu/graphs" in stages["rings-prepare"]["deps"]
    assert "data/raw/b3db/graphs" not in stages["rings-prepare"]["deps"]
