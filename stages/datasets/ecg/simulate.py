"""Offline ECG records: neurokit2's ecgsyn (McSharry et al. 2003) with class-specific heart rate, RR irregularity
and P-Q-R-S-T morphology, projected to 8 pseudo-leads, with site-specific gain, noise, baseline wander and rate
shift; plus an EHR table whose risk and the ECG's labels drive mortality and length of stay.

The classes carry their defining feature: brady/tachy (and BenchMD's `other`) by rate, afib by RR irregularity
(large, fast-varying RR with no P wave and fibrillatory waves), the block classes by a wider QRS (cd, lbbb, rbbb)
or a longer PR (avb), mi by deep Q waves and inverted T, sttc by an inverted, wider T and deeper S, hyp by larger
R and S amplitudes. Labels are multi-hot: a record may carry a second abnormal class, whose changes are applied on
top of the first's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from stages.datasets.ecg.records import LEADS_8

BASE_TI = (-70.0, -15.0, 0.0, 15.0, 100.0)
BASE_AI = (1.2, -5.0, 30.0, -7.5, 0.75)
BASE_BI = (0.25, 0.1, 0.1, 0.1, 0.4)
P, Q, R, S, T = range(5)

PROJECTION = np.array(
    [  # rows: I, II, V1..V6; columns: the ecgsyn lead, its scaled derivative, a 40 ms-delayed copy
        [1.0, 0.0, 0.0],
        [1.2, 0.1, 0.0],
        [-0.6, 0.3, 0.2],
        [-0.2, 0.5, 0.1],
        [0.5, 0.4, 0.0],
        [1.3, 0.2, 0.0],
        [1.1, 0.0, 0.1],
        [0.9, -0.1, 0.2],
    ]
)
"""Fixed projections to the 8 pseudo-leads (one ecgsyn integration per record; the multilead mode costs 12)."""


@dataclass
class Beat:
    """ecgsyn's morphology and rhythm for one record: angles (degrees), amplitudes, widths, rate, RR std."""

    ti: list[float]
    ai: list[float]
    bi: list[float]
    hr: float
    hrstd: float = 1.5
    lfhfratio: float = 0.5
    fibrillation: float = 0.0


def _jitter(rng: np.random.Generator, low: float = 0.5, high: float = 1.2) -> float:
    return float(rng.uniform(low, high))


def _apply(label: str, beat: Beat, rng: np.random.Generator) -> None:
    """Change `beat` to carry `label`'s defining feature (magnitudes jittered per record)."""
    j = lambda: _jitter(rng)  # noqa: E731
    if label == "normal":
        return
    if label in ("cd", "lbbb", "rbbb"):  # wide QRS
        widen = {"cd": 2.2, "lbbb": 2.6, "rbbb": 1.9}[label] * _jitter(
            rng, 0.85, 1.15
        )  # the defining feature
        for wave in (Q, R, S):
            beat.bi[wave] *= widen
        beat.ti[Q] -= 10 * j()
        beat.ti[S] += 12 * j()
        if label == "lbbb":
            beat.ai[Q] = 0.0
            beat.ai[T] = -0.8 * j()
        if label == "rbbb":
            beat.bi[S] *= 1.6
            beat.ai[S] = -12.0 * j()
        if label == "cd":
            beat.ti[P] -= 15 * j()
    elif label == "avb":  # long PR
        beat.ti[P] -= 40 * _jitter(rng, 0.85, 1.15)
    elif label == "mi":  # deep Q, smaller R, inverted T
        beat.ai[Q] = -18.0 * j()
        beat.ai[R] *= 0.7
        beat.ai[T] = -0.5 * j()
    elif label == "sttc":  # inverted, wider T; deeper S
        beat.ai[T] = -0.6 * j()
        beat.bi[T] *= 1.4
        beat.ai[S] *= 1.6
    elif label == "hyp":  # large R and S
        beat.ai[R] *= 1.8 * j()
        beat.ai[S] *= 1.8 * j()
        beat.ai[T] *= 0.5
    elif label == "afib":  # irregular RR, no P, fibrillatory waves
        beat.hr = float(rng.uniform(85, 135))
        beat.hrstd = 0.22 * beat.hr
        beat.lfhfratio = 0.05
        beat.ai[P] = 0.0
        beat.fibrillation = 0.05 * j()
    elif label in ("brady",):
        beat.hr = float(rng.uniform(38, 52))
    elif label in ("tachy",):
        beat.hr = float(rng.uniform(108, 140))
    elif label == "other":  # sinus brady / tachy / arrhythmia
        kind = rng.integers(3)
        beat.hr = (
            float(rng.uniform(40, 52))
            if kind == 0
            else float(rng.uniform(105, 135))
            if kind == 1
            else beat.hr
        )
        if kind == 2:
            beat.hrstd = 7.0
    else:
        raise ValueError(f"no simulated morphology for label {label!r}")


@dataclass(frozen=True)
class SiteShift:
    """A site's acquisition: stored rate, gain, white noise (mV), baseline wander (mV), rate shift (bpm)."""

    fs: float = 100.0
    gain: float = 1.0
    noise: float = 0.02
    wander: float = 0.05
    hr_shift: float = 0.0


def beat_of(labels: Sequence[str], shift: SiteShift, rng: np.random.Generator) -> Beat:
    """The ecgsyn settings of a record with these labels at this site."""
    beat = Beat(list(BASE_TI), list(BASE_AI), list(BASE_BI), hr=float(rng.uniform(58, 92)))
    for label in labels:
        _apply(label, beat, rng)
    beat.hr = float(np.clip(beat.hr + shift.hr_shift, 30, 180))
    return beat


def ecgsyn(beat: Beat, fs: int, seconds: float, seed: int) -> np.ndarray:
    """One ecgsyn lead (mV, scaled to [−0.4, 1.2] as neurokit2 does) from neurokit2's own model functions (its RR
    process and the McSharry derivative), integrated like `nk.ecg_simulate(method="ecgsyn")`.

    The one change: neurokit2 0.3.0 builds the RR tachogram by a loop that never ends when the resampled RR series
    ends in 0 (its resampler's last sample, for some heart rates), so the trailing zeros are replaced by the last
    positive RR first (`nk.ecg_simulate` hung on ~1 in 500 records here).
    """
    import sys

    import neurokit2  # noqa: F401  (registers the module below)
    from neurokit2.misc import check_random_state
    from neurokit2.signal import signal_resample
    from scipy.integrate import solve_ivp

    model = sys.modules["neurokit2.ecg.ecg_simulate"]
    rng = check_random_state(seed)
    n_beats = int(np.round(seconds * (beat.hr / 60)))
    ti = np.asarray(beat.ti, dtype=np.float64) * np.pi / 180
    ai = np.asarray(beat.ai, dtype=np.float64)
    bi = np.asarray(beat.bi, dtype=np.float64)
    hrfact = np.sqrt(beat.hr / 60)
    bi = hrfact * bi
    ti = np.array([np.sqrt(hrfact), hrfact, 1, hrfact, np.sqrt(hrfact)]) * ti
    rrmean = 60 / beat.hr
    n = 2 ** (np.ceil(np.log2(n_beats * rrmean)))
    rr0 = model._ecg_simulate_rrprocess(0.1, 0.25, 0.01, 0.01, beat.lfhfratio, beat.hr, beat.hrstd, 1, n, rng)
    rr = np.asarray(signal_resample(rr0, sampling_rate=1, desired_sampling_rate=fs), dtype=np.float64)
    positive = np.flatnonzero(rr > 0.1)
    rr[positive[-1] + 1 :] = rr[positive[-1]]
    rr = np.maximum(rr, 0.1)
    dt = 1 / fs
    rrn = np.zeros(len(rr))
    tecg, i, ip = 0.0, 0, 0
    while i < len(rr):
        tecg += rr[i]
        ip = max(int(np.round(tecg / dt)), i + 1)
        rrn[i:ip] = rr[i]
        i = ip
    steps = ip
    t_eval = np.linspace(0, (steps - 1) * dt, steps)
    result = solve_ivp(
        lambda t, x: model._ecg_simulate_derivsecgsyn(t, x, rrn, ti, fs, ai, bi),
        [0, (steps - 1) * dt],
        np.array([1, 0, 0.04]),
        t_eval=t_eval,
    )
    z = result.y[2]
    return (z - z.min()) * 1.6 / (z.max() - z.min()) - 0.4


def simulate_record(
    labels: Sequence[str], shift: SiteShift, seconds: float, rng: np.random.Generator
) -> np.ndarray:
    """One record in mV [8 leads × seconds·fs] at the site's stored rate."""
    beat = beat_of(labels, shift, rng)
    fs = shift.fs
    n = round(seconds * fs)
    z = ecgsyn(beat, int(fs), seconds + 2, int(rng.integers(2**31 - 1)))
    z = np.pad(z, (0, max(0, n + int(fs) - len(z))), mode="edge")
    start = int(rng.integers(0, int(fs) + 1))
    z = z[start : start + n]
    t = np.arange(n) / fs
    if beat.fibrillation:
        freq = rng.uniform(5, 7)
        z = z + beat.fibrillation * np.sin(2 * np.pi * freq * t + rng.uniform(0, 6.3)) * (
            1 + 0.3 * np.sin(2 * np.pi * 0.7 * t)
        )
    derivative = np.gradient(z) * fs / (2 * np.pi * 8.0)
    delay = round(0.04 * fs)
    delayed = np.concatenate([np.full(delay, z[0]), z[: n - delay]])
    leads = PROJECTION @ np.stack([z, derivative, delayed])
    wander = shift.wander * np.sin(2 * np.pi * rng.uniform(0.1, 0.4) * t + rng.uniform(0, 6.3))
    noise = shift.noise * rng.standard_normal(leads.shape)
    return shift.gain * leads + wander + noise


def draw_labels(
    prior: Mapping[str, float], n: int, rng: np.random.Generator, second: float = 0.25
) -> list[list[str]]:
    """`n` label sets: a primary class from `prior`; with probability `second` a second abnormal class (from the
    prior restricted to abnormal classes other than the first). `normal` is never combined."""
    names = list(prior)
    weights = np.array([prior[name] for name in names], dtype=np.float64)
    weights /= weights.sum()
    out = []
    for _ in range(n):
        first = names[int(rng.choice(len(names), p=weights))]
        labels = [first]
        if first != "normal" and rng.random() < second:
            others = [i for i, name in enumerate(names) if name not in ("normal", first) and weights[i] > 0]
            if others:
                w = weights[others] / weights[others].sum()
                labels.append(names[others[int(rng.choice(len(others), p=w))]])
        out.append(labels)
    return out


def rr_intervals(signal: np.ndarray, fs: float) -> np.ndarray:
    """RR intervals (s) of one lead from its R peaks (a simple detector for tests and figures)."""
    from scipy.signal import find_peaks

    x = signal - np.median(signal)
    peaks, _ = find_peaks(x, height=0.5 * np.percentile(x, 99), distance=int(0.25 * fs))
    return np.diff(peaks) / fs


def qrs_width(signal: np.ndarray, fs: float) -> float:
    """Median width (s) at 30 % of R height of the QRS complexes of one lead."""
    from scipy.signal import find_peaks, peak_widths

    x = signal - np.median(signal)
    peaks, _ = find_peaks(x, height=0.5 * np.percentile(x, 99), distance=int(0.25 * fs))
    if len(peaks) == 0:
        return float("nan")
    widths = peak_widths(x, peaks, rel_height=0.7)[0]
    return float(np.median(widths) / fs)


def ehr_table(risk_ecg: np.ndarray, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """An EHR row per patient: age, creatinine, lactate, systolic BP, WBC, sex; and the EHR risk they imply."""
    n = len(risk_ecg)
    age = rng.normal(65, 14, n).clip(18, 95)
    creatinine = np.exp(rng.normal(0.1, 0.45, n))
    lactate = np.exp(rng.normal(0.5, 0.5, n))
    sbp = rng.normal(125, 20, n).clip(60, 220)
    wbc = np.exp(rng.normal(2.2, 0.35, n))
    sex = rng.integers(0, 2, n).astype(np.float64)
    risk = (
        0.035 * (age - 65)
        + 0.8 * np.log(creatinine)
        + 0.9 * (np.log(lactate) - 0.5)
        - 0.02 * (sbp - 125)
        + 0.5 * (np.log(wbc) - 2.2)
    )
    return {
        "age": age,
        "creatinine": creatinine,
        "lactate": lactate,
        "sbp": sbp,
        "wbc": wbc,
        "sex": sex,
        "risk_ehr": risk,
    }


ECG_RISK = {"normal": 0.0, "cd": 0.6, "mi": 1.4, "sttc": 0.8, "other": 0.3, "afib": 1.0, "hyp": 0.6}
"""Each ECG class's contribution to the ECG risk of the fusion outcomes."""


def outcomes(
    labels: np.ndarray, classes: Sequence[str], risk_ehr: np.ndarray, rng: np.random.Generator
) -> dict[str, np.ndarray]:
    """Mortality (additive in ECG and EHR risk, logistic) and length of stay (driven by their interaction)."""
    weights = np.array([ECG_RISK[name] for name in classes])
    risk_ecg = labels @ weights
    z_ecg = (risk_ecg - risk_ecg.mean()) / (risk_ecg.std() + 1e-9)
    z_ehr = (risk_ehr - risk_ehr.mean()) / (risk_ehr.std() + 1e-9)
    logit = -1.2 + 1.1 * z_ecg + 1.1 * z_ehr
    mortality = (rng.random(len(logit)) < 1 / (1 + np.exp(-logit))).astype(np.float32)
    los = np.exp(1.4 + 0.35 * z_ecg * z_ehr + 0.1 * z_ehr + 0.15 * rng.standard_normal(len(logit)))
    return {"risk_ecg": risk_ecg, "mortality": mortality, "los": los}


__all__ = ["LEADS_8", "SiteShift", "draw_labels", "ehr_table", "outcomes", "simulate_record"]
