"""Reader for the IDX format used by MNIST and Fashion-MNIST (optionally gzip-compressed)."""

from __future__ import annotations

import gzip
import struct
from pathlib import Path

import numpy as np

from stages.core.errors import DataValidationError

_DTYPES = {0x08: np.uint8, 0x09: np.int8, 0x0B: ">i2", 0x0C: ">i4", 0x0D: ">f4", 0x0E: ">f8"}


def read_idx(path: str | Path) -> np.ndarray:
    """Read an IDX file into an array of its declared shape; malformed files raise with the file name."""
    path = Path(path)
    opener = gzip.open if path.suffix == ".gz" else open
    try:
        with opener(path, "rb") as handle:
            raw = handle.read()
    except OSError as error:
        raise DataValidationError(f"{path}: cannot read IDX file: {error}") from error
    if len(raw) < 4 or raw[0] != 0 or raw[1] != 0:
        raise DataValidationError(f"{path}: not an IDX file (bad magic number)")
    type_code, n_dims = raw[2], raw[3]
    if type_code not in _DTYPES:
        raise DataValidationError(f"{path}: unknown IDX element type 0x{type_code:02x}")
    header_end = 4 + 4 * n_dims
    if len(raw) < header_end:
        raise DataValidationError(f"{path}: truncated IDX header")
    shape = struct.unpack(f">{n_dims}I", raw[4:header_end])
    dtype = np.dtype(_DTYPES[type_code])
    expected = int(np.prod(shape)) * dtype.itemsize
    if len(raw) - header_end != expected:
        raise DataValidationError(
            f"{path}: IDX header declares shape {shape} ({expected} bytes) but the file holds "
            f"{len(raw) - header_end} bytes of data"
        )
    return np.frombuffer(raw, dtype=dtype, offset=header_end).reshape(shape).astype(dtype.newbyteorder("="))


def write_idx(array: np.ndarray, path: str | Path) -> None:
    """Write an array as an IDX file (used to make test fixtures in the real format)."""
    codes = {np.dtype(np.uint8): 0x08, np.dtype(np.int8): 0x09}
    array = np.ascontiguousarray(array)
    if array.dtype not in codes:
        raise ValueError(f"write_idx supports uint8/int8, got {array.dtype}")
    header = bytes([0, 0, codes[array.dtype], array.ndim]) + struct.pack(f">{array.ndim}I", *array.shape)
    path = Path(path)
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "wb") as handle:
        handle.write(header + array.tobytes())
