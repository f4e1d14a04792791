"""The bad-inputs battery: each input → exit code 2 → a message naming the file or key → nothing written.

Every own-data command and every paper's first stage is run on the same broken inputs; a row added here is
enforced for all of them.
"""

from __future__ import annotations

import shutil

import pytest

from stages.core.params import (
    ParamsError,
    apply_overrides,
    read_params_file,
    validate_section,
    write_params_file,
)
from stages.models.config import TrainConfig
from stages.papers.registry import PAPERS
from tests.conftest import run_cli

pytestmark = pytest.mark.integration

NOT_PARQUET = b"PAR1 this is not a Parquet file\x00\x01"


def _garbage(folder, name="mine.parquet"):
    path = folder / name
    path.write_bytes(NOT_PARQUET)
    return path


OWN_DATA_COMMANDS = [
    (["validate", "--input", "mine.parquet"], "mine.parquet: not a readable Parquet file"),
    (
        ["select", "--input", "mine.parquet", "--method", "random", "--output", "out.parquet"],
        "mine.parquet: not a readable Parquet file",
    ),
]


@pytest.mark.parametrize(("args", "message"), OWN_DATA_COMMANDS, ids=["validate", "select"])
def test_unreadable_parquet_is_named_by_every_own_data_command(tmp_path, args, message):
    _garbage(tmp_path)
    result = run_cli(args, tmp_path)
    assert result.returncode == 2, result.stderr
    assert message in result.stderr and "Traceback" not in result.stderr
    assert sorted(path.name for path in tmp_path.iterdir()) == ["mine.parquet"]


def test_unreadable_graph_table_is_named_by_audit_graphs(tmp_path):
    folder = tmp_path / "graphs"
    folder.mkdir()
    for name in ("graphs.parquet", "nodes.parquet", "edges.parquet"):
        _garbage(folder, name)
    result = run_cli(["audit-graphs", "--tables", "graphs", "--output", "audit"], tmp_path)
    assert result.returncode == 2, result.stderr
    assert "not a readable Parquet file" in result.stderr and "Traceback" not in result.stderr
    assert not (tmp_path / "audit").exists()


TRAIN_CONFIG_CASES = [
    ("learning_rate=.inf", "learning_rate", "finite number"),
    ("learning_rate=.nan", "learning_rate", "finite number"),
    ("hidden=[0]", "hidden.0", "greater than 0"),
]


def _trained_config_key(paper_id: str) -> str | None:
    """The first key of the paper's params typed as the shared `TrainConfig`."""
    fields = PAPERS.get(paper_id).pipeline.model().model_fields
    return next((key for key, field in fields.items() if field.annotation is TrainConfig), None)


TRAINED_PAPERS = [paper_id for paper_id in PAPERS.names() if _trained_config_key(paper_id)]


@pytest.mark.parametrize("paper_id", TRAINED_PAPERS)
@pytest.mark.parametrize(("override", "field", "message"), TRAIN_CONFIG_CASES)
def test_training_settings_that_cannot_train_are_named_by_every_paper(
    repo_root, paper_id, override, field, message
):
    key = _trained_config_key(paper_id)
    params = apply_overrides(read_params_file(repo_root / "params.yaml"), [f"{paper_id}.{key}.{override}"])
    model = PAPERS.get(paper_id).pipeline.model()
    with pytest.raises(ParamsError, match=rf"{paper_id}\.{key}\.{field}: .*{message}"):
        validate_section(model, params[paper_id], paper_id)


def test_a_first_stage_stops_on_an_infinite_learning_rate_and_writes_nothing(tmp_path, repo_root):
    params = apply_overrides(read_params_file(repo_root / "params.yaml"), ["mrmc.train.learning_rate=.inf"])
    write_params_file(params, tmp_path / "params.yaml")
    result = run_cli(["stage", PAPERS.get("mrmc").pipeline.stage_names()[0]], tmp_path)
    assert result.returncode == 2, result.stderr
    assert "mrmc.train.learning_rate: Input should be a finite number" in result.stderr
    assert not (tmp_path / "data").exists()


def test_an_invalid_yaml_override_is_named(tmp_path, repo_root):
    shutil.copy(repo_root / "params.yaml", tmp_path / "params.yaml")
    result = run_cli(["run", "mrmc", "-S", "mrmc.budgets=[0.1, 0.3"], tmp_path)
    assert result.returncode == 2, result.stderr
    assert "override 'mrmc.budgets=[0.1, 0.3': the value is not valid YAML" in result.stderr
    assert "Traceback" not in result.stderr
