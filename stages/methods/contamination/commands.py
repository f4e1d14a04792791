"""`icml25 bdc-assess`: fidelity and contamination resistance of a benchmark update from your correctness
files, or (`--strategy NAME`) your multiple-choice file rewritten by a registered strategy."""

from __future__ import annotations

import argparse
import json

from stages.core.errors import DataValidationError


def _assess(args: argparse.Namespace) -> None:
    from stages.methods.contamination.own_data import assess_files, rewrite_file

    if args.strategy:
        if not args.items:
            raise DataValidationError("--strategy needs --items (your multiple-choice file)")
        count = rewrite_file(args.items, args.strategy, args.output, args.seed)
        print(json.dumps({"output": args.output, "strategy": args.strategy, "items": count}, indent=2))
        return
    needed = {
        "--clean-original": args.clean_original,
        "--clean-updated": args.clean_updated,
        "--contaminated-updated": args.contaminated_updated,
    }
    missing = [flag for flag, value in needed.items() if not value]
    if missing:
        raise DataValidationError(f"missing {', '.join(missing)} (or give --strategy and --items to rewrite)")
    report = assess_files(
        args.clean_original,
        args.clean_updated,
        args.contaminated_updated,
        args.output,
        args.contaminated_original,
        args.column,
        args.confidence,
        args.resamples,
        args.seed,
    )
    keys = (
        "questions",
        "fidelity",
        "fidelity_interval",
        "resistance",
        "resistance_interval",
        "vanilla_resistance",
        "resistance_gain",
        "resistance_gain_interval",
    )
    print(json.dumps({"output": args.output} | {key: report[key] for key in keys}, indent=2))


def add_commands(commands: argparse._SubParsersAction) -> None:
    """Add `bdc-assess` to the `icml25` parser."""
    from stages.methods.contamination.strategies import STRATEGIES

    sub = commands.add_parser(
        "bdc-assess",
        help="BDC: fidelity and contamination resistance of a benchmark update (or rewrite an MC file)",
    )
    sub.add_argument("--clean-original", help="correctness of the clean model on the original questions")
    sub.add_argument("--clean-updated", help="correctness of the clean model on the updated questions")
    sub.add_argument(
        "--contaminated-updated", help="correctness of the contaminated model on the updated questions"
    )
    sub.add_argument(
        "--contaminated-original",
        help="correctness of the contaminated model on the originals (vanilla baseline)",
    )
    sub.add_argument(
        "--column", default="correct", help="the 0/1 column of the correctness files (ids: `id`)"
    )
    sub.add_argument("--output", required=True, help="report folder; with --strategy, the rewritten file")
    sub.add_argument("--strategy", choices=STRATEGIES.names(), help="rewrite --items with this strategy")
    sub.add_argument("--items", help="your MC file: id, question, choices (list), answer (label)")
    sub.add_argument("--confidence", type=float, default=0.95)
    sub.add_argument("--resamples", type=int, default=2000)
    sub.add_argument("--seed", type=int, default=0)
    sub.set_defaults(handler=_assess)
