"""One writer per stage: an exclusive per-workspace lock on a stage, and a stage that dies with its launcher.

`dvc repro` starts a stage as a child process (sometimes through a shell). If the `dvc` process is killed, the
stage used to live on as an orphan and publish its outputs late, over the outputs of the rerun that had started
meanwhile. Two guards prevent that:

- `stage_lock`: an exclusive `flock` on `.dvc/tmp/stage-locks/<stage>.lock` for the stage's whole run; a second
  writer of the same stage in the same workspace stops at once, naming the holder's pid.
- `LauncherWatch`: a thread that watches the processes that launched the stage (its parent, and the parent's
  parent when the parent is a shell); when one of them is gone, the stage is interrupted before it can publish
  (its outputs are staged, so nothing half-written reaches the workspace).

Neither can change what a stage writes, so this module is not part of any stage's code deps.
"""

from __future__ import annotations

import _thread
import contextlib
import fcntl
import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path

from stages.core.errors import PipelineError

LOCK_DIR = ".dvc/tmp/stage-locks"
SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh", "fish"})
POLL_SECONDS = 0.5
GRACE_SECONDS = 10.0


class StageBusyError(PipelineError):
    """Another process is running the same stage in the same workspace."""


def _start_ticks(pid: int) -> str | None:
    """The process's start time in clock ticks since boot (tells a live process from a reused pid)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat.rsplit(")", 1)[1].split()[19]


def _state(pid: int) -> str | None:
    """The process state letter of proc(5) (`Z` for a zombie), or None when there is no such process."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat.rsplit(")", 1)[1].split()[0]


def _parent_and_name(pid: int) -> tuple[int, str] | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    name = stat[stat.index("(") + 1 : stat.rindex(")")]
    return int(stat.rsplit(")", 1)[1].split()[1]), name


def launchers(pid: int | None = None) -> dict[int, str]:
    """The processes whose death should end this stage: the parent, plus the grandparent when the parent is
    a shell (DVC may run a stage's command through `sh -c`). pid → start ticks."""
    chain: dict[int, str] = {}
    parent = os.getppid() if pid is None else pid
    for _ in range(2):
        info = _parent_and_name(parent)
        ticks = _start_ticks(parent)
        if info is None or ticks is None or parent <= 1:
            break
        chain[parent] = ticks
        grandparent, name = info
        if name not in SHELLS:
            break
        parent = grandparent
    return chain


class LauncherWatch:
    """Interrupts the main thread when a launcher process is gone; exits the process if it does not stop."""

    def __init__(self, stage: str, watched: dict[int, str], parent: int | None = None) -> None:
        self.stage = stage
        self.watched = watched
        self.parent = parent
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._watch, name=f"{stage}-launcher-watch", daemon=True)

    def __enter__(self) -> LauncherWatch:
        if self.watched:
            self._thread.start()
        return self

    def __exit__(self, *exc_info) -> None:
        self._stopped.set()

    def _gone(self) -> int | None:
        """A watched launcher that exited: its pid is free or reused, it is a zombie not yet reaped, or
        (for the direct parent) this process was re-parented."""
        for pid, ticks in self.watched.items():
            if _start_ticks(pid) != ticks or _state(pid) == "Z":
                return pid
        if self.parent is not None and os.getppid() != self.parent:
            return self.parent
        return None

    def _watch(self) -> None:
        while not self._stopped.wait(POLL_SECONDS):
            gone = self._gone()
            if gone is None:
                continue
            print(
                f"[{self.stage}] its launcher (pid {gone}) is gone: stopping without publishing outputs",
                flush=True,
            )
            _thread.interrupt_main()
            if not self._stopped.wait(GRACE_SECONDS):
                os._exit(70)  # still running native code: leave now; staged outputs are never published
            return


@contextlib.contextmanager
def stage_lock(stage: str, root: str | Path = ".") -> Iterator[None]:
    """Hold the stage's exclusive lock in this workspace for the duration, or stop naming the holder."""
    lock_dir = Path(root) / LOCK_DIR
    lock_dir.mkdir(parents=True, exist_ok=True)
    path = lock_dir / f"{stage}.lock"
    descriptor = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = path.read_text().strip() or "another process"
            raise StageBusyError(
                f"stage '{stage}' is already running in this workspace ({holder}); wait for it to finish "
                f"or stop that process, then rerun"
            ) from None
        os.ftruncate(descriptor, 0)
        os.write(descriptor, f"pid {os.getpid()}, started {time.strftime('%H:%M:%S')}".encode())
        yield
    finally:
        os.close(descriptor)  # closing releases the flock


@contextlib.contextmanager
def sole_writer(stage: str, root: str | Path = ".") -> Iterator[None]:
    """`stage_lock` plus `LauncherWatch`: the one guard a stage runs under."""
    with stage_lock(stage, root), LauncherWatch(stage, launchers(), parent=os.getppid()):
        yield
