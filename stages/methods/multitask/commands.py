"""`icml25 ecg-benchmark`: single-task vs multitask macro AUROC per site on your own ECG records."""

from __future__ import annotations

import argparse
import json


def _ecg_benchmark(args: argparse.Namespace) -> None:
    from stages.methods.multitask.own_data import BenchmarkOptions, benchmark_folder, parse_mapping

    options = BenchmarkOptions(
        rate=args.rate,
        seconds=args.seconds,
        leads=tuple(args.leads),
        steps=args.steps,
        batch=args.batch,
        lr=args.lr,
        test_fraction=args.test_fraction,
        validation_fraction=args.validation_fraction,
        seeds=tuple(args.seeds),
        mapping=parse_mapping(args.map),
        ignore=tuple(args.ignore_codes or ()),
    )
    report = benchmark_folder(args.input, args.output, options)
    print(json.dumps({"output": args.output, "macro_auroc": report["macro_auroc"]}, indent=2))


def add_commands(commands: argparse._SubParsersAction) -> None:
    """Add `ecg-benchmark` to the `icml25` parser."""
    sub = commands.add_parser(
        "ecg-benchmark",
        help="your PhysioNet/Challenge ECG records (one subfolder per site): single-task vs multitask AUROC per site",
    )
    sub.add_argument(
        "--input", required=True, help="folder with one subfolder of .hea + .mat/.dat records per site"
    )
    sub.add_argument("--output", required=True, help="folder for report.json, report.md and site_auroc.png")
    sub.add_argument("--rate", type=float, default=100.0, help="Hz every record is resampled to")
    sub.add_argument(
        "--seconds", type=float, default=10.0, help="record length used (cropped or zero-padded)"
    )
    sub.add_argument("--leads", nargs="+", default=["I", "II", "V1", "V2", "V3", "V4", "V5", "V6"])
    sub.add_argument("--steps", type=int, default=300, help="gradient steps per model (every regime)")
    sub.add_argument("--batch", type=int, default=32)
    sub.add_argument("--lr", type=float, default=1e-3)
    sub.add_argument("--test-fraction", type=float, default=0.3)
    sub.add_argument("--validation-fraction", type=float, default=0.15)
    sub.add_argument("--seeds", type=int, nargs="+", default=[0])
    sub.add_argument("--map", nargs="+", metavar="CODE=CLASS", help="extra SNOMED code → class mappings")
    sub.add_argument("--ignore-codes", nargs="+", metavar="CODE", help="SNOMED codes to skip on purpose")
    sub.set_defaults(handler=_ecg_benchmark)
