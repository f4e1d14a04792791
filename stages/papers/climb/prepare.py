"""Step `climb-prepare`: simulate the four sites, the OOD site (finer labels) and the fusion cohort (ECG + EHR),
write every record in Challenge format (`.hea` + `.mat`), read every one back through the real loader and check
that its labels and samples survived, and write the index (site, split, labels) and the EHR table.

Records are drawn in spawned one-thread workers; each record's randomness comes from its own derived seed, so the
files are the same for any number of workers.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from stages.core.context import StepContext
from stages.core.io import write_json, write_parquet
from stages.core.schema import ColumnSpec, TableSchema
from stages.core.seeding import derive_seed
from stages.core.validate import ensure_valid
from stages.datasets.ecg.records import LEADS_8, read_folder, write_record
from stages.datasets.ecg.simulate import SiteShift, draw_labels, ehr_table, outcomes, simulate_record
from stages.datasets.ecg.snomed import BENCHMD, CLASSES, CODE_OF, OOD_CLASSES, OOD_FINE, labels_of
from stages.models.workers import map_runs
from stages.papers.climb.data import FUSION_SITE, OOD_SITE, load_options
from stages.papers.climb.params import SITES, ClimbParams

INDEX_SCHEMA = TableSchema(
    "climb-index",
    (
        ColumnSpec("record", "str", unique=True),
        ColumnSpec("site", "str", allowed=(*SITES, OOD_SITE, FUSION_SITE)),
        ColumnSpec("split", "str", allowed=("train", "validation", "test", "pool")),
        ColumnSpec("labels", "str"),
        ColumnSpec("n_labels", "int", min=1, max=3),
        ColumnSpec("fs", "float", min=1),
    ),
    description="every simulated record: its site, split, labels (as simulated) and stored rate",
)
EHR_SCHEMA = TableSchema(
    "climb-ehr",
    (
        ColumnSpec("record", "str", unique=True),
        ColumnSpec("split", "str", allowed=("train", "test")),
        ColumnSpec("age", "float", min=18, max=95),
        ColumnSpec("creatinine", "float", min=0),
        ColumnSpec("lactate", "float", min=0),
        ColumnSpec("sbp", "float", min=60, max=220),
        ColumnSpec("wbc", "float", min=0),
        ColumnSpec("sex", "float", allowed=(0.0, 1.0)),
        ColumnSpec("mortality", "float", allowed=(0.0, 1.0)),
        ColumnSpec("los", "float", min=0),
    ),
    description="the fusion cohort's EHR table (second modality) and outcomes",
)
EHR_FEATURES = ("age", "creatinine", "lactate", "sbp", "wbc", "sex")


def _simulate(
    labels: list[list[str]], shift: SiteShift, seconds: float, seeds: list[int]
) -> list[np.ndarray]:
    return [
        simulate_record(label, shift, seconds, np.random.default_rng(seed))
        for label, seed in zip(labels, seeds, strict=True)
    ]


def plan(params: ClimbParams) -> list[dict]:
    """Every record to simulate: site, split, name, labels, shift and seed (deterministic in the params)."""
    data = params.data
    rows = []
    for site, spec in data.sites.items():
        rng = np.random.default_rng(derive_seed(data.seed, "climb", "labels", site))
        shift = SiteShift(spec.fs, spec.gain, spec.noise, spec.wander, spec.hr_shift)
        n_validation = int(data.train_per_site * data.validation_share)
        splits = (
            ["train"] * (data.train_per_site - n_validation)
            + ["validation"] * n_validation
            + ["test"] * data.test_per_site
        )
        for i, (split, labels) in enumerate(
            zip(splits, draw_labels(spec.prior, len(splits), rng, data.second_label), strict=True)
        ):
            rows.append(
                {"site": site, "split": split, "record": f"{site}_{i:04d}", "labels": labels, "shift": shift}
            )
    ptbxl = data.sites["ptbxl"]
    ood_shift = SiteShift(ptbxl.fs, ptbxl.gain, ptbxl.noise, ptbxl.wander, ptbxl.hr_shift)
    rng = np.random.default_rng(derive_seed(data.seed, "climb", "labels", OOD_SITE))
    ood = [[name] for name in OOD_CLASSES for _ in range(data.ood_train_per_class)]
    ood += [[OOD_CLASSES[int(rng.integers(len(OOD_CLASSES)))]] for _ in range(data.ood_test)]
    clash = {"brady": "tachy", "tachy": "brady", "lbbb": "rbbb", "rbbb": "lbbb"}
    for labels in ood:
        if rng.random() < data.second_label:
            others = [n for n in OOD_CLASSES if n != labels[0] and n != clash.get(labels[0])]
            labels.append(others[int(rng.integers(len(others)))])
    for i, labels in enumerate(ood):
        split = "pool" if i < len(OOD_CLASSES) * data.ood_train_per_class else "test"
        rows.append(
            {
                "site": OOD_SITE,
                "split": split,
                "record": f"{OOD_SITE}_{i:04d}",
                "labels": labels,
                "shift": ood_shift,
            }
        )
    pooled = {name: float(np.mean([s.prior.get(name, 0.0) for s in data.sites.values()])) for name in CLASSES}
    rng = np.random.default_rng(derive_seed(data.seed, "climb", "labels", FUSION_SITE))
    n = data.fusion_train + data.fusion_test
    fusion_shift = SiteShift(250.0, 1.0, 0.03, 0.1, 0.0)
    for i, labels in enumerate(draw_labels(pooled, n, rng, data.second_label)):
        split = "train" if i < data.fusion_train else "test"
        rows.append(
            {
                "site": FUSION_SITE,
                "split": split,
                "record": f"{FUSION_SITE}_{i:04d}",
                "labels": labels,
                "shift": fusion_shift,
            }
        )
    for row in rows:
        row["seed"] = derive_seed(data.seed, "climb", "record", row["record"])
    return rows


def simulate_all(rows: list[dict], seconds: float, workers: int) -> list[np.ndarray]:
    """The signals of every planned record (in plan order), in `workers` processes."""
    chunks = [rows[start : start + 40] for start in range(0, len(rows), 40)]
    tasks = [
        ([r["labels"] for r in chunk], chunk[0]["shift"], seconds, [r["seed"] for r in chunk])
        for chunk in chunks
        if len({r["shift"] for r in chunk}) == 1
    ]
    if len(tasks) != len(chunks):  # a chunk spans two sites: split by shift
        tasks = []
        for chunk in chunks:
            for shift in dict.fromkeys(r["shift"] for r in chunk):
                part = [r for r in chunk if r["shift"] == shift]
                tasks.append(([r["labels"] for r in part], shift, seconds, [r["seed"] for r in part]))
    results = map_runs(_simulate, tasks, workers, desc="climb: simulating records")
    return [signal for chunk in results for signal in chunk]


def ehr_frame(rows: list[dict], seed: int) -> pl.DataFrame:
    """The fusion cohort's EHR features and outcomes (mortality additive, LOS by interaction)."""
    fusion = [r for r in rows if r["site"] == FUSION_SITE]
    labels = np.zeros((len(fusion), len(CLASSES)))
    for i, r in enumerate(fusion):
        for name in r["labels"]:
            labels[i, CLASSES.index(name)] = 1
    rng = np.random.default_rng(derive_seed(seed, "climb", "ehr"))
    ehr = ehr_table(labels @ np.ones(len(CLASSES)), rng)
    outcome = outcomes(labels, CLASSES, ehr["risk_ehr"], rng)
    return pl.DataFrame(
        {"record": [r["record"] for r in fusion], "split": [r["split"] for r in fusion]}
        | {name: ehr[name].astype(np.float64) for name in EHR_FEATURES}
        | {"mortality": outcome["mortality"].astype(np.float64), "los": outcome["los"].astype(np.float64)}
        | {"risk_ecg": outcome["risk_ecg"], "risk_ehr": ehr["risk_ehr"]}
    )


def run(ctx: StepContext) -> None:
    params: ClimbParams = ctx.params
    rows = plan(params)
    signals = simulate_all(rows, params.data.seconds, params.workers)
    ctx.log(f"simulated {len(rows)} records")
    folder = ctx.output("records")
    sites = list(dict.fromkeys(r["site"] for r in rows))
    for site in sites:
        (folder / site).mkdir(parents=True, exist_ok=True)
    for row, signal in zip(rows, signals, strict=True):
        write_record(
            folder / row["site"],
            row["record"],
            signal,
            row["shift"].fs,
            LEADS_8,
            [CODE_OF[name] for name in row["labels"]],
            {"Site": row["site"]},
        )
    # read everything back through the real loader: labels from #Dx must equal the simulated ones
    options = load_options(params)
    readback = {}
    for site in sites:
        loaded = read_folder(folder / site, options, site)
        classes, mapping = (OOD_CLASSES, OOD_FINE) if site == OOD_SITE else (CLASSES, BENCHMD)
        names = [name.split("/", 1)[1] for name in loaded.names]
        got = labels_of(
            dict(zip(names, (loaded.codes[n] for n in loaded.names), strict=True)), classes, mapping
        )
        want = np.zeros_like(got)
        by_name = {r["record"]: r for r in rows if r["site"] == site}
        for i, name in enumerate(names):
            for label in by_name[name]["labels"]:
                want[i, classes.index(label)] = 1
        if not np.array_equal(got, want):
            raise AssertionError(f"climb-prepare: labels of site {site} changed through the loader")
        readback[site] = {
            "records": len(names),
            "stored_rates": sorted(set(loaded.rates[site])),
            "shape": list(loaded.signals.shape[1:]),
        }
    index = pl.DataFrame(
        {
            "record": [r["record"] for r in rows],
            "site": [r["site"] for r in rows],
            "split": [r["split"] for r in rows],
            "labels": [",".join(r["labels"]) for r in rows],
            "n_labels": [len(r["labels"]) for r in rows],
            "fs": [float(r["shift"].fs) for r in rows],
        }
    )
    ensure_valid(index, INDEX_SCHEMA, "climb index")
    ehr = ehr_frame(rows, params.data.seed)
    ensure_valid(ehr.select(EHR_SCHEMA.column_names), EHR_SCHEMA, "climb ehr")
    write_parquet(index, ctx.output("index"))
    write_parquet(ehr, ctx.output("ehr"))
    counts = {}
    for site in sites:
        sub = [r for r in rows if r["site"] == site]
        names = OOD_CLASSES if site == OOD_SITE else CLASSES
        counts[site] = {
            split: {name: sum(name in r["labels"] for r in sub if r["split"] == split) for name in names}
            for split in dict.fromkeys(r["split"] for r in sub)
        }
    write_json(
        {
            "records": len(rows),
            "read_back": readback,
            "label_counts": counts,
            "mortality_rate": round(float(ehr["mortality"].mean()), 4),
            "los_median_days": round(float(ehr["los"].median()), 3),
        },
        ctx.output("summary"),
    )
    ctx.log(f"wrote and read back {len(rows)} records in {len(sites)} site folders")
