"""One writer per stage: the stage lock refuses a second holder; the launcher watch interrupts an orphan."""

from __future__ import annotations

import signal
import subprocess
import time

import pytest

from stages.core import ownership
from stages.core.ownership import LauncherWatch, StageBusyError, launchers, stage_lock


def test_a_second_holder_of_a_stage_lock_is_refused_naming_the_first(tmp_path):
    busy = r"stage 'paper-train' is already running .*pid \d+"
    with stage_lock("paper-train", tmp_path):
        with pytest.raises(StageBusyError, match=busy), stage_lock("paper-train", tmp_path):
            pass
        with stage_lock("paper-other", tmp_path):  # another stage is free
            pass
    with stage_lock("paper-train", tmp_path):  # released on exit
        pass


@pytest.fixture
def python_sigint():
    """Python's own SIGINT handler: a shell's background job (`pytest ... &`) starts with SIGINT ignored, and then
    `_thread.interrupt_main` does nothing (a stage in that state leaves by the watch's `os._exit` instead)."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


def test_the_watch_interrupts_the_main_thread_when_a_launcher_dies(monkeypatch, python_sigint):
    monkeypatch.setattr(ownership, "POLL_SECONDS", 0.05)
    launcher = subprocess.Popen(["sleep", "30"])
    watched = launchers(launcher.pid)
    assert list(watched) == [launcher.pid]  # `sleep` is no shell: its parent is not watched
    with pytest.raises(KeyboardInterrupt), LauncherWatch("paper-train", watched):
        launcher.kill()
        launcher.wait()
        time.sleep(5)  # interrupted long before this ends


def test_a_shell_launcher_adds_its_parent():
    shell = subprocess.Popen(["sh", "-c", "sleep 30; true"])
    try:
        time.sleep(0.3)
        assert next(iter(launchers(shell.pid))) == shell.pid
        assert len(launchers(shell.pid)) == 2  # sh, then this test process
    finally:
        shell.kill()
        shell.wait()


def test_an_unreaped_launcher_counts_as_gone(monkeypatch, python_sigint):
    monkeypatch.setattr(ownership, "POLL_SECONDS", 0.05)
    launcher = subprocess.Popen(["sleep", "30"])
    watched = launchers(launcher.pid)
    launcher.kill()
    time.sleep(0.3)  # killed but not waited for: a zombie whose start time is unchanged
    try:
        with pytest.raises(KeyboardInterrupt), LauncherWatch("paper-train", watched):
            time.sleep(5)
    finally:
        launcher.wait()
