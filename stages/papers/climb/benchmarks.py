"""CLIMB benchmarks (`icml25 bench climb`), one torch/BLAS thread, interleaved repeats in a seeded random order,
medians (`stages.core.timing`):

- simulation: 10-s records simulated per second (neurokit2 ecgsyn + pseudo-leads + site shifts), at 100 and 500 Hz;
- loader: records per second, our reader (header parse, checksums, mV, lead pick, resampling to 100 Hz) against
  `wfdb.rdrecord` reading the same Challenge-format folder (physical signals, no resampling);
- training: samples per second of a single-task step (one site's records) and of a multitask step (all four sites
  pooled), at the same batch size and encoder.

Writes reports/benchmarks/climb.json.
"""

from __future__ import annotations

import shutil
import statistics
import tempfile
from pathlib import Path

import numpy as np

from stages.core.io import write_json
from stages.core.timing import interleaved_seconds

RESULTS_DIR = Path("reports/benchmarks")


def _folder(n: int, fs: float) -> Path:
    from stages.datasets.ecg.records import LEADS_8, write_record
    from stages.datasets.ecg.simulate import SiteShift, simulate_record

    folder = Path(tempfile.mkdtemp(prefix="climb-bench-"))
    rng = np.random.default_rng(0)
    for i in range(n):
        signal = simulate_record(["normal"], SiteShift(fs=fs), 10.0, rng)
        write_record(folder, f"R{i:04d}", signal, fs, LEADS_8, ["426783006"])
    return folder


def simulation(repeats: int) -> dict:
    from stages.datasets.ecg.simulate import SiteShift, simulate_record

    records = 5
    calls = {
        f"{fs:g} Hz": (
            lambda fs=fs: [
                simulate_record(["afib"], SiteShift(fs=fs), 10.0, np.random.default_rng(i))
                for i in range(records)
            ]
        )
        for fs in (100.0, 500.0)
    }
    seconds = interleaved_seconds(calls, repeats)
    return {
        name: {"records_per_second": round(records / statistics.median(times), 2)}
        for name, times in seconds.items()
    }


def loader(repeats: int) -> dict:
    from stages.datasets.ecg.records import LoadOptions, header_files

    folder = _folder(40, 500.0)
    paths = header_files(folder)
    options = LoadOptions(fs=100.0)
    try:
        seconds = _time_loaders(paths, options, repeats)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    rates = {name: len(paths) / statistics.median(times) for name, times in seconds.items()}
    wfdb_rate = rates["wfdb.rdrecord (physical)"]
    return {
        "records": len(paths),
        "stored_rate_hz": 500,
        "records_per_second": {name: round(rate, 1) for name, rate in rates.items()},
        "ratio_to_wfdb": {name: round(rate / wfdb_rate, 3) for name, rate in rates.items()},
    }


def _time_loaders(paths: list[Path], options, repeats: int) -> dict[str, list[float]]:
    import wfdb

    from stages.datasets.ecg.records import LoadOptions, read_record

    return interleaved_seconds(
        {
            "ours (parse + checks + resample to 100 Hz)": lambda: [read_record(p, options) for p in paths],
            "ours at the stored rate (no resampling)": lambda: [
                read_record(p, LoadOptions(fs=500.0)) for p in paths
            ],
            "wfdb.rdrecord (physical)": lambda: [wfdb.rdrecord(str(p.with_suffix(""))) for p in paths],
        },
        repeats,
    )


def training(repeats: int) -> dict:
    from stages.methods.multitask.encoder import EncoderConfig
    from stages.methods.multitask.train import SiteData, TrainOptions, fit, new_classifier

    rng = np.random.default_rng(0)
    sites = {
        f"site{i}": SiteData(
            rng.standard_normal((120, 8, 1000)).astype(np.float32),
            (rng.random((120, 7)) < 0.2).astype(np.float32),
        )
        for i in range(4)
    }
    options = TrainOptions(steps=20, batch=32)
    config = EncoderConfig()

    def run(data: dict) -> None:
        fit(new_classifier(config, 7, 0), data, None, (), options, 0)

    seconds = interleaved_seconds(
        {"single-task": lambda: run({"site0": sites["site0"]}), "multitask": lambda: run(sites)}, repeats
    )
    rates = {
        name: options.steps * options.batch / statistics.median(times) for name, times in seconds.items()
    }
    return {
        "samples_per_second": {name: round(rate, 1) for name, rate in rates.items()},
        "multitask_over_single": round(rates["multitask"] / rates["single-task"], 3),
        "note": "same batch and encoder: per-sample cost should match; multitask needs more steps to cover more data",
    }


def run_benchmarks(repeats: int = 5) -> dict:
    """Simulation, loader and training throughput (one thread, medians of `repeats`)."""
    import torch
    from threadpoolctl import threadpool_limits

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        with threadpool_limits(1):
            result = {
                "threads": 1,
                "repeats": repeats,
                "simulation": simulation(repeats),
                "loader": loader(repeats),
                "training": training(repeats),
            }
    finally:
        torch.set_num_threads(threads)
    write_json(result, RESULTS_DIR / "climb.json")
    return result
