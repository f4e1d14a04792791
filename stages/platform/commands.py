"""The library's commands (`python -m stages ...`): running stages, generating `dvc.yaml`, papers, claims,
experiments, audits, benchmarks, and the own-data commands that papers and methods contribute.

`icml25` (`flows.cli`) is this parser plus the orchestration commands (serve, flow, all-papers); nothing
here imports Prefect.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import sys
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

from stages.core.dvc_cli import OFFLINE_ENV
from stages.core.errors import PipelineError
from stages.platform.kernels import kernel_record, kernels_loaded, pin_kernels

PLATFORM_BENCHMARKS = "stages.platform.benchmarks:run_benchmarks"
AddCommands = Callable[[argparse._SubParsersAction], None]


def _stage(args: argparse.Namespace) -> None:
    from stages.platform.pipelines import run_stage

    print(f"[{args.name}] kernels: {kernel_record()}", file=sys.stderr)
    run_stage(args.name, args.params)


def _dvc_yaml(args: argparse.Namespace) -> None:
    from stages.platform.dvc_yaml import generate

    fresh, diff = generate(args.workspace, check=args.check)
    if args.check and not fresh:
        sys.stdout.write(diff)
        raise PipelineError("dvc.yaml differs from the step specs: run `icml25 dvc-yaml` and commit it")
    print("dvc.yaml is up to date" if fresh else "dvc.yaml written")


def _lock_status(args: argparse.Namespace) -> None:
    from stages.platform.lock_status import lock_status, status_text

    statuses = lock_status(args.workspace)
    print(status_text(statuses, verbose=args.verbose))
    stale = [status.name for status in statuses if not status.fresh]
    if args.check and stale:
        raise PipelineError(
            f"dvc.lock is not the record of this workspace: {len(stale)} stage(s) stale or never locked "
            f"({', '.join(stale)}); rerun them (`dvc repro <stage>`) and commit dvc.lock"
        )


def _results(args: argparse.Namespace) -> None:
    from stages.platform.results import check_results, write_results

    if args.check:
        problems = check_results(args.workspace)
        if problems:
            raise PipelineError("result tables are not the outputs':\n" + "\n".join(problems))
        print("result tables match dvc.lock's run")
        return
    for written in write_results(args.workspace):
        print(f"wrote {written}")


def _papers(args: argparse.Namespace) -> None:
    from stages.papers.registry import PAPERS

    for paper_id in PAPERS.names():
        paper = PAPERS.get(paper_id)
        print(f"{paper_id:18} {paper.title}\n{'':18} stages: {', '.join(paper.pipeline.stage_names())}")


def _claims(args: argparse.Namespace) -> None:
    from stages.core.claims import read_claims
    from stages.papers.registry import PAPERS
    from stages.platform.report import TIMING_NOTE, claims_table

    paths = {paper_id: Path(PAPERS.get(paper_id).claims_path) for paper_id in PAPERS.names()}
    found = {paper_id: read_claims(path) for paper_id, path in paths.items() if path.is_file()}
    if not found:
        raise PipelineError("no claims.json found yet: run `make repro` (or `dvc repro`) first")
    print(claims_table(found))
    timed = {paper_id: PAPERS.get(paper_id).timing_claims_path for paper_id in PAPERS.names()}
    timing = {
        paper_id: read_claims(path) for paper_id, path in timed.items() if path and Path(path).is_file()
    }
    if timing:
        print(claims_table(timing, "Claims about wall-clock time", TIMING_NOTE))


def _smoke(args: argparse.Namespace) -> None:
    from stages.platform.smoke import run_smoke

    workdir = run_smoke(targets=args.targets, workdir=args.workdir)
    print(f"smoke run finished in {workdir}")


def _run(args: argparse.Namespace) -> None:
    from stages.platform.experiments import run_experiment

    result = run_experiment(args.paper, args.set, args.name, args.workspace)
    print(f"experiment {result.name} ({result.rev}) — `icml25 audit {args.paper} --exp {result.name}`")


def _audit(args: argparse.Namespace) -> None:
    from stages.platform.audit import audit_markdown, audit_record, diff_markdown

    if args.diff:
        first, second = (audit_record(args.paper, run, args.workspace) for run in args.diff)
        text = diff_markdown(first, second)
    else:
        text = audit_markdown(audit_record(args.paper, args.exp or "workspace", args.workspace))
    if args.output:
        from stages.core.io import write_text

        write_text(text, args.output)
    print(text)


def benchmark_targets(extra: Mapping[str, str] = {}) -> dict[str, str]:
    """`icml25 bench` targets: the platform, each paper with benchmarks, and any extra (orchestration)."""
    from stages.papers.registry import PAPERS

    papers = {pid: PAPERS.get(pid).benchmarks for pid in PAPERS.names() if PAPERS.get(pid).benchmarks}
    return {"platform": PLATFORM_BENCHMARKS, **papers, **extra}


def _bench(args: argparse.Namespace) -> None:
    from stages.core.steps import import_ref

    targets = benchmark_targets(args.extra_benchmarks)
    if args.target not in targets:
        raise PipelineError(f"unknown benchmark '{args.target}'; targets: {', '.join(targets)}")
    print(json.dumps(import_ref(targets[args.target])(), indent=2))


def contributed_commands() -> list[AddCommands]:
    """`add_commands` of every module a registered paper names in `Paper.commands` (each module once)."""
    from stages.papers.registry import PAPERS

    modules = dict.fromkeys(module for pid in PAPERS.names() for module in PAPERS.get(pid).commands)
    return [importlib.import_module(module).add_commands for module in modules]


def add_stage_command(commands: argparse._SubParsersAction) -> None:
    """`stage NAME`: what every `dvc.yaml` stage runs."""
    stage = commands.add_parser("stage", help="run one dvc.yaml stage (what `dvc repro` calls)")
    stage.add_argument("name", help="stage name, e.g. mrmc-trace or data-fashion_mnist")
    stage.add_argument("--params", default="params.yaml")
    stage.set_defaults(handler=_stage)


def add_library_commands(commands: argparse._SubParsersAction, extra_benchmarks: Mapping[str, str]) -> None:
    """The commands every install has (no Prefect needed)."""
    add_stage_command(commands)

    dvc_yaml = commands.add_parser(
        "dvc-yaml", help="generate dvc.yaml from the step specs (--check: compare)"
    )
    dvc_yaml.add_argument("--check", action="store_true", help="exit 2 with a diff when dvc.yaml is stale")
    dvc_yaml.add_argument("--workspace", default=".")
    dvc_yaml.set_defaults(handler=_dvc_yaml)

    lock = commands.add_parser(
        "lock-status", help="stages whose dvc.lock entry differs from this workspace's code, params or data"
    )
    lock.add_argument("--check", action="store_true", help="exit 2 naming them when any stage is stale")
    lock.add_argument("--verbose", action="store_true", help="every reason, not the first three")
    lock.add_argument("--workspace", default=".")
    lock.set_defaults(handler=_lock_status)

    results = commands.add_parser(
        "results", help="write the README and docs/results.md result tables from the claims outputs"
    )
    results.add_argument(
        "--check", action="store_true", help="exit 2 when a committed table is edited or not dvc.lock's run"
    )
    results.add_argument("--workspace", default=".")
    results.set_defaults(handler=_results)

    commands.add_parser("papers", help="list registered papers and their stages").set_defaults(
        handler=_papers
    )
    commands.add_parser("claims", help="print the claims report across papers").set_defaults(handler=_claims)

    smoke = commands.add_parser(
        "smoke", help="run pipelines at tiny sizes in a scratch copy (params.smoke.yaml)"
    )
    smoke.add_argument("targets", nargs="*", help="dvc.yaml stages (default: all)")
    smoke.add_argument("--workdir", help="scratch folder (default: a new temporary folder, kept)")
    smoke.set_defaults(handler=_smoke)

    run = commands.add_parser("run", help="run a paper with param overrides as a DVC experiment (isolated)")
    run.add_argument("paper")
    run.add_argument(
        "-S", "--set", action="append", default=[], metavar="KEY=VALUE", help="e.g. mrmc.pool_size=5000"
    )
    run.add_argument("-n", "--name", help="experiment name (default: DVC picks one)")
    run.add_argument("--workspace", default=".")
    run.set_defaults(handler=_run)

    audit = commands.add_parser(
        "audit", help="params, data hashes, validation, code, metrics and claims of a run"
    )
    audit.add_argument("paper")
    audit.add_argument("--exp", help="an experiment name (default: the workspace)")
    audit.add_argument(
        "--diff", nargs=2, metavar=("A", "B"), help="compare two runs ('workspace' or exp names)"
    )
    audit.add_argument("--output", help="also write the Markdown here")
    audit.add_argument("--workspace", default=".")
    audit.set_defaults(handler=_audit)

    bench = commands.add_parser("bench", help="benchmarks → reports/benchmarks/ (`icml25 bench <paper>`)")
    bench.add_argument(
        "target",
        nargs="?",
        default="platform",
        help="platform (Parquet I/O, no-op repro, selection), a paper id with benchmarks, or orchestration",
    )
    bench.set_defaults(handler=_bench, extra_benchmarks=dict(extra_benchmarks))


def build_parser(
    extra_commands: Iterable[AddCommands] = (),
    extra_benchmarks: Mapping[str, str] = {},
    contributed: bool = True,
) -> argparse.ArgumentParser:
    """The `icml25` argument parser: library commands, the papers' contributed commands (unless `contributed`
    is False: they import every paper), then any extra ones."""
    parser = argparse.ArgumentParser(prog="icml25", description="ICML 2025 papers as auditable DVC pipelines")
    commands = parser.add_subparsers(dest="command", required=True)
    add_library_commands(commands, extra_benchmarks)
    for add in (*(contributed_commands() if contributed else ()), *extra_commands):
        add(commands)
    return parser


def command_parser(
    words: list[str], extra_commands: Iterable[AddCommands] = (), extra_benchmarks: Mapping[str, str] = {}
) -> argparse.ArgumentParser:
    """The parser for the command line `words`: `stage` alone for a stage process; without the papers'
    commands when the command is one of the library's or the extra ones (`icml25 flow mrmc` imports only
    MRMC); else the whole parser (a paper's command, `--help`, a typo to be told the valid names)."""
    if words and words[0] == "stage":
        return stage_parser()
    own = build_parser(extra_commands, extra_benchmarks, contributed=False)
    if words and words[0] in _command_names(own):
        return own
    return build_parser(extra_commands, extra_benchmarks)


def _command_names(parser: argparse.ArgumentParser) -> set[str]:
    return {
        name
        for action in parser._actions
        if isinstance(action, argparse._SubParsersAction)
        for name in action.choices
    }


def stage_parser() -> argparse.ArgumentParser:
    """The parser of `stage NAME` alone: a stage process (one per DVC stage) imports no paper's commands."""
    parser = argparse.ArgumentParser(prog="icml25", description="run one dvc.yaml stage")
    add_stage_command(parser.add_subparsers(dest="command", required=True))
    return parser


def main(
    argv: list[str] | None = None,
    extra_commands: Iterable[AddCommands] = (),
    extra_benchmarks: Mapping[str, str] = {},
) -> int:
    """Entry point: user errors print one clear message and exit with status 2."""
    for key, value in OFFLINE_ENV.items():  # runs are offline, also when not started from the Makefile
        os.environ.setdefault(key, value)
    if not kernels_loaded():  # a process's first command pins the kernels; an in-process call keeps its own
        pin_kernels()
    words = sys.argv[1:] if argv is None else argv
    args = command_parser(words, extra_commands, extra_benchmarks).parse_args(argv)
    try:
        refuse_clashing_paths(args)
        args.handler(args)
    except PipelineError as error:
        print(f"error: {error}", file=sys.stderr)
        return error.exit_code
    except OSError as error:  # a path the user gave that the system refuses (/proc, a read-only folder, ...)
        if error.filename is None or args.command == "stage":  # a stage's own failure keeps its traceback
            raise
        print(f"error: {error.filename}: {error.strerror or error}", file=sys.stderr)
        return 2
    return 0


def refuse_clashing_paths(args: argparse.Namespace) -> None:
    """Stop before any work when an output is also an input or two outputs name one path."""
    from stages.core.user_paths import clashing_paths

    problems = clashing_paths(args)
    if problems:
        raise PipelineError("\n".join(problems))
