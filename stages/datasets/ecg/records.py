"""The real ECG record reader and writer: PhysioNet / Challenge format (`<name>.hea` + `<name>.mat` holding 'val',
MATLAB v4, format `16+24`) and WFDB `.dat` records (format 16 read here, any other format through `wfdb`).

A header is parsed (record line, one signal line per lead: file, format, gain/baseline/units, ADC zero, initial
value, checksum, description; `#Key: value` comments with `#Dx` SNOMED codes), the samples are converted to mV,
the leads the run uses are picked by name, and the record is resampled to the run's rate and cropped or padded to
its length. Every check names the record and what is wrong (:class:`ECGFormatError`, exit 2 from the CLI); a
folder loader collects every record's error before failing, so one run lists them all.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path

import numpy as np

from stages.core.errors import DataValidationError

LEADS_12: tuple[str, ...] = ("I", "II", "III", "aVR", "aVL", "aVF", "V1", "V2", "V3", "V4", "V5", "V6")
LEADS_8: tuple[str, ...] = ("I", "II", "V1", "V2", "V3", "V4", "V5", "V6")
"""The leads ECG-JEPA's fusion code feeds (I, II, V1–V6); the other four limb leads are linear in I and II."""
ADC_GAIN = 1000.0
"""Digital units per mV written by :func:`write_record` (the Challenge's)."""
MAT_OFFSET = 24
"""Bytes before the samples of a MATLAB v4 file holding one matrix named 'val' (20-byte header + 'val\\0')."""


class ECGFormatError(DataValidationError):
    """A record or header that cannot be read as PhysioNet / Challenge ECG (the message names the record)."""


@dataclass(frozen=True)
class SignalSpec:
    """One signal line of a header."""

    file: str
    fmt: str
    byte_offset: int
    gain: float
    baseline: int
    units: str
    adc_zero: int
    initial: int | None
    checksum: int | None
    name: str


@dataclass(frozen=True)
class Header:
    """A parsed `.hea` file: record line, signal lines and `#` comments (key → value)."""

    record: str
    n_signals: int
    fs: float
    n_samples: int
    signals: tuple[SignalSpec, ...]
    comments: dict[str, str] = field(default_factory=dict)

    @property
    def leads(self) -> list[str]:
        return [signal.name for signal in self.signals]

    @property
    def dx(self) -> list[str]:
        """The `#Dx` SNOMED codes (empty when the line is absent)."""
        from stages.datasets.ecg.snomed import parse_dx

        return parse_dx(self.comments.get("Dx", ""))


_GAIN = re.compile(r"^(?P<gain>[-+0-9.eE]+)(?:\((?P<baseline>[-+0-9]+)\))?(?:/(?P<units>\S+))?$")


def _int(text: str, what: str, where: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise ECGFormatError(f"{where}: {what} {text!r} is not an integer") from None


def parse_header(path: str | Path) -> Header:
    """Parse a `.hea` file; every malformed field is named with the file and line."""
    path = Path(path)
    where = str(path)
    if not path.is_file():
        raise ECGFormatError(f"{where}: header file not found")
    try:
        lines = path.read_text(encoding="utf-8", errors="strict").splitlines()
    except UnicodeDecodeError:
        raise ECGFormatError(f"{where}: not a text header (not UTF-8)") from None
    comments: dict[str, str] = {}
    body = []
    for line in lines:
        stripped = line.strip()
        if not stripped:
            continue
        if stripped.startswith("#"):
            key, sep, value = stripped.lstrip("#").partition(":")
            if sep:
                comments[key.strip()] = value.strip()
            continue
        body.append(stripped)
    if not body:
        raise ECGFormatError(f"{where}: empty header (no record line)")
    fields = body[0].split()
    if len(fields) < 4:
        raise ECGFormatError(
            f"{where}: record line {body[0]!r} needs 'name n_signals fs n_samples' (multi-segment records "
            "are not supported)"
        )
    record = fields[0].split("/")[0]
    n_signals = _int(fields[1], "number of signals", where)
    fs_text = fields[2].split("/")[0].split("(")[0]
    try:
        fs = float(fs_text)
    except ValueError:
        raise ECGFormatError(f"{where}: sampling rate {fields[2]!r} is not a number") from None
    if not (math.isfinite(fs) and fs > 0):
        raise ECGFormatError(f"{where}: sampling rate must be a positive number, got {fields[2]!r}")
    n_samples = _int(fields[3], "number of samples", where)
    if n_signals < 1 or n_samples < 1:
        raise ECGFormatError(
            f"{where}: a record needs ≥ 1 signal and ≥ 1 sample, got {n_signals} × {n_samples}"
        )
    if len(body) - 1 != n_signals:
        raise ECGFormatError(
            f"{where}: the record line declares {n_signals} signals, {len(body) - 1} signal lines follow"
        )
    signals = []
    for number, line in enumerate(body[1:], start=2):
        parts = line.split()
        at = f"{where} line {number}"
        if len(parts) < 2:
            raise ECGFormatError(f"{at}: a signal line needs at least 'file format'")
        fmt, _, offset = parts[1].partition("+")
        fmt = fmt.split("x")[0].split(":")[0]
        gain, baseline, units = ADC_GAIN, None, "mV"
        if len(parts) > 2:
            match = _GAIN.match(parts[2])
            if not match:
                raise ECGFormatError(f"{at}: gain {parts[2]!r} is not 'gain(baseline)/units'")
            gain = float(match["gain"])
            baseline = int(match["baseline"]) if match["baseline"] else None
            units = match["units"] or "mV"
        if not (math.isfinite(gain) and gain != 0):
            gain = 200.0  # WFDB's default gain when the field is 0
        adc_zero = _int(parts[4], "ADC zero", at) if len(parts) > 4 else 0
        signals.append(
            SignalSpec(
                file=parts[0],
                fmt=fmt,
                byte_offset=_int(offset, "byte offset", at) if offset else 0,
                gain=gain,
                baseline=adc_zero if baseline is None else baseline,
                units=units,
                adc_zero=adc_zero,
                initial=_int(parts[5], "initial value", at) if len(parts) > 5 else None,
                checksum=_int(parts[6], "checksum", at) if len(parts) > 6 else None,
                name=" ".join(parts[8:]) if len(parts) > 8 else f"signal{number - 2}",
            )
        )
    return Header(record, n_signals, fs, n_samples, tuple(signals), comments)


def _units_scale(units: str, where: str) -> float:
    scale = {"mv": 1.0, "uv": 1e-3, "μv": 1e-3, "µv": 1e-3, "v": 1e3}.get(units.lower())
    if scale is None:
        raise ECGFormatError(f"{where}: units {units!r} are not a voltage (mV, uV, V)")
    return scale


def read_digital(header: Header, folder: Path) -> np.ndarray:
    """The digital samples [signals × samples] (int) of a record whose signals share one file."""
    where = str(folder / f"{header.record}.hea")
    files = {signal.file for signal in header.signals}
    if len(files) != 1:
        raise ECGFormatError(f"{where}: signals spread over several files {sorted(files)} are not supported")
    spec = header.signals[0]
    data_path = folder / spec.file
    if not data_path.is_file():
        raise ECGFormatError(f"{where}: data file {spec.file} not found beside the header")
    formats = {signal.fmt for signal in header.signals}
    if formats != {"16"}:
        return _read_with_wfdb(header, folder, where)
    expected = header.n_signals * header.n_samples * 2
    size = data_path.stat().st_size
    offset = spec.byte_offset
    if data_path.suffix == ".mat" and size != offset + expected:
        return _read_mat(data_path, header, where)
    if size < offset + expected:
        raise ECGFormatError(
            f"{where}: {spec.file} holds {size - offset} bytes of samples, the header declares "
            f"{header.n_signals} × {header.n_samples} × 2 = {expected}"
        )
    flat = np.fromfile(data_path, dtype="<i2", count=header.n_signals * header.n_samples, offset=offset)
    return flat.reshape(header.n_samples, header.n_signals).T.astype(np.int32)


def _read_mat(path: Path, header: Header, where: str) -> np.ndarray:
    from scipy.io import loadmat

    try:
        val = loadmat(str(path))["val"]
    except Exception as error:  # scipy raises several types for a broken file
        raise ECGFormatError(
            f"{where}: {path.name} is not a MATLAB file with a 'val' matrix ({error})"
        ) from None
    if val.shape != (header.n_signals, header.n_samples):
        raise ECGFormatError(
            f"{where}: {path.name}'s 'val' is {val.shape[0]} × {val.shape[1]}, the header declares "
            f"{header.n_signals} × {header.n_samples}"
        )
    return val.astype(np.int32)


def _read_with_wfdb(header: Header, folder: Path, where: str) -> np.ndarray:
    import wfdb

    try:
        record = wfdb.rdrecord(str(folder / header.record), physical=False)
    except Exception as error:  # wfdb raises many types
        raise ECGFormatError(
            f"{where}: wfdb could not read the record ({type(error).__name__}: {error})"
        ) from None
    return np.asarray(record.d_signal, dtype=np.int64).T.astype(np.int32)


def check_checksums(header: Header, digital: np.ndarray) -> None:
    """Each signal's 16-bit checksum, where the header records one."""
    where = f"{header.record}.hea"
    for row, signal in enumerate(header.signals):
        if signal.checksum is None:
            continue
        total = int(digital[row].astype(np.int64).sum()) & 0xFFFF
        total = total - 65536 if total > 32767 else total
        if (total - signal.checksum) % 65536:  # written signed (Challenge) or unsigned (wfdb)
            raise ECGFormatError(
                f"{where}: lead {signal.name}: checksum {total} of the samples differs from the header's "
                f"{signal.checksum} (a damaged or mismatched data file)"
            )


def to_physical(header: Header, digital: np.ndarray) -> np.ndarray:
    """Digital → mV per signal: (d − baseline) / gain, scaled by the units."""
    where = f"{header.record}.hea"
    out = np.empty(digital.shape, dtype=np.float64)
    for row, signal in enumerate(header.signals):
        out[row] = (digital[row] - signal.baseline) / signal.gain * _units_scale(signal.units, where)
    return out


def resample(signal: np.ndarray, fs_in: float, fs_out: float) -> np.ndarray:
    """Polyphase resampling [leads × samples] from fs_in to fs_out (rational ratio, anti-aliased)."""
    if fs_in == fs_out:
        return signal
    from scipy.signal import resample_poly

    ratio = Fraction(fs_out / fs_in).limit_denominator(1000)
    return resample_poly(signal, ratio.numerator, ratio.denominator, axis=-1)


def fit_length(signal: np.ndarray, n: int) -> np.ndarray:
    """The first `n` samples, zero-padded at the end when the record is shorter."""
    if signal.shape[-1] >= n:
        return signal[..., :n]
    return np.pad(signal, ((0, 0), (0, n - signal.shape[-1])))


@dataclass(frozen=True)
class LoadOptions:
    """What the run needs of every record: its rate, length, leads; and how short a record may be."""

    fs: float = 100.0
    seconds: float = 10.0
    leads: tuple[str, ...] = LEADS_8
    min_seconds: float = 5.0
    checksums: bool = True

    @property
    def n_samples(self) -> int:
        return round(self.fs * self.seconds)


def read_record(header_path: str | Path, options: LoadOptions = LoadOptions()) -> tuple[np.ndarray, Header]:
    """One record as float32 mV [leads × samples] at the run's rate and length, with its header."""
    header_path = Path(header_path)
    header = parse_header(header_path)
    where = str(header_path)
    if header.record != header_path.stem:
        raise ECGFormatError(
            f"{where}: the record line names {header.record!r}, the file is {header_path.stem!r}"
        )
    missing = [lead for lead in options.leads if lead not in header.leads]
    if missing:
        raise ECGFormatError(
            f"{where}: lead{'s' if len(missing) > 1 else ''} {', '.join(missing)} missing (the record has "
            f"{header.n_signals}: {', '.join(header.leads)}; the run needs {', '.join(options.leads)})"
        )
    seconds = header.n_samples / header.fs
    if seconds < options.min_seconds:
        raise ECGFormatError(
            f"{where}: {seconds:.2f} s long, shorter than the {options.min_seconds:g} s required"
        )
    digital = read_digital(header, header_path.parent)
    if digital.shape != (header.n_signals, header.n_samples):
        raise ECGFormatError(
            f"{where}: the data hold {digital.shape}, the header declares {header.n_signals} × {header.n_samples}"
        )
    if options.checksums:
        check_checksums(header, digital)
    physical = to_physical(header, digital)
    picked = physical[[header.leads.index(lead) for lead in options.leads]]
    if not np.isfinite(picked).all():
        raise ECGFormatError(f"{where}: non-finite samples")
    out = fit_length(resample(picked, header.fs, options.fs), options.n_samples)
    return out.astype(np.float32), header


def write_record(
    folder: str | Path,
    name: str,
    signal_mv: np.ndarray,
    fs: float,
    leads: Sequence[str],
    dx: Sequence[str],
    comments: dict[str, str] | None = None,
) -> Path:
    """Write a Challenge-format record: `<name>.mat` ('val', int16, MATLAB v4: format 16+24) and `<name>.hea`
    (gain 1000/mV, checksums, `#Age`, `#Sex`, `#Dx`, ...). Returns the header path."""
    from scipy.io import savemat

    folder = Path(folder)
    signal_mv = np.asarray(signal_mv, dtype=np.float64)
    if signal_mv.ndim != 2 or signal_mv.shape[0] != len(leads):
        raise ValueError(f"signal must be [leads × samples] with {len(leads)} leads, got {signal_mv.shape}")
    digital = np.clip(np.round(signal_mv * ADC_GAIN), -32767, 32767).astype(np.int16)
    savemat(str(folder / f"{name}.mat"), {"val": digital}, format="4")
    fs_text = f"{fs:g}"
    lines = [f"{name} {len(leads)} {fs_text} {digital.shape[1]}"]
    for row, lead in enumerate(leads):
        total = int(digital[row].astype(np.int64).sum()) & 0xFFFF
        total = total - 65536 if total > 32767 else total
        lines.append(
            f"{name}.mat 16+{MAT_OFFSET} {ADC_GAIN:g}/mV 16 0 {int(digital[row, 0])} {total} 0 {lead}"
        )
    extra = {"Age": "Unknown", "Sex": "Unknown"} | dict(comments or {})
    lines += [f"#{key}: {value}" for key, value in extra.items() if key != "Dx"]
    lines.append(f"#Dx: {','.join(dx)}")
    lines += ["#Rx: Unknown", "#Hx: Unknown", "#Sx: Unknown"]
    path = folder / f"{name}.hea"
    path.write_text("\n".join(lines) + "\n")
    return path


@dataclass
class RecordSet:
    """Records read from folders: signals [records × leads × samples] (float32 mV), names, sites, codes."""

    signals: np.ndarray
    names: list[str]
    sites: list[str]
    codes: dict[str, list[str]]
    rates: dict[str, list[float]]


def header_files(folder: str | Path) -> list[Path]:
    """The `.hea` files of a folder (sorted; not recursive)."""
    folder = Path(folder)
    if not folder.is_dir():
        raise ECGFormatError(f"{folder}: not a folder of records")
    return sorted(folder.glob("*.hea"))


def read_folder(folder: str | Path, options: LoadOptions, site: str | None = None) -> RecordSet:
    """Every record of one folder (one site); all records' errors are collected and reported together."""
    folder = Path(folder)
    paths = header_files(folder)
    if not paths:
        raise ECGFormatError(f"{folder}: no .hea headers found")
    site = site or folder.name
    signals, names, codes, rates, errors = [], [], {}, {}, []
    for path in paths:
        try:
            signal, header = read_record(path, options)
        except ECGFormatError as error:
            errors.append(str(error))
            continue
        if not header.dx:
            errors.append(f"{path}: no #Dx line (the record's SNOMED codes)")
            continue
        key = f"{site}/{header.record}"
        signals.append(signal)
        names.append(key)
        codes[key] = header.dx
        rates.setdefault(site, []).append(header.fs)
    if errors:
        shown = errors[:10]
        more = f" (and {len(errors) - 10} more)" if len(errors) > 10 else ""
        raise ECGFormatError(f"{len(errors)} unreadable record(s) in {folder}: " + "; ".join(shown) + more)
    return RecordSet(np.stack(signals), names, [site] * len(names), codes, rates)
