"""`icml25`: the library's commands (`stages.platform.commands`) plus orchestration: serve, flow, all-papers,
cluster-sweep, deploy-pool.

The CLI lives in `flows` because it is the one place allowed to import both layers.
"""

from __future__ import annotations

import argparse

from stages.platform.commands import main as library_main

ORCHESTRATION_BENCHMARKS = {"orchestration": "flows.benchmarks:run_orchestration_benchmarks"}


def _all_papers(args: argparse.Namespace) -> None:
    from flows.experiment_flow import run_all_papers

    sweep = [[item.strip() for item in text.split(";") if item.strip()] for text in args.sweep] or None
    names = run_all_papers(args.paper, sweep, args.workspace, args.dask_address)
    print("experiments: " + ", ".join(names))


def _cluster_sweep(args: argparse.Namespace) -> None:
    from flows.cluster import run_sweep_on_cluster

    sweep = [[item.strip() for item in text.split(";") if item.strip()] for text in args.sweep]
    results = run_sweep_on_cluster(args.paper, sweep, args.scheduler, args.workspace, args.git_remote)
    for result in results:
        print(f"{result.name}: ran on {result.host} in {result.clone}")


def _deploy_pool(args: argparse.Namespace) -> None:
    from flows.pool import deploy_to_pool

    names = deploy_to_pool(args.pool, args.workspace, args.git_remote)
    print(f"{len(names)} deployments on work pool {args.pool!r}; start workers with")
    print(f"  ICML25_WORKER_HOME=/scratch/icml25 prefect worker start --pool {args.pool} --type process")


def _serve(args: argparse.Namespace) -> None:
    from flows import serve

    if args.stop:
        print("stopped" if serve.stop(args.workspace) else "no `icml25 serve` running for this workspace")
        return
    serve.serve(args.port, args.workspace, authenticate=not args.no_auth)


def _flow(args: argparse.Namespace) -> None:
    from pathlib import Path

    from flows.embedded_api import start_embedded_api
    from stages.core.dvc_graph import plan_in_background
    from stages.papers.registry import paper_spec

    paper_spec(
        args.paper
    )  # an unknown id is told before anything starts (the paper's module is imported later)
    workspace = str(Path(args.workspace).resolve())
    # Prefect's API app starts in a forked process (before Prefect, numpy or any library thread is loaded) and
    # imports the server on the other core while this process imports Prefect and then asks DVC for its plan; with a
    # server already running, the plan is what runs on the other core
    api = start_embedded_api()
    plan = None if args.force or api is not None else plan_in_background(args.paper, workspace)
    from flows.paper_flow import run_paper_flow

    run_paper_flow(args.paper, workspace=workspace, force=args.force, plan=plan, api=api)


def add_orchestration_commands(commands: argparse._SubParsersAction) -> None:
    """serve, flow and all-papers."""
    served = commands.add_parser(
        "serve", help="Prefect server + UI on 127.0.0.1 with one deployment per paper"
    )
    served.add_argument("--port", type=int, default=4200)
    served.add_argument(
        "--stop", action="store_true", help="stop the running `icml25 serve` of this workspace"
    )
    served.add_argument("--workspace", default=".")
    served.add_argument(
        "--no-auth",
        action="store_true",
        help="do not require an auth string (default: $ICML25_API_AUTH_STRING, else one generated and printed)",
    )
    served.set_defaults(handler=_serve)

    flow = commands.add_parser("flow", help="run a paper's stages as a Prefect flow (embedded, no server)")
    flow.add_argument("paper")
    flow.add_argument("--workspace", default=".", help="the DVC workspace to run in")
    flow.add_argument("--force", action="store_true", help="rerun stages even if DVC finds them up to date")
    flow.set_defaults(handler=_flow)

    papers = commands.add_parser(
        "all-papers", help="run papers (or a sweep) as DVC experiments on a Dask task runner"
    )
    papers.add_argument("--paper", action="append", help="a paper id (repeatable; default: every paper)")
    papers.add_argument(
        "--sweep",
        action="append",
        default=[],
        metavar="'K=V;K=V'",
        help="one experiment per --sweep, its overrides separated by ';' (needs exactly one --paper)",
    )
    papers.add_argument("--dask-address", help="an existing Dask scheduler (default: a LocalCluster)")
    papers.add_argument("--workspace", default=".")
    papers.set_defaults(handler=_all_papers)

    cluster = commands.add_parser(
        "cluster-sweep",
        help="a sweep as DVC experiments on Dask workers on other machines, each in its own clone; then pulled",
    )
    cluster.add_argument("paper")
    cluster.add_argument("--scheduler", required=True, help="the Dask scheduler, e.g. tcp://10.0.0.5:8786")
    cluster.add_argument(
        "--sweep", action="append", required=True, metavar="'K=V;K=V'", help="one experiment per --sweep"
    )
    cluster.add_argument("--git-remote", default="origin", help="the git remote every worker can clone")
    cluster.add_argument("--workspace", default=".")
    cluster.set_defaults(handler=_cluster_sweep)

    pool = commands.add_parser(
        "deploy-pool",
        help="one deployment per paper on a Prefect process work pool (at $PREFECT_API_URL), run in workers' clones",
    )
    pool.add_argument("--pool", default="icml25", help="the work pool (created as type process if missing)")
    pool.add_argument("--git-remote", default="origin", help="the git remote every worker can clone")
    pool.add_argument("--workspace", default=".")
    pool.set_defaults(handler=_deploy_pool)


def main(argv: list[str] | None = None) -> int:
    """The `icml25` console script."""
    return library_main(argv, [add_orchestration_commands], ORCHESTRATION_BENCHMARKS)
