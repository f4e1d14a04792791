"""SNOMED CT codes of the PhysioNet/Challenge `#Dx` header line → the 7 BenchMD ECG classes (multi-hot), and the
finer labels of the out-of-distribution site (bundle branch block-like, AV block, brady, tachy).

The code lists follow the Challenge 2020/2021 scored and unscored diagnoses; BenchMD groups them into normal,
conduction disturbance (cd), myocardial infarction (mi), ST/T change (sttc), other, atrial fibrillation/flutter
(afib) and hypertrophy (hyp). A code outside the mapping is never dropped silently: :func:`labels_of` raises
:class:`UnknownCodeError` listing every unknown code (a user may map them with `extra`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import numpy as np

from stages.core.errors import DataValidationError

CLASSES: tuple[str, ...] = ("normal", "cd", "mi", "sttc", "other", "afib", "hyp")
"""The 7 BenchMD ECG classes, in label-vector order."""

OOD_CLASSES: tuple[str, ...] = ("lbbb", "rbbb", "avb", "brady", "tachy")
"""The out-of-distribution site's finer labels (RQ2), in label-vector order."""

BENCHMD: dict[str, str] = {
    # normal
    "426783006": "normal",  # sinus rhythm
    "164854000": "normal",  # normal ECG
    # conduction disturbance
    "164909002": "cd",  # left bundle branch block
    "733534002": "cd",  # complete left bundle branch block
    "59118001": "cd",  # right bundle branch block
    "713427006": "cd",  # complete right bundle branch block
    "713426002": "cd",  # incomplete right bundle branch block
    "6374002": "cd",  # bundle branch block
    "270492004": "cd",  # 1st degree AV block
    "195042002": "cd",  # 2nd degree AV block
    "54016002": "cd",  # Mobitz type I
    "28189009": "cd",  # Mobitz type II
    "27885002": "cd",  # complete heart block
    "445118002": "cd",  # left anterior fascicular block
    "445211001": "cd",  # left posterior fascicular block
    "698252002": "cd",  # nonspecific intraventricular conduction disorder
    "164947007": "cd",  # prolonged PR interval
    "74390002": "cd",  # Wolff-Parkinson-White
    # myocardial infarction
    "164865005": "mi",  # myocardial infarction
    "57054005": "mi",  # acute myocardial infarction
    "54329005": "mi",  # anterior myocardial infarction
    "413844008": "mi",  # chronic myocardial ischemia/old MI
    "164917005": "mi",  # Q wave abnormal (pathological Q)
    # ST/T change
    "164934002": "sttc",  # T wave abnormal
    "59931005": "sttc",  # T wave inversion
    "428750005": "sttc",  # nonspecific ST-T abnormality
    "429622005": "sttc",  # ST depression
    "164931005": "sttc",  # ST elevation
    "55930002": "sttc",  # ST changes
    "164861001": "sttc",  # myocardial ischemia
    "413444003": "sttc",  # acute myocardial ischemia
    "426434006": "sttc",  # anterior ischemia
    "111975006": "sttc",  # prolonged QT
    # other
    "426177001": "other",  # sinus bradycardia
    "427084000": "other",  # sinus tachycardia
    "427393009": "other",  # sinus arrhythmia
    "426627000": "other",  # bradycardia
    "284470004": "other",  # premature atrial contraction
    "427172004": "other",  # premature ventricular contractions
    "17338001": "other",  # ventricular premature beats
    "63593006": "other",  # supraventricular premature beats
    "39732003": "other",  # left axis deviation
    "47665007": "other",  # right axis deviation
    "251146004": "other",  # low QRS voltages
    "10370003": "other",  # pacing rhythm
    "713422000": "other",  # atrial tachycardia
    # atrial fibrillation / flutter
    "164889003": "afib",  # atrial fibrillation
    "164890007": "afib",  # atrial flutter
    # hypertrophy
    "164873001": "hyp",  # left ventricular hypertrophy
    "89792004": "hyp",  # right ventricular hypertrophy
    "67741000119109": "hyp",  # left atrial enlargement
    "446358003": "hyp",  # right atrial hypertrophy
    "446813000": "hyp",  # left atrial hypertrophy
}
"""SNOMED code → BenchMD class."""

OOD_FINE: dict[str, str] = {
    "164909002": "lbbb",
    "733534002": "lbbb",
    "59118001": "rbbb",
    "713427006": "rbbb",
    "270492004": "avb",
    "195042002": "avb",
    "426177001": "brady",
    "426627000": "brady",
    "427084000": "tachy",
}
"""SNOMED code → the OOD site's finer label."""

CODE_OF: dict[str, str] = {
    "normal": "426783006",
    "cd": "59118001",
    "mi": "164865005",
    "sttc": "164934002",
    "other": "427393009",
    "afib": "164889003",
    "hyp": "164873001",
    "lbbb": "164909002",
    "rbbb": "59118001",
    "avb": "270492004",
    "brady": "426177001",
    "tachy": "427084000",
}
"""The code the simulator writes for each label (one per label)."""


class UnknownCodeError(DataValidationError):
    """`#Dx` codes that the mapping does not know (listed in the message, never dropped)."""

    def __init__(self, unknown: Mapping[str, Sequence[str]]) -> None:
        self.unknown = {code: list(records) for code, records in unknown.items()}
        listed = "; ".join(
            f"{code} (in {len(records)} record{'s' if len(records) != 1 else ''}, e.g. {records[0]})"
            for code, records in sorted(self.unknown.items())
        )
        super().__init__(
            f"unknown SNOMED code{'s' if len(self.unknown) > 1 else ''} in #Dx: {listed}; map them with "
            "--map CODE=CLASS or --ignore-codes"
        )


def parse_dx(text: str) -> list[str]:
    """The codes of a `#Dx:` value (comma separated, spaces ignored)."""
    return [code.strip() for code in text.split(",") if code.strip()]


def labels_of(
    codes_per_record: Mapping[str, Iterable[str]],
    classes: Sequence[str] = CLASSES,
    mapping: Mapping[str, str] = BENCHMD,
    ignore: Iterable[str] = (),
) -> np.ndarray:
    """Multi-hot labels [records × classes] (float32) of each record's codes.

    Codes mapped to a label outside `classes` (an OOD label) are refused like unknown ones; codes in `ignore`
    are skipped on purpose. Raises :class:`UnknownCodeError` listing every unknown code with its records.
    """
    index = {name: i for i, name in enumerate(classes)}
    bad = [f"{code}→{label}" for code, label in mapping.items() if label not in index]
    if bad:
        raise DataValidationError(f"the code mapping names labels outside {list(classes)}: {', '.join(bad)}")
    skip = set(ignore)
    labels = np.zeros((len(codes_per_record), len(classes)), dtype=np.float32)
    unknown: dict[str, list[str]] = {}
    for row, (record, codes) in enumerate(codes_per_record.items()):
        for code in codes:
            if code in skip:
                continue
            if code not in mapping:
                unknown.setdefault(code, []).append(record)
                continue
            labels[row, index[mapping[code]]] = 1.0
    if unknown:
        raise UnknownCodeError(unknown)
    return labels
