"""`icml25 rl-train`: PPO with a GBRL (or MLP) actor-critic on any gymnasium environment id.

Your own environment: register it with gymnasium in a module of yours (`gymnasium.register(id=..., entry_point=
...)`) and pass `--import your.module`; its observations must be a flat vector of numbers (`--encoder
continuous`) or of strings (`--encoder categorical`), its actions discrete.
"""

from __future__ import annotations

import argparse
import importlib
import json
from pathlib import Path


def _train(args: argparse.Namespace) -> None:
    from stages.datasets.environments import EnvSpec, WrapperSpec
    from stages.methods.rl.config import GBRLConfig, MLPConfig, PPOConfig
    from stages.methods.rl.run import train_policy

    for module in args.import_module or []:
        importlib.import_module(module)
    spec = EnvSpec(env_id=args.env_id, wrappers=[WrapperSpec(name=name) for name in args.wrapper or []])
    ppo = PPOConfig(
        n_envs=args.n_envs,
        n_steps=args.n_steps,
        batch_size=args.batch_size,
        epochs=args.epochs,
        gamma=args.gamma,
        gae_lambda=args.gae_lambda,
        ent_coef=args.ent_coef,
    )
    if args.model == "mlp":
        config = MLPConfig(lr=args.lr)
    else:
        config = GBRLConfig(
            shared_tree=args.model == "gbrl", policy_lr=args.policy_lr, value_lr=args.value_lr
        )
    model, result = train_policy(spec, config, args.encoder, ppo, args.steps, args.seed)
    output = Path(args.output)
    output.parent.mkdir(parents=True, exist_ok=True)
    model.save(output)
    summary = {
        "env_id": args.env_id,
        "model": args.model,
        "env_steps": result.env_steps,
        "episodes": len(result.episodes),
        "score_last_100": result.score(),
        "size": model.size(),
        "saved": str(output),
    }
    print(json.dumps(summary, indent=2))


def add_commands(commands: argparse._SubParsersAction) -> None:
    """Add `rl-train` to the `icml25` parser."""
    sub = commands.add_parser(
        "rl-train", help="train a PPO actor-critic (GBRL trees or an MLP) on a gymnasium env"
    )
    sub.add_argument(
        "--env-id", required=True, help="a gymnasium id, e.g. CartPole-v1 or MiniGrid-DoorKey-5x5-v0"
    )
    sub.add_argument(
        "--wrapper", action="append", help="minigrid_categorical, minigrid_flat (repeatable, in order)"
    )
    sub.add_argument(
        "--import",
        dest="import_module",
        action="append",
        help="a module to import first (one that registers your own environment)",
    )
    sub.add_argument(
        "--model",
        choices=["gbrl", "gbrl-separate", "mlp"],
        default="gbrl",
        help="gbrl: one shared actor-critic tree per minibatch; gbrl-separate: policy and value trees",
    )
    sub.add_argument("--encoder", choices=["continuous", "categorical"], default="continuous")
    sub.add_argument("--steps", type=int, default=100_000, help="environment steps (whole rollouts)")
    sub.add_argument(
        "--output",
        required=True,
        help="model path (gbrl: a file prefix, gbrl's own format; mlp: a .safetensors file)",
    )
    sub.add_argument("--seed", type=int, default=0)
    sub.add_argument("--n-envs", type=int, default=8)
    sub.add_argument("--n-steps", type=int, default=128)
    sub.add_argument("--batch-size", type=int, default=64)
    sub.add_argument("--epochs", type=int, default=1)
    sub.add_argument("--gamma", type=float, default=0.98)
    sub.add_argument("--gae-lambda", type=float, default=0.8)
    sub.add_argument("--ent-coef", type=float, default=0.0)
    sub.add_argument(
        "--policy-lr", type=float, default=0.029, help="GBRL policy SGD rate (CartPole, Table 2)"
    )
    sub.add_argument("--value-lr", type=float, default=0.015, help="GBRL value SGD rate (CartPole, Table 2)")
    sub.add_argument("--lr", type=float, default=2.5e-4, help="MLP Adam rate")
    sub.set_defaults(handler=_train)
