"""`icml25 kindel-score`: rank your own SMILES with a model trained on a KinDEL folder's screen."""

from __future__ import annotations

import argparse
import json


def _score(args: argparse.Namespace) -> None:
    from stages.methods.del_screens.scoring import score_file

    summary = score_file(
        args.library, args.target, args.input, args.output, args.model, args.smiles_column, args.seed
    )
    print(json.dumps(summary, indent=2))


def add_commands(commands: argparse._SubParsersAction) -> None:
    """Add `kindel-score` to the `icml25` parser."""
    sub = commands.add_parser(
        "kindel-score", help="score your SMILES with a model trained on a KinDEL screen"
    )
    sub.add_argument("--library", required=True, help="a KinDEL folder (e.g. data/kindel/library)")
    sub.add_argument("--target", default="sim", help="its file prefix: sim, ddr1, mapk14")
    sub.add_argument(
        "--input",
        required=True,
        help="your CSV or Parquet table with a SMILES column (checked, every SMILES parsed, before training)",
    )
    sub.add_argument(
        "--output", required=True, help="where to write it with a `score` column (.csv/.parquet)"
    )
    sub.add_argument(
        "--model",
        default="rf",
        help="rf, xgboost, knn, dnn, compose_full or compose_factorized (this one also needs your table's "
        "building-block columns smiles_a, smiles_b, smiles_c)",
    )
    sub.add_argument("--smiles-column", default="smiles")
    sub.add_argument("--seed", type=int, default=0)
    sub.set_defaults(handler=_score)
