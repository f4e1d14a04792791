"""`icml25 deconvolve`: train a diffusion model from your noisy images and a small clean set (SFBD)."""

from __future__ import annotations

import argparse
import json


def _deconvolve(args: argparse.Namespace) -> None:
    from stages.methods.diffusion.own_data import DeconvolveOptions, deconvolve_files

    options = DeconvolveOptions(
        denoiser=args.denoiser,
        width=args.width,
        depth=args.depth,
        pretrain_steps=args.pretrain_steps,
        iterations=args.iterations,
        round_steps=args.round_steps,
        batch=args.batch,
        lr=args.lr,
        samples=args.samples,
        seed=args.seed,
    )
    report = deconvolve_files(args.noisy, args.clean, args.sigma, args.output, options, args.column)
    print(json.dumps({"output": args.output, "rounds": report["rounds"]}, indent=2))


def add_commands(commands: argparse._SubParsersAction) -> None:
    """Add `deconvolve` to the `icml25` parser."""
    sub = commands.add_parser(
        "deconvolve", help="SFBD: a diffusion model from noisy images (y = x + σε) and a small clean set"
    )
    sub.add_argument("--noisy", required=True, help="noisy images: .npy (N, D) or (N, H, W), or Parquet")
    sub.add_argument("--clean", required=True, help="clean images in [−1, 1], same shape: .npy or Parquet")
    sub.add_argument("--sigma", required=True, type=float, help="the noise level σ of the noisy images (> 0)")
    sub.add_argument("--output", required=True, help="folder for the denoiser, samples, report and figures")
    sub.add_argument(
        "--column", help="Parquet column holding the fixed-size arrays (default: the only column)"
    )
    sub.add_argument(
        "--denoiser", default="mlp", choices=("mlp", "unet"), help="unet: 2-D images, even sides"
    )
    sub.add_argument("--width", type=int, default=128)
    sub.add_argument("--depth", type=int, default=3, help="MLP hidden layers")
    sub.add_argument("--pretrain-steps", type=int, default=2000, help="φ0's EDM steps on the clean set")
    sub.add_argument("--iterations", type=int, default=4, help="K SFBD rounds")
    sub.add_argument("--round-steps", type=int, default=1000, help="fine-tuning steps per round")
    sub.add_argument("--batch", type=int, default=256)
    sub.add_argument("--lr", type=float, default=1e-3)
    sub.add_argument("--samples", type=int, default=256, help="samples drawn after every round")
    sub.add_argument("--seed", type=int, default=0)
    sub.set_defaults(handler=_deconvolve)
