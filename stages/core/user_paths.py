"""What a user's command may write over: never its own input, and never the same path twice in one call.

Checked on the parsed command line before any work (`stages.platform.commands.main`), for every command, so the
commands that papers contribute get it too. An output option is `--output`, `--report` or any `--*-out`; an
input is any other option that names an existing file. Folders are the output transaction's part: a user
command replaces only a folder it wrote itself (`stages.core.io.OutputTransaction`).
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

OUTPUT_OPTIONS = ("output", "report")


def output_options(args: argparse.Namespace) -> dict[str, Path]:
    """`--option` → path for every output option given on the command line."""
    return {
        _flag(name): Path(value)
        for name, value in vars(args).items()
        if isinstance(value, str) and value and (name in OUTPUT_OPTIONS or name.endswith("_out"))
    }


def input_files(args: argparse.Namespace, outputs: dict[str, Path]) -> dict[str, Path]:
    """`--option` → path for every other string option that names an existing file."""
    flags = set(outputs)
    return {
        _flag(name): Path(value)
        for name, value in vars(args).items()
        if isinstance(value, str) and value and _flag(name) not in flags and Path(value).is_file()
    }


def clashing_paths(args: argparse.Namespace) -> list[str]:
    """One message per output that is also an input, or that another output of this call also names."""
    outputs = output_options(args)
    inputs = input_files(args, outputs)
    problems = [
        f"{flag} {path}: is also {other} (a command never writes over its input); give another path"
        for flag, path in outputs.items()
        for other, source in inputs.items()
        if path.exists() and os.path.samefile(path, source)
    ]
    seen: dict[Path, str] = {}
    for flag, path in outputs.items():
        key = path.resolve()
        if key in seen:
            problems.append(f"{flag} {path}: {seen[key]} names the same path; give each output its own")
        seen.setdefault(key, flag)
    return problems


def _flag(name: str) -> str:
    return "--" + name.replace("_", "-")
