"""`icml25 audit`: which data, params and code produced a paper's numbers, for the workspace or an experiment.

Everything comes from the record DVC and git keep: `dvc.lock` (md5 of every dep and out, and the params each
stage read), the git commit, and the DVC-tracked metrics, claims and validation reports of that revision. The
params shown are the ones `dvc.lock` recorded for the run whose hashes are shown; a key whose value in that
revision's `params.yaml` differs (edited, not rerun) is flagged beside them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from stages.core.dvc_graph import locked_paper_stages
from stages.core.errors import PipelineError
from stages.core.git import git_output
from stages.core.params import load_yaml
from stages.platform.experiments import experiment_revs

WORKSPACE = "workspace"


@dataclass(frozen=True)
class AuditRecord:
    """What produced one run of a paper."""

    paper: str
    run: str
    commit: str
    params: dict[str, Any]
    hashes: dict[str, str]
    validation: dict[str, dict[str, Any]]
    metrics: dict[str, Any]
    claims: list[dict[str, Any]]
    shared_params: dict[str, Any] = field(default_factory=dict)
    """Recorded params outside the paper's section (`common.seed`, a shared stage's section), dotted."""
    params_not_rerun: dict[str, tuple[Any, Any]] = field(default_factory=dict)
    """Dotted key → (recorded value, value in `params.yaml` now) where the two differ."""


class _Revision:
    """Reads files as they were in the workspace or at an experiment's git revision."""

    def __init__(self, workspace: Path, rev: str | None) -> None:
        self.workspace, self.rev = workspace, rev

    def git_file(self, path: str) -> str:
        if self.rev is None:
            file = self.workspace / path
            if not file.is_file():
                raise PipelineError(f"nothing to audit: {file} does not exist (not a DVC workspace?)")
            return file.read_text()
        return git_output(self.workspace, "show", f"{self.rev}:{path}")

    def data_file(self, path: str) -> str | None:
        if self.rev is None:
            file = self.workspace / path
            return file.read_text() if file.is_file() else None
        from dvc.exceptions import DvcException

        try:
            return self._dvc_files.read_text(path)
        except (FileNotFoundError, DvcException):  # an output DVC cannot find at that revision is missing
            return None

    @cached_property
    def _dvc_files(self) -> Any:
        """The revision's DVC-tracked files, opened once (each `dvc.api.read` would open the repo again)."""
        from dvc.fs import DVCFileSystem

        return DVCFileSystem(repo=str(self.workspace), rev=self.rev)

    def commit(self) -> str:
        if self.rev is not None:
            baseline = git_output(self.workspace, "rev-parse", f"{self.rev}^").strip()
            return f"{self.rev} (experiment on {baseline})"
        head = git_output(self.workspace, "rev-parse", "HEAD").strip()
        dirty = git_output(self.workspace, "status", "--porcelain", "--untracked-files=no").strip()
        return head + (" + uncommitted changes" if dirty else "")


def audit_record(paper: str, run: str = WORKSPACE, workspace: str | Path = ".") -> AuditRecord:
    """Collect the audit of `paper` for the workspace (`run="workspace"`) or an experiment name."""
    from stages.papers.registry import load_paper

    workspace = Path(workspace)
    described = load_paper(paper)
    pipeline = described.pipeline
    rev = None
    if run != WORKSPACE:
        revs = experiment_revs(workspace)
        if run not in revs:
            raise PipelineError(
                f"no experiment named '{run}'; experiments: {', '.join(sorted(revs)) or '(none)'}"
            )
        rev = revs[run]
    source = _Revision(workspace, rev)
    lock = (load_yaml(source.git_file("dvc.lock"), f"{rev or workspace}: dvc.lock") or {}).get("stages", {})
    stages = locked_paper_stages(lock, paper)
    if not stages:
        raise PipelineError(
            f"nothing to audit: dvc.lock has no stage of {paper} (run `dvc repro {paper}-claims`)"
        )
    recorded = recorded_params(lock, stages)
    current = flatten(load_yaml(source.git_file("params.yaml"), f"{rev or workspace}: params.yaml") or {})
    hashes = {
        f"{entry['path']}": entry.get("md5", "")
        for name in stages
        for kind in ("deps", "outs")
        for entry in lock[name].get(kind, [])
    }
    validation = {}
    for path in sorted(path for path in hashes if path.endswith("validation.json")):
        text = source.data_file(path)
        if text:
            report = json.loads(text)
            validation[path] = _validation_summary(report)
    metrics = {
        path: json.loads(text)
        for step in pipeline.steps
        for path in step.metrics.values()
        if (text := source.data_file(path))
    }
    claims_text = source.data_file(described.claims_path)
    if not metrics and not claims_text:
        raise PipelineError(
            f"nothing to audit: dvc.lock records a run of {paper}, but none of its metrics or claims files is "
            "here (`dvc pull` or `dvc repro` brings them)"
        )
    prefix = f"{pipeline.params_section}."
    return AuditRecord(
        paper=paper,
        run=run,
        commit=source.commit(),
        params=unflatten(
            {key.removeprefix(prefix): v for key, v in recorded.items() if key.startswith(prefix)}
        ),
        shared_params={key: value for key, value in recorded.items() if not key.startswith(prefix)},
        params_not_rerun=params_not_rerun(recorded, current),
        hashes=hashes,
        validation=validation,
        metrics=metrics,
        claims=json.loads(claims_text) if claims_text else [],
    )


def recorded_params(lock: dict[str, Any], stages: list[str]) -> dict[str, Any]:
    """The params.yaml values `dvc.lock` recorded for `stages`, as dotted leaf keys (a stage that read a whole
    section records it as one key; it is spread into its leaves)."""
    recorded: dict[str, Any] = {}
    for name in stages:
        for key, value in lock[name].get("params", {}).get("params.yaml", {}).items():
            recorded.update(flatten(value, key))
    return dict(sorted(recorded.items()))


def params_not_rerun(recorded: dict[str, Any], current: dict[str, Any]) -> dict[str, tuple[Any, Any]]:
    """Keys whose recorded value differs from `params.yaml` now: edited since the run, not rerun."""
    return {
        key: (value, current.get(key, ABSENT))
        for key, value in recorded.items()
        if current.get(key, ABSENT) != value
    }


ABSENT = "(not in params.yaml)"


def unflatten(flat: dict[str, Any]) -> dict[str, Any]:
    """`{"a.b": 1}` → `{"a": {"b": 1}}` (the inverse of `flatten`)."""
    nested: dict[str, Any] = {}
    for key, value in flat.items():
        *parents, leaf = key.split(".")
        node = nested
        for parent in parents:
            node = node.setdefault(parent, {})
        node[leaf] = value
    return nested


def _validation_summary(report: dict[str, Any]) -> dict[str, Any]:
    if "success" in report:
        return {
            "success": report["success"],
            "rows": report.get("rows"),
            "expectations": len(report["results"]),
        }
    return {name: _validation_summary(part) for name, part in report.items() if isinstance(part, dict)}


def flatten(value: Any, prefix: str = "") -> dict[str, Any]:
    """Nested dicts as `a.b.c` keys (lists stay values)."""
    if not isinstance(value, dict):
        return {prefix: value}
    flat: dict[str, Any] = {}
    for key, item in value.items():
        flat.update(flatten(item, f"{prefix}.{key}" if prefix else str(key)))
    return flat


def claim_verdict(claim: dict[str, Any]) -> str:
    """A recorded claim's verdict: `holds`, `fails` or `inconclusive` (files from before the three verdicts
    carry a boolean `holds`, read as holds / fails)."""
    if "verdict" in claim:
        return str(claim["verdict"])
    return "holds" if claim.get("holds") else "fails"


def audit_markdown(record: AuditRecord) -> str:
    """The audit as Markdown."""
    lines = [f"# Audit: {record.paper} ({record.run})", "", f"- code: `{record.commit}`", ""]
    lines += ["## Params (as dvc.lock recorded them for this run)", ""]
    lines += [f"- `{record.paper}.{key}` = `{value}`" for key, value in flatten(record.params).items()]
    lines += [f"- `{key}` = `{value}`" for key, value in record.shared_params.items()]
    if record.params_not_rerun:
        lines += ["", "## Params edited since this run (not rerun: the numbers below do not use them)", ""]
        lines += ["| key | this run | params.yaml now |", "|---|---|---|"]
        lines += [
            f"| `{key}` | `{ran}` | `{now}` |" for key, (ran, now) in sorted(record.params_not_rerun.items())
        ]
    lines += ["", "## Data and model hashes (md5, from dvc.lock)", "", "| path | md5 |", "|---|---|"]
    lines += [f"| `{path}` | `{md5}` |" for path, md5 in sorted(record.hashes.items())]
    lines += ["", "## Data validation", ""]
    lines += [
        f"- `{path}`: `{json.dumps(summary, sort_keys=True)}`" for path, summary in record.validation.items()
    ]
    lines += ["", "## Metrics", ""]
    for path, metrics in record.metrics.items():
        lines += [f"- `{path}`"] + [f"  - {key}: {value}" for key, value in flatten(metrics).items()]
    lines += ["", "## Claims", ""]
    lines += [
        f"- {claim['id']}: {claim_verdict(claim)} — {claim.get('reason') or json.dumps(claim['measured'])}"
        for claim in record.claims
    ]
    return "\n".join(lines) + "\n"


HEADLINE_METRICS = 8


def summary_markdown(record: AuditRecord) -> str:
    """What a run concluded, for the run's page: verdict counts, each claim with its verdict and reason, and
    the first few scalar metrics (the audit has the rest)."""
    verdicts = [claim_verdict(claim) for claim in record.claims]
    counts = ", ".join(
        f"{verdicts.count(v)} {v}" for v in ("holds", "fails", "inconclusive") if v in verdicts
    )
    lines = [f"# {record.paper}: {record.run}", "", f"**Claims**: {counts or 'none recorded'}", ""]
    if record.claims:
        lines += ["| claim | verdict | why |", "|---|---|---|"]
        for claim, verdict in zip(record.claims, verdicts, strict=True):
            reason = (claim.get("reason") or "").replace("|", "\\|").replace("\n", " ")
            lines.append(f"| `{claim['id']}` | **{verdict}** | {reason} |")
    scalars = [
        (path, key, value)
        for path, metrics in record.metrics.items()
        for key, value in flatten(metrics).items()
        if isinstance(value, int | float) and not isinstance(value, bool)
    ]
    if scalars:
        lines += ["", "## Headline metrics", ""]
        lines += [f"- `{path}` {key}: {value:.4g}" for path, key, value in scalars[:HEADLINE_METRICS]]
        if len(scalars) > HEADLINE_METRICS:
            lines.append(f"- … {len(scalars) - HEADLINE_METRICS} more in the audit artifact")
    lines += ["", f"code `{record.commit}`"]
    return "\n".join(lines) + "\n"


def diff_markdown(first: AuditRecord, second: AuditRecord) -> str:
    """What changed between two runs: params, data hashes, metrics."""
    sections = [
        ("Params", flatten(first.params), flatten(second.params)),
        ("Data and model hashes", first.hashes, second.hashes),
        ("Metrics", flatten(first.metrics), flatten(second.metrics)),
    ]
    lines = [f"# Audit diff: {first.paper}: {first.run} → {second.run}", ""]
    for title, left, right in sections:
        changed = sorted(key for key in left.keys() | right.keys() if left.get(key) != right.get(key))
        lines += [f"## {title} ({len(changed)} changed)", ""]
        if changed:
            lines += [f"| key | {first.run} | {second.run} |", "|---|---|---|"]
            lines += [f"| `{key}` | `{left.get(key)}` | `{right.get(key)}` |" for key in changed]
        lines.append("")
    return "\n".join(lines)
