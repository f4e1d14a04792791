"""`icml25 distill-points`: distil your point clouds (Parquet table or ModelNet folder) with DD3D."""

from __future__ import annotations

import argparse
import json


def _distill_points(args: argparse.Namespace) -> None:
    from stages.methods.distillation.own_data import DistillRequest, distill_files

    request = DistillRequest(
        cpc=args.cpc,
        points=args.points,
        output_points=args.output_points,
        iterations=args.iterations,
        outer_loop=args.outer_loop,
        inner_loop=args.inner_loop,
        batch_real=args.batch_real,
        rotator=args.rotator,
        eval_epochs=args.eval_epochs,
        seed=args.seed,
    )
    report = distill_files(args.input, args.output, request, args.label_column, args.points_column)
    print(json.dumps({"output": args.output, **report}, indent=2))


def add_commands(commands: argparse._SubParsersAction) -> None:
    """Add `distill-points` to the `icml25` parser."""
    sub = commands.add_parser(
        "distill-points",
        help="DD3D: distil point clouds (Parquet table or ModelNet folder) into a few per class",
    )
    sub.add_argument(
        "--input", required=True, help="Parquet (label + points columns, optional split) or a ModelNet folder"
    )
    sub.add_argument(
        "--output", required=True, help="folder for distilled.parquet, generator, report and figures"
    )
    sub.add_argument("--label-column", default="label")
    sub.add_argument("--points-column", default="points", help="n × 3 coordinates per row (flat or nested)")
    sub.add_argument("--cpc", type=int, default=1, help="distilled clouds per class")
    sub.add_argument("--points", type=int, default=256, help="distillation resolution")
    sub.add_argument(
        "--output-points", type=int, default=None, help="points per distilled cloud (default: input's)"
    )
    sub.add_argument("--iterations", type=int, default=40)
    sub.add_argument("--outer-loop", type=int, default=5)
    sub.add_argument("--inner-loop", type=int, default=5)
    sub.add_argument("--batch-real", type=int, default=16)
    sub.add_argument(
        "--rotator",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="PCA-align every cloud and put the sign flip in the network (for arbitrarily rotated clouds)",
    )
    sub.add_argument("--eval-epochs", type=int, default=100, help="epochs of the test-split evaluation")
    sub.add_argument("--seed", type=int, default=0)
    sub.set_defaults(handler=_distill_points)
