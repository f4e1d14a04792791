"""Parquet/JSON I/O with atomic writes.

A stage writes every output through an :class:`OutputTransaction`: files go to temporary siblings and are
renamed into place only when the whole stage succeeded, so a failing stage leaves no partial outputs and
never damages what an earlier run produced. A user's command publishes the same way but replaces only what
it owns: a file, or a folder that carries its mark (`OWNER_MARK`) from an earlier run; never another folder.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import polars as pl

from stages.core.errors import PipelineError

PARQUET_COMPRESSION = "zstd"
_UMASK = os.umask(0)
os.umask(_UMASK)


def read_parquet(path: str | Path) -> pl.DataFrame:
    """Read a Parquet table; a missing or unreadable file is reported with its path."""
    path = Path(path)
    if not path.is_file():
        raise PipelineError(f"{path}: file not found (has the stage that produces it run?)")
    try:
        return pl.read_parquet(path)
    except (pl.exceptions.PolarsError, OSError) as error:
        problem = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise PipelineError(f"{path}: not a readable Parquet file ({problem})") from None


def write_parquet(frame: pl.DataFrame, path: str | Path) -> None:
    """Write a Parquet table (zstd) atomically."""
    with atomic_path(Path(path)) as tmp:
        frame.write_parquet(tmp, compression=PARQUET_COMPRESSION, statistics=True)


def dumps_json(payload: Any) -> str:
    """Canonical JSON text: sorted keys, two-space indent, trailing newline (stable md5)."""
    return json.dumps(payload, indent=2, sort_keys=True, allow_nan=False, default=_json_default) + "\n"


def write_json(payload: Any, path: str | Path) -> None:
    """Write JSON atomically in canonical form."""
    with atomic_path(Path(path)) as tmp:
        tmp.write_text(dumps_json(payload))


def read_json(path: str | Path) -> Any:
    """Read a JSON file; a missing file is reported with its path."""
    path = Path(path)
    if not path.is_file():
        raise PipelineError(f"{path}: file not found")
    return json.loads(path.read_text())


def file_md5(path: str | Path) -> str:
    """md5 of a file's bytes (the hash DVC records for a file)."""
    digest = hashlib.md5()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _json_default(value: Any) -> Any:
    if hasattr(value, "item"):  # numpy scalars
        return value.item()
    if hasattr(value, "tolist"):
        return value.tolist()
    if isinstance(value, Path):
        return str(value)
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")


def write_text(text: str, path: str | Path) -> None:
    """Write a text file atomically."""
    with atomic_path(Path(path)) as tmp:
        tmp.write_text(text)


@contextmanager
def atomic_path(final: Path) -> Iterator[Path]:
    """Yield a temporary sibling of `final`; it replaces `final` only if the block succeeds."""
    if final.is_dir():
        raise PipelineError(f"{final}: is a folder; give a file path (nothing was written)")
    try:
        final.parent.mkdir(parents=True, exist_ok=True)
        fd, name = tempfile.mkstemp(prefix=f".{final.name}.", suffix=".tmp", dir=final.parent)
    except OSError as error:
        raise PipelineError(f"{final}: cannot write there ({error.strerror or error})") from None
    os.close(fd)
    tmp = Path(name)
    os.chmod(tmp, 0o666 & ~_UMASK)  # mkstemp makes 0600; give outputs the usual permissions
    try:
        yield tmp
        os.replace(tmp, final)
    finally:
        tmp.unlink(missing_ok=True)


STAGING_PREFIX = ".icml25-staging-"
OWNER_MARK = ".icml25-output"  # in each folder a user's command wrote: the folder is the command's to replace


def remove_stale_staging(root: Path) -> list[Path]:
    """Delete staging folders left by killed stages (their process is gone); returns what was removed."""
    removed = []
    for folder in Path(root).glob(f"{STAGING_PREFIX}*"):
        owner = folder.name[len(STAGING_PREFIX) :].split("-", 1)[0]
        if owner.isdigit() and not _process_alive(int(owner)):
            shutil.rmtree(folder, ignore_errors=True)
            removed.append(folder)
    return removed


def _process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def ensure_replaceable(path: Path) -> None:
    """Raise unless a user's command may publish at `path`: nothing there, a file, or a folder bearing the
    mark of an earlier icml25 command (call it before the work too, to refuse early)."""
    if path.is_dir() and not path.is_symlink() and not (path / OWNER_MARK).is_file():
        raise PipelineError(
            f"{path}: an existing folder this command did not write; give a new path (nothing was written)"
        )


class OutputTransaction:
    """Collects a stage's outputs in a staging folder and moves them into place together on success.

    Use ``with OutputTransaction() as out: write_parquet(df, out.path("data/x.parquet"))``. On an exception,
    the staging folder is deleted and the final paths are left as they were.

    `owner=None` is a DVC stage's transaction: its declared outputs are its own (DVC owns them). A user's
    command passes its name: each folder it publishes gets an `OWNER_MARK` file, and an existing folder without
    one (the user's) is refused, naming it, before anything is moved.
    """

    def __init__(self, root: str | Path = ".", owner: str | None = None) -> None:
        self._root = Path(root)
        self._owner = owner
        self._staging: Path | None = None
        self._targets: dict[Path, Path] = {}

    def __enter__(self) -> OutputTransaction:
        remove_stale_staging(self._root)
        self._staging = Path(tempfile.mkdtemp(prefix=f"{STAGING_PREFIX}{os.getpid()}-", dir=self._root))
        return self

    def path(self, final: str | Path) -> Path:
        """The staging path to write instead of ``final`` (files or folders)."""
        assert self._staging is not None, "use OutputTransaction as a context manager"
        final = Path(final)
        if final in self._targets:
            return self._targets[final]
        staged = self._staging / f"{len(self._targets):03d}" / final.name
        staged.parent.mkdir(parents=True)
        self._targets[final] = staged
        return staged

    @property
    def requested(self) -> set[Path]:
        """Final paths handed out so far."""
        return set(self._targets)

    def __exit__(self, exc_type, exc, tb) -> None:
        assert self._staging is not None
        try:
            if exc_type is None:
                self._commit()
        finally:
            shutil.rmtree(self._staging, ignore_errors=True)

    def _commit(self) -> None:
        missing = [str(final) for final, staged in self._targets.items() if not staged.exists()]
        if missing:
            raise RuntimeError(f"stage declared outputs it did not write: {', '.join(missing)}")
        if self._owner is not None:
            self._claim_folders()
        for final, staged in self._targets.items():
            final.parent.mkdir(parents=True, exist_ok=True)
            if final.is_dir() and not final.is_symlink():
                shutil.rmtree(final)
            elif final.exists() or final.is_symlink():
                final.unlink()
            os.replace(staged, final)

    def _claim_folders(self) -> None:
        """Refuse a target that is a folder this command did not write; mark the folders it publishes."""
        for final in self._targets:
            ensure_replaceable(final)
        for staged in self._targets.values():
            if staged.is_dir():
                (staged / OWNER_MARK).write_text(f"written by {self._owner}\n")
