"""VI-Net benchmarks (`icml25 bench vanishing_ideals`), one BLAS/torch thread, interleaved repeats in a seeded
random order, medians:

- throughput: the full network against the first seed's VI-Net at every cut (batch 256 of test images; needs
  `vanishing_ideals-fit`'s outputs): images per second and the speed-up per cut, and which cuts are faster;
- OAVI vs ABM fit time at equal ψ on the same points (sklearn digits, PCA to 12, tanh, one class), with the
  order-ideal sizes, generator counts and non-zero coefficients;
- our ABM (incremental Gram matrix, smallest eigenpair) against a plain NumPy ABM that recomputes the SVD of the
  whole evaluation matrix [A u] for every border term (CGAVI's rule for ABM, written here): same order ideal and
  leading terms, max |difference| of the generators' values on the points, time ratio.

Writes reports/benchmarks/vanishing_ideals.json.
"""

from __future__ import annotations

import statistics
from pathlib import Path

import numpy as np
import torch

from stages.core.io import write_json
from stages.core.timing import interleaved_seconds
from stages.methods.ideals.avi import AVIOptions, IdealFit, fit_ideal
from stages.methods.ideals.layer import generator_values
from stages.methods.ideals.terms import border
from stages.methods.ideals.vinet import PCATanh

RESULTS_DIR = Path("reports/benchmarks")
DATA_DIR = Path("data/vanishing_ideals")


def digits_points(label: int = 0, k: int = 12) -> np.ndarray:
    """sklearn digits → PCA to k (fitted on all digits) → tanh; the rows of one class."""
    from sklearn.datasets import load_digits

    digits = load_digits()
    pca = PCATanh.fit(digits.data.astype(np.float64), k)
    with torch.no_grad():
        z = pca(torch.from_numpy(digits.data.astype(np.float32))).numpy().astype(np.float64)
    return z[digits.target == label]


def plain_abm(points: np.ndarray, psi: float, max_degree: int) -> IdealFit:
    """ABM with a full SVD of the evaluation matrix per border term (no incremental Gram): the reference."""
    from stages.methods.ideals.avi import Generator

    m, n = points.shape
    constant = tuple([0] * n)
    order, columns = [constant], [np.ones(m)]
    values = {constant: np.ones(m)}
    result = IdealFit(order_ideal=order, n_points=m)
    for degree in range(1, max_degree + 1):
        added = False
        for term in border(order, degree, n):
            variable = max(v for v, a in enumerate(term) if a > 0)
            parent = list(term)
            parent[variable] -= 1
            column = values[tuple(parent)] * points[:, variable]
            matrix = np.column_stack([*columns, column])
            _, singular, vt = np.linalg.svd(matrix, full_matrices=False)
            vector = vt[-1] if vt[-1][-1] >= 0 else -vt[-1]
            loss = float(singular[-1] ** 2 / m)
            if loss <= psi:
                result.generators.append(Generator([*order, term], vector, loss))
                continue
            order.append(term)
            values[term] = column
            columns.append(column)
            added = True
        if not added:
            break
    return result


def _medians(seconds: dict[str, list[float]]) -> dict[str, float]:
    return {key: statistics.median(value) for key, value in seconds.items()}


def abm_vs_plain(points: np.ndarray, psi: float, repeats: int) -> dict:
    ours, reference = fit_ideal(points, AVIOptions(psi=psi)), plain_abm(points, psi, 3)
    same_terms = [g.leading_term for g in ours.generators] == [g.leading_term for g in reference.generators]
    difference = max(
        (
            float(np.max(np.abs(generator_values(a, points) - generator_values(b, points))))
            for a, b in zip(ours.generators, reference.generators, strict=False)
        ),
        default=0.0,
    )
    med = _medians(
        interleaved_seconds(
            {
                "ours": lambda: fit_ideal(points, AVIOptions(psi=psi)),
                "plain_svd": lambda: plain_abm(points, psi, 3),
            },
            repeats=repeats,
        )
    )
    return {
        "psi": psi,
        "points": len(points),
        "same_order_ideal": ours.order_ideal == reference.order_ideal,
        "same_leading_terms": same_terms,
        "generators": len(ours.generators),
        "max_abs_difference_of_generator_values": difference,
        "same_to_1e-6": bool(same_terms and difference <= 1e-6),
        "median_seconds": {key: round(value, 5) for key, value in med.items()},
        "time_ratio_ours_over_plain": round(med["ours"] / med["plain_svd"], 3),
    }


def oavi_vs_abm(points: np.ndarray, psi: float, repeats: int) -> dict:
    fits = {oracle: fit_ideal(points, AVIOptions(psi=psi, oracle=oracle)) for oracle in ("abm", "oavi")}
    med = _medians(
        interleaved_seconds(
            {oracle: (lambda o=oracle: fit_ideal(points, AVIOptions(psi=psi, oracle=o))) for oracle in fits},
            repeats=repeats,
        )
    )
    return {
        "psi": psi,
        "points": len(points),
        "order_ideal_terms": {oracle: len(fit.order_ideal) for oracle, fit in fits.items()},
        "generators": {oracle: len(fit.generators) for oracle, fit in fits.items()},
        "mean_nonzero_coefficients": {
            oracle: float(np.mean([g.nonzero() for g in fit.generators])) if fit.generators else 0.0
            for oracle, fit in fits.items()
        },
        "median_seconds": {key: round(value, 5) for key, value in med.items()},
        "time_ratio_oavi_over_abm": round(med["oavi"] / med["abm"], 3),
    }


def throughput(repeats: int) -> dict:
    """Full net vs VI-Net per cut from the pipeline's outputs (params.yaml's sizes)."""
    import yaml
    from safetensors.numpy import load_file

    from stages.methods.ideals.resnet import TruncatedResNet
    from stages.methods.ideals.vinet import VINet, head_from_tensors, pca_from_tensors
    from stages.papers.vanishing_ideals.data import load_net, load_prepared
    from stages.papers.vanishing_ideals.params import VanishingIdealsParams

    models_path = DATA_DIR / "models.safetensors"
    if not models_path.is_file():
        return {"skipped": f"{models_path} not found: run `dvc repro vanishing_ideals-fit` first"}
    params = VanishingIdealsParams.model_validate(
        yaml.safe_load(Path("params.yaml").read_text())["vanishing_ideals"]
    )
    net = load_net(DATA_DIR / "base.safetensors", params)
    images = load_prepared(DATA_DIR / "datasets.safetensors", params).images["test"][:1024]
    tensors = load_file(str(models_path))
    models = {"full_net": net} | {
        f"vinet@{cut}": VINet(
            TruncatedResNet(net, cut),
            pca_from_tensors(tensors, f"{cut}/"),
            head_from_tensors(tensors, f"{cut}/"),
        ).eval()
        for cut in params.grid.fit.cuts
    }

    def call(model):
        def forward() -> None:
            with torch.no_grad():
                for start in range(0, len(images), 256):
                    model(images[start : start + 256])

        return forward

    med = _medians(
        interleaved_seconds({name: call(model) for name, model in models.items()}, repeats=repeats)
    )
    speedup = {
        name.split("@")[1]: round(med["full_net"] / value, 3) for name, value in med.items() if "@" in name
    }
    return {
        "images": len(images),
        "batch": 256,
        "images_per_second": {name: round(len(images) / value, 1) for name, value in med.items()},
        "speedup_over_full_net": speedup,
        "faster_cuts": [cut for cut, value in speedup.items() if value > 1],
    }


def run_benchmarks(repeats: int = 7) -> dict:
    """Throughput per cut, OAVI vs ABM, ours vs plain-SVD ABM (one thread, medians of `repeats`)."""
    from threadpoolctl import threadpool_limits

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    points = digits_points()
    try:
        with threadpool_limits(1):
            result = {
                "threads": 1,
                "repeats": repeats,
                "throughput": throughput(repeats),
                "oavi_vs_abm": [oavi_vs_abm(points, psi, repeats) for psi in (0.005, 0.02)],
                "abm_vs_plain_svd": [abm_vs_plain(points, psi, repeats) for psi in (0.002, 0.005, 0.02)],
            }
    finally:
        torch.set_num_threads(threads)
    write_json(result, RESULTS_DIR / "vanishing_ideals.json")
    return result
