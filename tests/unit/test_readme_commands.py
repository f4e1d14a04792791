"""Every `icml25 …` command line the READMEs show parses with the real parser; the cheap ones run."""

from __future__ import annotations

import importlib
import re
import shlex
from pathlib import Path

import pytest

from flows.cli import ORCHESTRATION_BENCHMARKS, add_orchestration_commands
from stages.platform.commands import benchmark_targets, build_parser
from tests.conftest import REPO_ROOT, run_cli

DOCS = [REPO_ROOT / "README.md", *sorted((REPO_ROOT / "stages" / "papers").glob("*/README.md"))]
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)
SHELL_LANGUAGES = {"", "bash", "sh", "console"}


def command_lines(path: Path) -> list[str]:
    """`icml25 …` lines inside the code blocks of a Markdown file (continuations joined, comments dropped)."""
    lines = []
    blocks = [body for language, body in FENCE.findall(path.read_text()) if language in SHELL_LANGUAGES]
    for block in blocks:
        for line in block.replace("\\\n", " ").splitlines():
            line = line.split(" #", 1)[0].strip()
            if line.startswith("icml25 "):
                lines.append(line)
    return lines


COMMANDS = [(path.relative_to(REPO_ROOT), line) for path in DOCS for line in command_lines(path)]


def test_the_readme_shows_commands():
    assert len([1 for path, _ in COMMANDS if str(path) == "README.md"]) >= 15


def every_papers_commands() -> list:
    """`add_commands` of the command modules of every paper package, registered or not: a paper README documents
    its command before the paper is registered (each module once)."""
    modules = {
        module: None
        for pipeline in sorted((REPO_ROOT / "stages" / "papers").glob("*/pipeline.py"))
        for module in importlib.import_module(f"stages.papers.{pipeline.parent.name}.pipeline").PAPER.commands
    }
    return [importlib.import_module(module).add_commands for module in modules]


@pytest.mark.parametrize(("doc", "line"), COMMANDS, ids=[f"{doc}:{line[:50]}" for doc, line in COMMANDS])
def test_documented_command_parses(doc, line):
    extra = [add_orchestration_commands, *every_papers_commands()]
    parser = build_parser(extra, ORCHESTRATION_BENCHMARKS, contributed=False)
    args = parser.parse_args(shlex.split(line)[1:])  # argparse exits (SystemExit) on a bad line
    if args.command == "bench":
        assert args.target in benchmark_targets(ORCHESTRATION_BENCHMARKS), line


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("icml25 papers", "rings"),
        ("icml25 dvc-yaml --check", "up to date"),
        ("icml25 all-papers --help", "--dask-address"),
        ("icml25 bench --help", "orchestration"),
    ],
)
def test_cheap_documented_commands_run(line, expected):
    assert any(doc_line.startswith(line.split(" --")[0]) for _, doc_line in COMMANDS), line
    result = run_cli(shlex.split(line)[1:], REPO_ROOT)
    assert result.returncode == 0, result.stderr
    assert expected in result.stdout
