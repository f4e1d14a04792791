"""The served run form: Prefect's derived schema rewritten so the UI says what each param is, and the UI's
JSON-editor wrappers unwrapped in the run."""

from __future__ import annotations

import json

import pytest
from prefect.utilities.callables import parameter_schema

from flows.experiment_flow import form_overrides, params_form_flow
from flows.form_schema import form_schema, unwrap_json_inputs
from stages.core.errors import ParamsError
from stages.core.params import PARAMS_FILE, read_params_file
from stages.datasets.registry import names_of
from stages.papers.registry import PAPERS


def served_form(paper: str, repo_root) -> dict:
    pipeline = PAPERS.get(paper).pipeline
    flow_function = params_form_flow(paper, repo_root, lambda params, name: name)
    derived = parameter_schema(flow_function).model_dump(exclude_none=True)
    return form_schema(derived, pipeline.params_section, pipeline.model())


def test_the_derived_form_titles_sections_by_class_name():
    # what the rewrite is for: Prefect's own schema titles both sections "TrainConfig"
    pipeline = PAPERS.get("mrmc").pipeline
    derived = parameter_schema(params_form_flow("mrmc", ".", lambda params, name: name)).model_dump()
    assert derived["properties"]["mrmc"]["$ref"].endswith("/MRMCParams")
    fields = derived["definitions"]["MRMCParams"]["properties"]
    assert fields["trace"]["$ref"] == fields["train"]["$ref"] == "#/definitions/TrainConfig"
    assert pipeline.params_section == "mrmc"


def test_sections_are_inlined_under_their_own_titles(repo_root):
    schema = served_form("mrmc", repo_root)
    fields = schema["properties"]["mrmc"]["properties"]
    assert "$ref" not in json.dumps(schema) and "definitions" not in schema
    assert fields["trace"]["title"] == "Trace" and fields["train"]["title"] == "Train"
    assert fields["trace"]["description"] == "mrmc.trace: How a classifier is trained."
    assert fields["trace"]["properties"]["epochs"]["type"] == "integer"
    assert fields["claims"]["title"] == "Claims"
    assert schema["properties"]["experiment_name"]["title"] == "Experiment name"


def test_a_dataset_is_a_choice_of_registered_sources(repo_root):
    for paper in ("mrmc", "sharpening", "fdiv_losses"):
        section = PAPERS.get(paper).pipeline.params_section
        dataset = served_form(paper, repo_root)["properties"][section]["properties"]["dataset"]
        assert dataset["enum"] == names_of("classification")


def test_a_list_of_graph_sources_is_a_choice_of_registered_graph_sources(repo_root):
    datasets = served_form("rings", repo_root)["properties"]["rings"]["properties"]["datasets"]
    assert datasets["type"] == "array" and datasets["items"]["enum"] == names_of("graphs")
    assert "structure_control" in datasets["items"]["enum"]


def test_the_budget_range_and_distinctness_are_in_the_schema(repo_root):
    budgets = served_form("mrmc", repo_root)["properties"]["mrmc"]["properties"]["budgets"]
    assert budgets["items"]["exclusiveMinimum"] == 0 and budgets["items"]["exclusiveMaximum"] == 1
    assert budgets["uniqueItems"] is True


def test_nothing_is_required_and_a_map_of_sections_is_free_json(repo_root):
    form = served_form("mrmc", repo_root)["properties"]["mrmc"]
    assert "required" not in form and "keeps the workspace's value" in form["description"]
    methods = form["properties"]["methods"]
    assert methods["type"] == "object" and methods["additionalProperties"] is True
    assert methods["description"].startswith(
        "mrmc.methods: a JSON object, name → {selector, options, budgets}"
    )


def test_every_paper_has_a_form(repo_root):
    for paper in PAPERS.names():
        section = PAPERS.get(paper).pipeline.params_section
        assert served_form(paper, repo_root)["properties"][section]["title"] == f"{section} params"


def test_json_editor_wrappers_are_unwrapped_at_any_depth():
    inner = {"mrmc": {"options": {}, "selector": "mrmc"}}
    wrapped = {"a": 1, "methods": {"__prefect_kind": "json", "value": json.dumps(inner)}}
    outer = {"__prefect_kind": "json", "value": json.dumps(wrapped)}
    assert unwrap_json_inputs(outer) == {"a": 1, "methods": inner}
    with pytest.raises(ValueError, match="a JSON editor holds invalid JSON"):
        unwrap_json_inputs({"__prefect_kind": "json", "value": "{not json"})


def test_json_input_reaches_the_params_model(repo_root):
    # "Use JSON input": the methods editor's wrapper lands inside the JSON text; the run unwraps it
    current = read_params_file(repo_root / PARAMS_FILE)["mrmc"]
    methods = {"__prefect_kind": "json", "value": json.dumps(current["methods"])}
    assert form_overrides("mrmc", {"methods": methods, "pool_size": 600}, repo_root) == ["mrmc.pool_size=600"]
    broken = {"__prefect_kind": "json", "value": json.dumps({"mine": {"selector": "nope"}})}
    with pytest.raises(
        ParamsError, match=r"^run form: invalid params: mrmc: .*methods\.mine: unknown core-set"
    ):
        form_overrides("mrmc", {"methods": broken}, repo_root)


def test_a_partial_form_keeps_the_workspace_values(repo_root):
    assert form_overrides("mrmc", {"balance": True}, repo_root) == ["mrmc.balance=true"]
    with pytest.raises(ParamsError, match="expected an object of params, got list"):
        form_overrides("mrmc", [1, 2], repo_root)
