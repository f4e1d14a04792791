"""Typed params: unknown or mistyped keys fail naming the key; overrides and merges."""

from __future__ import annotations

import pytest

from stages.core.errors import ParamsError
from stages.core.params import apply_overrides, deep_merge, load_section, read_params_file, validate_section
from stages.papers.mrmc.params import MRMCParams


def _mrmc_raw(repo_root):
    return read_params_file(repo_root / "params.yaml")["mrmc"]


def test_repository_params_validate(repo_root):
    params = load_section(MRMCParams, "mrmc", repo_root / "params.yaml")
    assert params.budgets == [0.1, 0.3, 0.5, 0.7]
    assert params.judged_budgets == [0.3, 0.5, 0.7]
    assert len(params.seeds) >= 3


def test_unknown_key_is_named(repo_root):
    raw = _mrmc_raw(repo_root) | {"pool_sise": 10}
    with pytest.raises(ParamsError, match=r"mrmc\.pool_sise"):
        validate_section(MRMCParams, raw, "mrmc")


def test_nested_unknown_key_is_named(repo_root):
    raw = apply_overrides({"mrmc": _mrmc_raw(repo_root)}, ["mrmc.trace.epoks=3"])["mrmc"]
    with pytest.raises(ParamsError, match=r"mrmc\.trace\.epoks"):
        validate_section(MRMCParams, raw, "mrmc")


def test_wrong_type_is_named(repo_root):
    raw = apply_overrides({"mrmc": _mrmc_raw(repo_root)}, ["mrmc.train.epochs=many"])["mrmc"]
    with pytest.raises(ParamsError, match=r"mrmc\.train\.epochs"):
        validate_section(MRMCParams, raw, "mrmc")


def test_unknown_selector_option_is_named(repo_root):
    raw = apply_overrides({"mrmc": _mrmc_raw(repo_root)}, ["mrmc.methods.mrmc.options.balanse=true"])["mrmc"]
    with pytest.raises(ParamsError, match=r"balanse"):
        validate_section(MRMCParams, raw, "mrmc")


def test_unknown_selector_lists_valid_names(repo_root):
    raw = apply_overrides({"mrmc": _mrmc_raw(repo_root)}, ["mrmc.methods.random.selector=randum"])["mrmc"]
    with pytest.raises(ParamsError, match=r"randum.*valid names: .*mrmc"):
        validate_section(MRMCParams, raw, "mrmc")


def test_budget_outside_unit_interval_rejected(repo_root):
    raw = _mrmc_raw(repo_root) | {"budgets": [0.1, 1.5]}
    with pytest.raises(ParamsError, match=r"mrmc\.budgets"):
        validate_section(MRMCParams, raw, "mrmc")


def test_overrides_parse_yaml_values():
    result = apply_overrides({"a": {"b": 1}}, ["a.b=2", "a.c=[1, 2]", "d.e=text"])
    assert result == {"a": {"b": 2, "c": [1, 2]}, "d": {"e": "text"}}


def test_override_without_equals_is_rejected():
    with pytest.raises(ParamsError, match="KEY=VALUE"):
        apply_overrides({}, ["mrmc.pool_size"])


def test_deep_merge_keeps_unrelated_keys():
    merged = deep_merge({"a": {"b": 1, "c": 2}, "x": 1}, {"a": {"b": 5}})
    assert merged == {"a": {"b": 5, "c": 2}, "x": 1}


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ("mrmc.pool_size='20000'", "mrmc.pool_size: Input should be a valid integer"),
        ("mrmc.trace.learning_rate='0.1'", "mrmc.trace.learning_rate: Input should be a valid number"),
        ("coreset.trace.epochs=2.5", "coreset.trace.epochs: Input should be a valid integer"),
        ("common.datasets.b3db.max_molecules='100'", "common.datasets.b3db.max_molecules: Input should be"),
        ("common.datasets.structure_control.graphs=true", "common.datasets.structure_control.graphs: Input"),
    ],
)
def test_strings_are_not_numbers_and_numbers_not_bools(repo_root, override, message):
    from stages.common import CommonParams
    from stages.core.params import apply_overrides, read_params_file, validate_section
    from stages.methods.selection.table_selection import TableSelectionParams
    from stages.papers.mrmc.params import MRMCParams

    raw = apply_overrides(read_params_file(repo_root / "params.yaml"), [override])
    models = {"mrmc": MRMCParams, "coreset": TableSelectionParams, "common": CommonParams}
    section = override.split(".")[0]
    with pytest.raises(ParamsError) as error:
        validate_section(models[section], raw[section], section)
    assert message in str(error.value)


def test_yes_is_not_a_bool():
    from pydantic import Field

    from stages.core.params import StrictModel, validate_section

    class Flags(StrictModel):
        balance: bool = True
        ratio: float = Field(0.5)

    assert validate_section(Flags, {"balance": False, "ratio": 1}, "x").ratio == 1.0  # int is a float
    with pytest.raises(ParamsError, match=r"x\.balance: Input should be a valid boolean"):
        validate_section(Flags, {"balance": "yes"}, "x")
