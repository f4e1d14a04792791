"""Every ```python block of README.md and the paper READMEs runs as written, in a fresh namespace.

The "Your own data" sections promise code a reader can copy; each block defines its own small stand-in inputs,
so running it here checks the documented calls, argument names and return values against the code.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT

DOCS = [REPO_ROOT / "README.md", *sorted((REPO_ROOT / "stages" / "papers").glob("*/README.md"))]
PYTHON_FENCE = re.compile(r"^```python\n(.*?)^```", re.S | re.M)


def python_blocks(path: Path) -> list[tuple[int, str]]:
    """(first line number, code) of each ```python block."""
    text = path.read_text()
    return [(text[: match.start()].count("\n") + 2, match.group(1)) for match in PYTHON_FENCE.finditer(text)]


BLOCKS = [(path.relative_to(REPO_ROOT), line, code) for path in DOCS for line, code in python_blocks(path)]


def test_every_paper_with_python_in_its_own_data_section_is_collected():
    papers = {str(path.parent.name) for path, _, _ in BLOCKS if path.name == "README.md" and path.parent.name}
    assert {
        "activation_comm",
        "blae",
        "dynamic_selection",
        "fdiv_losses",
        "gbrl",
        "info_coevolution",
        "kindel",
        "mrmc",
        "rings",
        "sharpening",
        "tabsds",
    } <= papers
    assert any(str(path) == "README.md" for path, _, _ in BLOCKS)


@pytest.mark.parametrize(("doc", "line", "code"), BLOCKS, ids=[f"{doc}:{line}" for doc, line, _ in BLOCKS])
def test_documented_python_runs(doc, line, code, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # blocks that write files write them here
    exec(compile(code, f"{doc}:{line}", "exec"), {"__name__": "readme_snippet"})
