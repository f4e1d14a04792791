"""A paper's headline: one named verdict per claim, the DVC metrics file its claims step writes.

`dvc exp show` lays every column of every DVC metrics file side by side. With each paper's full metrics declared
that was about 1,500 columns for twelve papers, and the table collapsed to "…". Each paper's claims step
declares `data/<paper>/headline.json` (`{claim id: verdict}`) as its one DVC metrics file. The detailed metrics
files stay plain outputs: `dvc metrics show <file>`, `dvc metrics diff --targets <file>`, the audit.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from stages.core.claims import Claim
from stages.core.io import write_json

HEADLINE_FILE = "headline.json"


def headline(claims: Sequence[Claim]) -> dict[str, str]:
    """`{claim id: verdict}` in the claims' order."""
    return {claim.id: claim.verdict for claim in claims}


def write_headline(claims: Sequence[Claim], path: str | Path) -> None:
    """Write the headline of these claims as a DVC metrics file."""
    write_json(headline(claims), path)
