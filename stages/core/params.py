"""Typed params: `params.yaml` has a `common:` section and one section per paper, each a pydantic model.

Unknown keys and wrong types fail at stage start with the dotted key and the file name.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any, Literal, TypeVar, get_args, get_origin

import yaml
from pydantic import BaseModel, ConfigDict, ValidationError

from stages.core.errors import ParamsError

PARAMS_FILE = "params.yaml"

ModelT = TypeVar("ModelT", bound=BaseModel)


class StrictModel(BaseModel):
    """Base for every params model: unknown keys are errors, values are not silently coerced across types.

    Params from a file or the command line go through :func:`strict_validate`: `'20000'` for an int or
    `'yes'` for a bool is an error there, not a value (integers still count as floats, lists as tuples).
    """

    model_config = ConfigDict(extra="forbid", strict=False, frozen=True)


def strict_validate(model: type[ModelT], raw: Any) -> ModelT:
    """Validate plain data (as YAML or JSON give it) in pydantic's strict JSON mode: no str → number/bool."""
    return model.model_validate_json(json.dumps(raw, default=str), strict=True)


def read_params_file(path: str | Path = PARAMS_FILE) -> dict[str, Any]:
    """Load a params YAML file as a dict (empty file → empty dict)."""
    path = Path(path)
    if not path.is_file():
        raise ParamsError(f"{path}: params file not found")
    try:
        loaded = yaml.safe_load(path.read_text()) or {}
    except yaml.YAMLError as error:
        raise ParamsError(f"{path}: not valid YAML: {error}") from error
    if not isinstance(loaded, dict):
        raise ParamsError(f"{path}: top level must be a mapping of sections")
    return loaded


def validate_section(model: type[ModelT], raw: Any, section: str, source: str = PARAMS_FILE) -> ModelT:
    """Validate one section against its model, naming every bad key as `section.key.sub` in the error."""
    try:
        return strict_validate(model, raw if raw is not None else {})
    except ValidationError as error:
        problems = []
        for item in error.errors():
            key = ".".join([section, *(str(part) for part in item["loc"])])
            got = repr(item.get("input"))
            got = got if len(got) <= 120 else got[:117] + "..."
            problems.append(f"  {key}: {item['msg']} (got {got})")
        raise ParamsError(
            f"{source}: invalid params in section '{section}':\n" + "\n".join(problems)
        ) from None


def describe_options(model: type[BaseModel]) -> list[str]:
    """One line per field of `model`: `name (type, default value): description`."""
    lines = []
    for name, info in model.model_fields.items():
        kind = _type_name(info.annotation)
        text = f"{name} ({kind}, default {info.get_default(call_default_factory=True)!r})"
        lines.append(f"{text}: {info.description}" if info.description else text)
    return lines


def _type_name(annotation: Any) -> str:
    if get_origin(annotation) is Literal:
        return "one of " + ", ".join(repr(value) for value in get_args(annotation))
    return getattr(annotation, "__name__", None) or str(annotation).replace("typing.", "")


def load_section(model: type[ModelT], section: str, path: str | Path = PARAMS_FILE) -> ModelT:
    """Read `path` and validate `section` with `model`."""
    raw = read_params_file(path)
    if section not in raw:
        raise ParamsError(f"{path}: missing section '{section}'")
    return validate_section(model, raw[section], section, str(path))


def deep_merge(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    """Recursively merge `override` into a copy of `base` (mappings merge, everything else replaces)."""
    merged = copy.deepcopy(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = deep_merge(merged[key], value)
        else:
            merged[key] = copy.deepcopy(value)
    return merged


def parse_override(text: str) -> tuple[list[str], Any]:
    """Parse `section.key.sub=value` (value in YAML syntax) into a key path and a value."""
    if "=" not in text:
        raise ParamsError(f"override '{text}': expected KEY=VALUE, e.g. mrmc.pool_size=5000")
    key, _, value = text.partition("=")
    parts = [part for part in key.strip().split(".") if part]
    if not parts:
        raise ParamsError(f"override '{text}': empty key")
    try:
        return parts, yaml.safe_load(value)
    except yaml.YAMLError as error:
        problem = str(error).splitlines()[0]
        raise ParamsError(f"override '{text}': the value is not valid YAML ({problem})") from None


def apply_overrides(params: dict[str, Any], overrides: list[str]) -> dict[str, Any]:
    """Apply `key.path=value` overrides to a params dict (returns a new dict)."""
    result = copy.deepcopy(params)
    for text in overrides:
        parts, value = parse_override(text)
        node = result
        for part in parts[:-1]:
            child = node.setdefault(part, {})
            if not isinstance(child, dict):
                raise ParamsError(f"override '{text}': '{part}' is not a section")
            node = child
        node[parts[-1]] = value
    return result


def write_params_file(params: dict[str, Any], path: str | Path) -> None:
    """Write params back as YAML, keeping key order."""
    Path(path).write_text(yaml.safe_dump(params, sort_keys=False))
