"""A stage run by another Python than the workspace's `.venv` stops at once, saying how to run it."""

from __future__ import annotations

import subprocess
import sys

from stages.platform.interpreter import wrong_interpreter


def _fake_venv(root):
    (root / ".venv/bin").mkdir(parents=True)
    (root / ".venv/bin/python").symlink_to(sys.executable)


def test_no_project_venv_means_any_interpreter(tmp_path):
    assert wrong_interpreter(tmp_path, prefix="/usr") is None


def test_the_venv_itself_passes_and_another_python_is_named(tmp_path):
    _fake_venv(tmp_path)
    assert wrong_interpreter(tmp_path, prefix=str(tmp_path / ".venv")) is None
    message = wrong_interpreter(tmp_path, prefix="/usr")
    assert message is not None and "source .venv/bin/activate" in message


def test_python_m_stages_refuses_before_importing_anything(tmp_path, repo_root):
    _fake_venv(tmp_path)
    result = subprocess.run(
        [sys.executable, "-m", "stages", "stage", "params"],
        cwd=tmp_path,
        env={"PYTHONPATH": str(repo_root), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 2
    assert "not the project's environment" in result.stderr and "Traceback" not in result.stderr
    assert not (tmp_path / "data").exists()
