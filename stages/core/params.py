"""Typed params: `params.yaml` has a `common:` section and one section per paper, each a pydantic model.

Unknown keys and wrong types fail at stage start with the dotted key and the file name. The file is read as
DVC reads it (YAML 1.2 through ruamel's safe loader): `1e-4` is a float and `yes` a string in the stages,
in `dvc params diff` and in `dvc.lock` alike; a duplicate key is an error, not a silent last-one-wins, and
aliases may not expand past `MAX_YAML_VALUES` values.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any, Literal, TypeVar, get_args, get_origin

from pydantic import BaseModel, ConfigDict, ValidationError
from ruamel.yaml import YAML
from ruamel.yaml.error import MarkedYAMLError, YAMLError

from stages.core.errors import ParamsError

PARAMS_FILE = "params.yaml"
MAX_YAML_VALUES = 100_000  # far above any params file; a nested-alias bomb stops here

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


def load_yaml(text: str, source: str) -> Any:
    """Parse YAML 1.2 text as DVC does; a syntax error, a duplicate key or an alias bomb is a ParamsError
    naming `source` and the line."""
    try:
        loaded = YAML(typ="safe").load(text)
    except YAMLError as error:
        raise ParamsError(f"{source}: not valid YAML: {_yaml_problem(error)}") from None
    _check_size(loaded, source)
    return loaded


def _yaml_problem(error: YAMLError) -> str:
    if isinstance(error, MarkedYAMLError) and error.problem:
        mark = error.problem_mark
        where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark is not None else ""
        return f"{error.problem}{where}"
    return str(error).strip().splitlines()[0]


def _check_size(loaded: Any, source: str) -> None:
    """Count values as a reader would see them, aliases expanded; stop past MAX_YAML_VALUES."""
    pending, seen = [loaded], 0
    while pending:
        node = pending.pop()
        seen += 1
        if seen > MAX_YAML_VALUES:
            raise ParamsError(
                f"{source}: YAML aliases expand to more than {MAX_YAML_VALUES:,} values; write the values out"
            )
        if isinstance(node, dict):
            pending.extend(node.keys())
            pending.extend(node.values())
        elif isinstance(node, list):
            pending.extend(node)


def read_params_file(path: str | Path = PARAMS_FILE) -> dict[str, Any]:
    """Load a params YAML file as a dict (empty file → empty dict)."""
    path = Path(path)
    if not path.is_file():
        raise ParamsError(f"{path}: params file not found")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as error:
        raise ParamsError(
            f"{path}: not UTF-8 text (byte {error.object[error.start]:#04x} at {error.start})"
        ) from None
    loaded = load_yaml(text, str(path)) or {}
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
    return parts, load_yaml(value, f"override '{text}'")


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
    writer = YAML(typ="rt")  # keeps key order; reads back (YAML 1.2) to the same values
    writer.default_flow_style = False
    with Path(path).open("w", encoding="utf-8") as handle:
        writer.dump(params, handle)
