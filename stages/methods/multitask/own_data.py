"""`icml25 ecg-benchmark`: your folder of PhysioNet / Challenge ECG records, one subfolder per site → single-task
vs multitask macro AUROC per site, in a report.

Every record goes through the real loader (`stages.datasets.ecg.records`): headers, sampling rates (resampled to
`--rate`), lead names and counts, lengths, checksums and `#Dx` codes are checked and every problem is named with
its record; an unknown SNOMED code is listed with the records that carry it (map it with `--map CODE=CLASS` or
skip it with `--ignore-codes`), never dropped silently. Nothing is written unless the whole run succeeds.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from stages.core.errors import DataValidationError
from stages.core.io import OutputTransaction, write_json, write_text
from stages.core.metrics import new_figure, save_figure
from stages.datasets.ecg.records import LEADS_8, LoadOptions, read_folder
from stages.datasets.ecg.snomed import BENCHMD, CLASSES, labels_of
from stages.methods.multitask.encoder import EncoderConfig, normalise
from stages.methods.multitask.metrics import per_class_auroc
from stages.methods.multitask.train import SiteData, TrainOptions, predict, train_multitask, train_single_task


@dataclass(frozen=True)
class BenchmarkOptions:
    """Rate, length and leads of the run; training recipe; splits; seeds; extra code mappings."""

    rate: float = 100.0
    seconds: float = 10.0
    leads: tuple[str, ...] = LEADS_8
    steps: int = 300
    batch: int = 32
    lr: float = 1e-3
    test_fraction: float = 0.3
    validation_fraction: float = 0.15
    seeds: tuple[int, ...] = (0,)
    mapping: dict[str, str] = field(default_factory=dict)
    ignore: tuple[str, ...] = ()


def check_options(options: BenchmarkOptions) -> None:
    if not (np.isfinite(options.rate) and options.rate > 0):
        raise DataValidationError(f"--rate must be a positive number, got {options.rate}")
    if not (np.isfinite(options.seconds) and options.seconds > 0):
        raise DataValidationError(f"--seconds must be a positive number, got {options.seconds}")
    if options.steps < 1 or options.batch < 1:
        raise DataValidationError(f"--steps and --batch must be ≥ 1, got {options.steps}, {options.batch}")
    if not (np.isfinite(options.lr) and options.lr > 0):
        raise DataValidationError(f"--lr must be a finite number > 0, got {options.lr}")
    for name in ("test_fraction", "validation_fraction"):
        value = getattr(options, name)
        if not 0 < value < 1:
            raise DataValidationError(
                f"--{name.replace('_', '-')} must lie strictly between 0 and 1, got {value}"
            )
    if options.test_fraction + options.validation_fraction >= 1:
        raise DataValidationError("--test-fraction + --validation-fraction must be < 1")
    bad = {code: label for code, label in options.mapping.items() if label not in CLASSES}
    if bad:
        raise DataValidationError(f"--map: unknown classes {bad}; classes: {', '.join(CLASSES)}")
    if not options.leads:
        raise DataValidationError("--leads: name at least one lead")


def parse_mapping(items: list[str] | None) -> dict[str, str]:
    """`CODE=CLASS` items → a dict (a malformed item is named)."""
    out = {}
    for item in items or []:
        code, sep, label = item.partition("=")
        if not sep or not code.strip() or not label.strip():
            raise DataValidationError(f"--map: {item!r} is not CODE=CLASS")
        out[code.strip()] = label.strip()
    return out


def site_folders(root: str | Path) -> list[Path]:
    """The subfolders of `root` holding `.hea` headers (the sites); at least two are needed."""
    root = Path(root)
    if not root.is_dir():
        raise DataValidationError(f"{root}: not a folder (expected one subfolder of records per site)")
    sites = sorted(p for p in root.iterdir() if p.is_dir() and any(p.glob("*.hea")))
    if len(sites) < 2:
        raise DataValidationError(
            f"{root}: {len(sites)} site subfolder(s) with .hea records; multitask vs single-task needs ≥ 2"
        )
    return sites


def _split(n: int, options: BenchmarkOptions, rng: np.random.Generator) -> dict[str, np.ndarray]:
    order = rng.permutation(n)
    n_test = max(1, round(n * options.test_fraction))
    n_val = max(1, round(n * options.validation_fraction))
    if n - n_test - n_val < 2:
        raise DataValidationError(f"{n} records are too few to split into train, validation and test")
    return {
        "test": order[:n_test],
        "validation": order[n_test : n_test + n_val],
        "train": order[n_test + n_val :],
    }


def benchmark_folder(root: str | Path, output: str | Path, options: BenchmarkOptions) -> dict:
    """Read and check every site's records, train single-task and multitask models per seed, write
    `report.json`, `report.md` and `site_auroc.png` into `output` (together, at the end)."""
    import torch

    check_options(options)
    load = LoadOptions(
        fs=options.rate, seconds=options.seconds, leads=options.leads, min_seconds=options.seconds / 2
    )
    mapping = BENCHMD | options.mapping
    data, counts, errors = {}, {}, []
    for folder in site_folders(root):
        try:
            loaded = read_folder(folder, load, folder.name)
            y = labels_of(loaded.codes, CLASSES, mapping, options.ignore)
        except DataValidationError as error:
            errors.append(f"site {folder.name}: {error}")
            continue
        data[folder.name] = (normalise(loaded.signals), y)
        counts[folder.name] = {
            "records": len(y),
            "positives": dict(zip(CLASSES, y.sum(axis=0).astype(int).tolist(), strict=True)),
            "stored_rates": sorted(set(loaded.rates[folder.name])),
        }
    if errors:
        raise DataValidationError("; ".join(errors))
    splits = {}
    for i, (site, (x, y)) in enumerate(data.items()):
        index = _split(len(y), options, np.random.default_rng(1000 + i))
        splits[site] = {name: SiteData(x[idx], y[idx]) for name, idx in index.items()}
    train = {s: v["train"] for s, v in splits.items()}
    validation = {s: v["validation"] for s, v in splits.items()}
    test = {s: v["test"] for s, v in splits.items()}
    config = EncoderConfig(leads=len(options.leads))
    recipe = TrainOptions(options.steps, options.batch, options.lr, 1e-3, max(1, options.steps // 6))
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    results: dict[str, dict[str, list[float]]] = {site: {"single": [], "multitask": []} for site in data}
    per_class: dict[str, dict[str, dict[str, float]]] = {}
    try:
        for seed in options.seeds:
            multi, _ = train_multitask(train, validation, CLASSES, config, recipe, seed)
            for site in data:
                single, _ = train_single_task(site, train, validation, CLASSES, config, recipe, seed)
                for regime, model in (("single", single), ("multitask", multi)):
                    scores = per_class_auroc(predict(model, test[site].x), test[site].y, CLASSES)
                    results[site][regime].append(
                        float(np.mean(list(scores.values()))) if scores else float("nan")
                    )
                    per_class.setdefault(site, {})[f"{regime}/seed{seed}"] = {
                        k: round(v, 4) for k, v in scores.items()
                    }
    finally:
        torch.set_num_threads(threads)
    table = {
        site: {
            regime: round(float(np.nanmean(values)), 4) if np.isfinite(values).any() else None
            for regime, values in by_regime.items()
        }
        for site, by_regime in results.items()
    }
    report = {
        "input": str(root),
        "options": {
            "rate": options.rate,
            "seconds": options.seconds,
            "leads": list(options.leads),
            "steps": options.steps,
            "batch": options.batch,
            "lr": options.lr,
            "seeds": list(options.seeds),
        },
        "sites": counts,
        "macro_auroc": table,
        "per_seed": results,
        "per_class": per_class,
        "note": "macro AUROC over the classes with ≥ 1 positive and ≥ 1 negative in a site's test split",
    }
    output = Path(output).absolute()
    root_dir = output.parent
    while not root_dir.is_dir():
        root_dir = root_dir.parent
    with OutputTransaction(root_dir, owner="icml25 ecg-benchmark") as transaction:
        folder = transaction.path(output)
        folder.mkdir(parents=True, exist_ok=True)
        write_json(report, folder / "report.json")
        write_text(_markdown(report), folder / "report.md")
        _figure(table, folder / "site_auroc.png")
    return report


def _markdown(report: dict) -> str:
    lines = [
        "# ECG benchmark: single-task vs multitask",
        "",
        f"Input `{report['input']}`; {json.dumps(report['options'])}.",
        "",
        "| site | records | single-task AUROC | multitask AUROC |",
        "|---|---|---|---|",
    ]
    for site, row in report["macro_auroc"].items():
        lines.append(
            f"| {site} | {report['sites'][site]['records']} | {row['single']} | {row['multitask']} |"
        )
    lines += ["", report["note"], ""]
    return "\n".join(lines)


def _figure(table: dict, path: Path) -> None:
    figure, axis = new_figure(6, 3.5)
    sites = list(table)
    for offset, regime in ((-0.18, "single"), (0.18, "multitask")):
        axis.bar(np.arange(len(sites)) + offset, [table[s][regime] or 0 for s in sites], 0.36, label=regime)
    axis.set_xticks(range(len(sites)), sites)
    axis.set_ylabel("macro AUROC")
    axis.legend()
    save_figure(figure, path)
