"""What a served run shows: DVC's output streamed line by line (progress bars thinned to quarters), the command
with its experiment name, a one-line error naming `<paper>.<key>`, and the summary of claims and metrics."""

from __future__ import annotations

import sys

import pytest

from flows.experiment_flow import StageLog, experiment_command, form_overrides
from stages.core.dvc_cli import _run_streaming
from stages.core.errors import ParamsError
from stages.core.params import PARAMS_FILE, read_params_file
from stages.platform.audit import AuditRecord, summary_markdown


def test_stage_log_keeps_stage_lines_and_thins_progress_bars():
    shown: list[str] = []
    log = StageLog(shown.append)
    for line in [
        "Running stage 'mrmc-trace':",
        "",
        *(f"trace epochs:  {p}%|##        | {p}/100 [00:01<00:02]" for p in range(0, 101, 5)),
        "[mrmc-trace +   3.1s] done",
    ]:
        log(line)
    bars = [line for line in shown if "%|" in line]
    assert shown[0] == "Running stage 'mrmc-trace':" and shown[-1] == "[mrmc-trace +   3.1s] done"
    assert [line.split("%")[0].split()[-1] for line in bars] == ["0", "25", "50", "75", "100"]


def test_streaming_hands_over_lines_as_printed_and_keeps_the_output(tmp_path):
    script = "import sys, time\nprint('first', flush=True)\nsys.stderr.write('bar 50%\\rbar 100%\\n')\nprint('last')"
    seen: list[str] = []
    completed = _run_streaming([sys.executable, "-c", script], tmp_path, seen.append)
    assert completed.returncode == 0
    assert seen == ["first", "bar 50%", "bar 100%", "last"]
    assert completed.stdout.splitlines() == seen


def test_the_logged_command_names_the_experiment():
    command = experiment_command("mrmc", ["mrmc.budgets=[0.1, 0.3]"], "served")
    assert command == "dvc exp run --temp mrmc-claims -S 'mrmc.budgets=[0.1, 0.3]' -n served"


def test_a_bad_form_fails_in_one_line_naming_the_key(repo_root):
    section = read_params_file(repo_root / PARAMS_FILE)["mrmc"]
    with pytest.raises(ParamsError) as caught:
        form_overrides("mrmc", {**section, "budgets": [0.1, 1.5]}, repo_root)
    message = str(caught.value)
    assert "\n" not in message
    assert message == "run form: invalid params: mrmc.budgets.1: Input should be less than 1 (got 1.5)"
    assert form_overrides("mrmc", {**section, "budgets": [0.5, 0.1, 0.3]}, repo_root) == [
        "mrmc.budgets=[0.1, 0.3, 0.5]"
    ]


def test_summary_counts_verdicts_and_lists_claims_and_headline_metrics():
    record = AuditRecord(
        paper="demo",
        run="exp-1",
        commit="abc",
        params={},
        hashes={},
        validation={},
        metrics={"data/demo/metrics.json": {"accuracy": {"a": 0.91234, "b": 0.5}, "n": 3, "ok": True}},
        claims=[
            {"id": "beats", "verdict": "holds", "reason": "a | b"},
            {"id": "fast", "verdict": "inconclusive", "reason": "inside the noise"},
            {"id": "old", "holds": False, "measured": {}},
        ],
    )
    text = summary_markdown(record)
    assert "**Claims**: 1 holds, 1 fails, 1 inconclusive" in text
    assert "| `beats` | **holds** | a \\| b |" in text and "| `old` | **fails** |" in text
    assert "accuracy.a: 0.9123" in text and "n: 3" in text and "ok" not in text
