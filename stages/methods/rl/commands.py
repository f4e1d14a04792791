"""`icml25 rl-train`: PPO with a GBRL (or MLP) actor-critic on any gymnasium environment id.

Your own environment: register it with gymnasium in a module of yours (`gymnasium.register(id=..., entry_point=
...)`) and pass `--import your.module`; its observations must be a flat vector of numbers (`--encoder
continuous`) or of strings (`--encoder categorical`), its actions discrete (a gymnasium `Discrete` space: a
continuous `Box` action space, e.g. Pendulum-v1, is refused before training). Every option error is one line
naming the option (exit code 2).
"""

from __future__ import annotations

import argparse
import importlib
import json
from pathlib import Path

from stages.core.errors import PipelineError

MAX_SEED = 2**32 - 1  # gymnasium and numpy take seeds ≥ 0


def _option(field: str) -> str:
    """The command-line option of a config field (`n_envs` → `--n-envs`)."""
    return "--" + field.replace("_", "-")


def _clip(text: str) -> float | None:
    """A per-sample gradient clip option: a number > 0, or `none` for no clipping."""
    if text.strip().lower() in ("none", "null", "off"):
        return None
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number or 'none'") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"{text!r} must be > 0 (or 'none')")
    return value


GBRL_FIELDS = ("policy_lr", "value_lr", "policy_grad_clip", "value_grad_clip")


def task_settings(env_id: str, shared: bool, params_file: str | Path = "params.yaml") -> dict:
    """GBRL's learning rates and per-sample gradient clips for `env_id` from the `gbrl.tasks` entry of the
    params file whose env_id matches (the paper's Table 2 per environment); {} when none matches or the
    file is absent."""
    from stages.core.params import read_params_file

    path = Path(params_file)
    if not path.is_file():
        return {}
    try:
        tasks = (read_params_file(path).get("gbrl") or {}).get("tasks") or {}
    except Exception:  # an unreadable params file gives no per-env defaults; the options still apply
        return {}
    label = "gbrl_shared" if shared else "gbrl_separate"
    for task in tasks.values():
        if isinstance(task, dict) and task.get("env_id") == env_id:
            model = ((task.get("policies") or {}).get(label) or {}).get("model") or {}
            return {key: model[key] for key in GBRL_FIELDS if key in model}
    return {}


def _gbrl_settings(args: argparse.Namespace) -> tuple[dict, str]:
    """The GBRL fields: options given > the params file's entry for this env id > GBRLConfig's defaults."""
    found = task_settings(args.env_id, args.model == "gbrl", args.params_file)
    settings, sources = {}, set()
    for key in GBRL_FIELDS:
        given = getattr(args, key)
        if given is not _UNSET:
            settings[key] = given
            sources.add("options")
        elif key in found:
            settings[key] = found[key]
            sources.add(f"{args.params_file} (gbrl.tasks, env_id {args.env_id})")
    if len(settings) < len(GBRL_FIELDS):
        sources.add("defaults (CartPole's Table 2)")
    return settings, " + ".join(sorted(sources))


_UNSET = object()


def _configs(args: argparse.Namespace):
    """The PPO and model configs from the options; an invalid value is one line naming its option."""
    from pydantic import ValidationError

    from stages.methods.rl.config import GBRLConfig, MLPConfig, PPOConfig

    args.gbrl_source = ""
    try:
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
            settings, args.gbrl_source = _gbrl_settings(args)
            config = GBRLConfig(shared_tree=args.model == "gbrl", **settings)
    except ValidationError as error:
        first = error.errors()[0]
        field = str(first["loc"][0]) if first["loc"] else "option"
        raise PipelineError(f"{_option(field)}: {first['input']!r}: {first['msg']}") from None
    return ppo, config


def _checked_env(args: argparse.Namespace):
    """The environment spec, after importing `--import` modules and checking the env id, wrappers and that
    the actions are discrete (gymnasium `Discrete`)."""
    from stages.datasets.environments import EnvSpec, EnvSpecError, WrapperSpec, make_env

    for module in args.import_module or []:
        try:
            importlib.import_module(module)
        except Exception as error:  # the user's module: any failure to import it is theirs to fix
            raise PipelineError(
                f"--import {module}: cannot import it ({type(error).__name__}: {error})"
            ) from None
    spec = EnvSpec(env_id=args.env_id, wrappers=[WrapperSpec(name=name) for name in args.wrapper or []])
    try:
        env = make_env(spec)
    except EnvSpecError as error:
        message = str(error).replace("env.env_id", "--env-id").replace("env.wrappers", "--wrapper")
        raise PipelineError(message) from None
    except Exception as error:  # gymnasium.make of a registered id that cannot be built here
        raise PipelineError(
            f"--env-id {args.env_id}: cannot be built ({type(error).__name__}: {error})".splitlines()[0]
        ) from None
    try:
        _require_discrete(args.env_id, env.action_space)
    finally:
        env.close()
    return spec


def _require_discrete(env_id: str, space) -> None:
    """Refuse an action space other than `Discrete` (GBRL's actor here outputs a categorical distribution)."""
    from gymnasium import spaces

    if isinstance(space, spaces.Discrete):
        return
    kind = "continuous (Box)" if isinstance(space, spaces.Box) else type(space).__name__
    raise PipelineError(
        f"--env-id {env_id}: its action space {space} is {kind}; rl-train trains discrete-action policies "
        "only (a gymnasium Discrete action space)"
    )


def _train(args: argparse.Namespace) -> None:
    from stages.methods.rl.run import train_policy

    if args.steps < 1:
        raise PipelineError(f"--steps: {args.steps}; the number of environment steps must be ≥ 1")
    if not 0 <= args.seed <= MAX_SEED:
        raise PipelineError(f"--seed: {args.seed}; must be an integer in 0 … {MAX_SEED}")
    ppo, config = _configs(args)
    spec = _checked_env(args)
    output = Path(args.output)
    if output.is_dir():
        raise PipelineError(f"--output {output}: is a folder; give a file path (prefix for gbrl)")
    model, result = train_policy(spec, config, args.encoder, ppo, args.steps, args.seed)
    try:
        output.parent.mkdir(parents=True, exist_ok=True)
        model.save(output)
    except OSError as error:
        raise PipelineError(f"--output {output}: cannot write the model ({error})") from None
    summary = {
        "env_id": args.env_id,
        "model": args.model,
        "env_steps": result.env_steps,
        "episodes": len(result.episodes),
        "score_last_100": result.score(),
        "size": model.size(),
        "saved": str(output),
    }
    if args.model != "mlp":
        summary["gbrl_settings"] = {key: getattr(config, key) for key in GBRL_FIELDS}
        summary["gbrl_settings"]["from"] = args.gbrl_source
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
    sub.add_argument(
        "--steps", type=int, default=100_000, help="environment steps, ≥ 1 (rounded up to whole rollouts)"
    )
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
    per_env = "default: the params file's gbrl.tasks entry with this env id, else CartPole's Table 2 value"
    sub.add_argument("--policy-lr", type=float, default=_UNSET, help=f"GBRL policy SGD rate ({per_env})")
    sub.add_argument("--value-lr", type=float, default=_UNSET, help=f"GBRL value SGD rate ({per_env})")
    sub.add_argument(
        "--policy-grad-clip",
        type=_clip,
        default=_UNSET,
        help=f"GBRL per-sample policy gradient norm clip, a number or 'none' ({per_env}: 150; MiniGrid: none)",
    )
    sub.add_argument(
        "--value-grad-clip",
        type=_clip,
        default=_UNSET,
        help=f"GBRL per-sample value gradient clip, a number or 'none' ({per_env}: 10; MiniGrid: none)",
    )
    sub.add_argument(
        "--params-file",
        default="params.yaml",
        help="where the per-environment GBRL defaults are read (gbrl.tasks); absent: CartPole's",
    )
    sub.add_argument("--lr", type=float, default=2.5e-4, help="MLP Adam rate")
    sub.set_defaults(handler=_train)
