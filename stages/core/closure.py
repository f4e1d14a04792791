"""A step's code deps: the project files in its modules' import closure, computed with grimp.

Every `import` statement counts, also one inside a function (a lazy import runs when the step runs), and so
does the `__init__.py` of every package on the way. Modules that cannot change an output (error types,
progress bars) are listed in :data:`NO_OUTPUT_EFFECT`; the closure neither includes nor follows them.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from functools import cache
from pathlib import Path

NO_OUTPUT_EFFECT = frozenset({"stages.core.errors", "stages.core.progress", "stages.core.ownership"})
"""Modules left out of every closure: they raise, print or show progress, and never shape a result."""

PACKAGE = "stages"


@cache
def _graph(root: str):
    import grimp

    if root not in sys.path:
        sys.path.insert(0, root)
    return grimp.build_graph(PACKAGE, cache_dir=None, exclude_type_checking_imports=True)


def module_closure(modules: Iterable[str], root: str | Path = ".") -> set[str]:
    """Every project module the given modules import, directly or not, skipping NO_OUTPUT_EFFECT."""
    graph = _graph(str(Path(root).resolve()))
    seen: set[str] = set()
    pending = [module for module in modules if module not in NO_OUTPUT_EFFECT]
    while pending:
        module = pending.pop()
        if module in seen:
            continue
        if module not in graph.modules:
            raise KeyError(f"module '{module}' is not part of the '{PACKAGE}' package")
        seen.add(module)
        imported = graph.find_modules_directly_imported_by(module)
        pending.extend(name for name in imported if name not in seen and name not in NO_OUTPUT_EFFECT)
    return seen


def module_file(module: str, root: str | Path = ".") -> str:
    """The file of `module`, relative to the repository root (a package is its `__init__.py`)."""
    relative = Path(*module.split("."))
    package_init = relative / "__init__.py"
    return str(package_init if (Path(root) / package_init).is_file() else relative.with_suffix(".py"))


def code_files(modules: Iterable[str], root: str | Path = ".") -> list[str]:
    """The closure as sorted file paths, with the `__init__.py` of every enclosing package."""
    closure = module_closure(modules, root)
    with_packages = set(closure)
    for module in closure:
        parts = module.split(".")
        with_packages |= {".".join(parts[:depth]) for depth in range(1, len(parts))}
    return sorted(module_file(module, root) for module in with_packages)
