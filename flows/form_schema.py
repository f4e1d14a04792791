"""The run form of a served paper: Prefect's parameter schema, rewritten so the UI says what each param is.

Prefect derives a deployment's schema from the flow's signature (the paper's params model), and its UI draws
the form from it. Left as derived, every nested section is shown under its class name (`trace` and `train` both
read "TrainConfig"), every field is "(Optional)" because it has a default, and a dataset is free text. Here:
- each nested section is inlined under its own key's title, with the params key it sets (`mrmc.trace`) in its
  description;
- no field is required: a field left out keeps the workspace's params.yaml value (`form_overrides`), so an
  API call or `prefect deployment run --param` may send only the keys it changes (the model's own required
  `methods` always has that value); the section's description says so;
- a field typed `DatasetName` is an enum of the registered classification sources, and a field naming sources
  of another modality (`SourceOf` metadata, alone or as list items: RINGS' `datasets`) an enum of those;
- a map of sections (MRMC's `methods`: name → {selector, options}) is a plain JSON object: the UI can only
  edit it as JSON, and it sends such an editor's text as `{"__prefect_kind": "json", "value": "..."}`;
  after "Use JSON input" that wrapper lands inside the JSON text, where Prefect's server does not unwrap it,
  so a typed schema would refuse a valid run (`methods.value is not of type 'object'`). `unwrap_json_inputs`
  unwraps it in the run, where the params model checks every entry, naming `mrmc.methods.<name>.<key>`.
Rules JSON Schema can state (ranges, distinct items) come from the models' own `Field` constraints; rules
across fields (MRMC's `claims.cost_budget` must be one of `budgets`) cannot be stated in it, so they fail the
run in one line naming the key (`form_overrides`).
"""

from __future__ import annotations

import copy
import json
import typing
from typing import Any

from pydantic import BaseModel

from stages.datasets.names import SourceOf
from stages.datasets.registry import names_of
from stages.papers.fields import DatasetName

REF_PREFIX = "#/definitions/"


def form_schema(schema: dict[str, Any], section: str, model: type[BaseModel]) -> dict[str, Any]:
    """`schema` (a flow's parameter schema whose parameter `section` is `model`) with its form rewritten."""
    rewritten = copy.deepcopy(schema)
    definitions = rewritten.pop("definitions", {})
    properties = rewritten["properties"]
    properties[section] = _inline(properties[section], definitions, section)
    properties[section]["title"] = f"{section} params"
    properties[section].pop("required", None)
    properties[section]["description"] = (
        f"The `{section}` section of params.yaml ({model.__doc__.strip().splitlines()[0]}) "
        "A field left out keeps the workspace's value; a field sent replaces that key's whole value."
    )
    if "experiment_name" in properties:
        properties["experiment_name"]["title"] = "Experiment name"
        properties["experiment_name"]["description"] = (
            f"the DVC experiment's name, and this run's (None: `{section}-<UTC time>`)"
        )
    fields = properties[section]["properties"]
    for name in dataset_fields(model):
        fields[name]["enum"] = names_of("classification")
    for name, (choices, is_list) in source_fields(model).items():
        (fields[name]["items"] if is_list else fields[name])["enum"] = choices
    return rewritten


def dataset_fields(model: type[BaseModel]) -> list[str]:
    """The model's fields typed `DatasetName` (a registered classification source)."""
    marks = typing.get_args(DatasetName)[1:]
    return [name for name, field in model.model_fields.items() if any(m in field.metadata for m in marks)]


def source_fields(model: type[BaseModel]) -> dict[str, tuple[list[str], bool]]:
    """The model's fields that name registered sources (`SourceOf` metadata): their choices, and whether the
    field is a list of such names."""
    found = {}
    for name, field in model.model_fields.items():
        for marker in field.metadata:
            if isinstance(marker, SourceOf):
                found[name] = (marker.choices(), False)
        if typing.get_origin(field.annotation) is list:
            (item,) = typing.get_args(field.annotation)
            for marker in typing.get_args(item)[1:]:
                if isinstance(marker, SourceOf):
                    found[name] = (marker.choices(), True)
    return found


def _inline(node: Any, definitions: dict[str, Any], key: str) -> Any:
    """`node` with every `$ref` replaced by its definition, titled and described by the key it sets."""
    if isinstance(node, list):
        return [_inline(item, definitions, key) for item in node]
    if not isinstance(node, dict):
        return node
    if "$ref" in node:
        definition = definitions[node["$ref"].removeprefix(REF_PREFIX)]
        own = {name: value for name, value in node.items() if name != "$ref"}
        resolved = {**_inline(definition, definitions, key), **own}
        described = own.get("description") or definition.get("description", "")
        resolved["title"] = _title(key)
        resolved["description"] = f"{key}: {described}".rstrip(": ")
        return resolved
    inlined = {}
    for name, value in node.items():
        if name == "properties":
            inlined[name] = {prop: _inline(sub, definitions, f"{key}.{prop}") for prop, sub in value.items()}
        elif name == "additionalProperties" and isinstance(value, dict) and value:
            inlined[name] = True  # a map of sections: a JSON editor, checked in the run (see above)
            inlined["description"] = _map_description(key, value, definitions)
        else:
            inlined[name] = _inline(value, definitions, key)
    return inlined


def _map_description(key: str, entry: dict[str, Any], definitions: dict[str, Any]) -> str:
    """What a map of sections holds, for its JSON editor: `name → {field, ...}` and the entry's description."""
    definition = definitions.get(entry.get("$ref", "").removeprefix(REF_PREFIX), entry)
    fields = ", ".join(definition.get("properties", {}))
    what = definition.get("description", "")
    return f"{key}: a JSON object, name → {{{fields}}}; {what}".rstrip("; ")


def unwrap_json_inputs(value: Any) -> Any:
    """`value` with every Prefect UI JSON-editor wrapper (`{"__prefect_kind": "json", "value": text}`) replaced
    by the JSON it holds, at any depth."""
    if isinstance(value, list):
        return [unwrap_json_inputs(item) for item in value]
    if not isinstance(value, dict):
        return value
    if value.get("__prefect_kind") == "json" and isinstance(value.get("value"), str):
        try:
            return unwrap_json_inputs(json.loads(value["value"]))
        except json.JSONDecodeError as error:
            raise ValueError(f"a JSON editor holds invalid JSON: {error}") from None
    return {name: unwrap_json_inputs(item) for name, item in value.items()}


def _title(key: str) -> str:
    """`mrmc.trace` → `Trace`: the last part of a params key, as pydantic titles a plain field."""
    return key.rsplit(".", 1)[-1].replace("_", " ").title()
