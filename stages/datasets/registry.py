"""The registered data sources: every module in `stages/datasets/sources/` defines one `SOURCE`.

Adding a source is adding a file there; nothing else is edited, so no other stage's code deps change.
Modules are imported when a source is asked for: listing names imports no loader code.
"""

from __future__ import annotations

import importlib
import pkgutil
from functools import cache

from stages.core.registry import UnknownNameError
from stages.datasets.source import Source

SOURCES_PACKAGE = "stages.datasets.sources"


@cache
def source_names() -> tuple[str, ...]:
    """Every registered source name, sorted (a source's name is its module's name)."""
    package = importlib.import_module(SOURCES_PACKAGE)
    return tuple(sorted(info.name for info in pkgutil.iter_modules(package.__path__) if not info.ispkg))


def source_module(name: str) -> str:
    """The module defining source `name`; an unknown name lists the valid ones."""
    if name not in source_names():
        raise UnknownNameError(f"unknown dataset '{name}'; valid names: {', '.join(source_names())}")
    return f"{SOURCES_PACKAGE}.{name}"


def get_source(name: str) -> Source:
    """The source registered as `name`."""
    source = importlib.import_module(source_module(name)).SOURCE
    if source.name != name:
        raise ValueError(f"{source_module(name)}: SOURCE.name is '{source.name}', expected '{name}'")
    return source


def names_of(modality: str) -> list[str]:
    """Registered sources producing `modality` (e.g. 'classification', 'graphs')."""
    return [name for name in source_names() if get_source(name).modality.name == modality]
