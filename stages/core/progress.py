"""Progress bars for long loops (tqdm on stderr; ICML25_PROGRESS=0 silences them)."""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from typing import TypeVar

from tqdm.auto import tqdm

T = TypeVar("T")


def progress(iterable: Iterable[T], desc: str, total: int | None = None, leave: bool = False) -> Iterator[T]:
    """Wrap a loop in a tqdm bar unless progress output is disabled."""
    disabled = os.environ.get("ICML25_PROGRESS", "1") == "0"
    yield from tqdm(iterable, desc=desc, total=total, leave=leave, disable=disabled, mininterval=1.0)
