"""`icml25 certify`: certified accuracy and per-image radii of a LipConvNet saved here, on your image table."""

from __future__ import annotations

import argparse
import json


def _certify(args: argparse.Namespace) -> None:
    from stages.methods.lipschitz.own_data import certify_files

    report = certify_files(
        args.model, args.images, args.output, args.epsilons, args.column, args.label_column
    )
    print(json.dumps({"output": args.output, **report["summary"]}, indent=2))


def add_commands(commands: argparse._SubParsersAction) -> None:
    """Add `certify` to the `icml25` parser."""
    sub = commands.add_parser(
        "certify",
        help="BRONet: certified l2 accuracy and per-image radii of a saved LipConvNet on your images",
    )
    sub.add_argument(
        "--model", required=True, help="folder with model.safetensors and config.json (bronet-train)"
    )
    sub.add_argument(
        "--images", required=True, help="Parquet table: an image column (flat or H×W arrays) + labels"
    )
    sub.add_argument("--output", required=True, help="new folder for radii.parquet, report.md and figures")
    sub.add_argument(
        "--epsilons",
        type=float,
        nargs="+",
        default=[36 / 255, 72 / 255, 108 / 255],
        help="l2 radii in [0, 1] pixel units (default 36/255 72/255 108/255)",
    )
    sub.add_argument("--column", default="image", help="column of images in [0, 1] (default: image)")
    sub.add_argument("--label-column", default="label", help="column of integer labels (default: label)")
    sub.set_defaults(handler=_certify)
