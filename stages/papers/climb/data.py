"""What every CLIMB step shares: the record folders' layout, the index of records, and loading a site's records
back through the real loader (`stages.datasets.ecg.records`: header parsing, SNOMED `#Dx` → labels, resampling)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import polars as pl

from stages.core.errors import DataValidationError
from stages.datasets.ecg.records import LEADS_8, LoadOptions, read_record
from stages.datasets.ecg.snomed import BENCHMD, CLASSES, OOD_CLASSES, OOD_FINE, labels_of
from stages.methods.multitask.encoder import normalise
from stages.methods.multitask.train import SiteData
from stages.papers.climb.params import ClimbParams

OOD_SITE = "ptbxl_fine"
FUSION_SITE = "fusion"


def load_options(params: ClimbParams) -> LoadOptions:
    return LoadOptions(
        fs=params.data.fs, seconds=params.data.seconds, leads=LEADS_8, min_seconds=params.data.seconds / 2
    )


@dataclass
class Loaded:
    """Records of one site and split read back from their files: normalised signals, labels, names."""

    x: np.ndarray
    y: np.ndarray
    names: list[str]

    def site_data(self) -> SiteData:
        return SiteData(self.x, self.y)


def load(records: Path, index: pl.DataFrame, site: str, split: str, params: ClimbParams) -> Loaded:
    """Read the records of `site` / `split` named in the index, in index order; labels from their `#Dx`."""
    rows = index.filter((pl.col("site") == site) & (pl.col("split") == split)).sort("record")
    if rows.height == 0:
        raise DataValidationError(f"climb index: no records for site {site!r}, split {split!r}")
    options = load_options(params)
    signals, codes = [], {}
    for record in rows["record"]:
        signal, header = read_record(records / site / f"{record}.hea", options)
        signals.append(signal)
        codes[record] = header.dx
    classes, mapping = (OOD_CLASSES, OOD_FINE) if site == OOD_SITE else (CLASSES, BENCHMD)
    y = labels_of(codes, classes, mapping)
    return Loaded(normalise(np.stack(signals)), y, list(rows["record"]))
