"""The kernel pin: what it sets, when it refuses, and what a run records."""

from __future__ import annotations

import subprocess
import sys

import pytest

from stages.platform.kernels import (
    NATIVE_SWITCH,
    PINNED_KERNELS,
    cpu_has_avx2,
    kernel_record,
    pin_kernels,
)


def test_record_names_every_pinned_setting():
    record = kernel_record(dict(PINNED_KERNELS))
    assert record.startswith("pinned ")
    assert all(f"{name}={value}" in record for name, value in PINNED_KERNELS.items())


def test_record_says_why_nothing_is_pinned():
    assert kernel_record({NATIVE_SWITCH: "1"}).startswith(f"native: {NATIVE_SWITCH}=1")
    assert kernel_record({"MKL_CBWR": "AVX2,STRICT"}).startswith("native: no AVX2")


def test_pinning_after_numpy_is_loaded_is_refused():
    assert "numpy" in sys.modules  # the test process has it
    with pytest.raises(RuntimeError, match=r"must run before any of .*numpy.* is imported"):
        pin_kernels({})


def test_avx2_is_read_from_the_cpu_flags(tmp_path):
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text("processor\t: 0\nflags\t\t: fpu sse2 avx avx2 fma\n")
    older = tmp_path / "older"
    older.write_text("flags\t\t: fpu sse2 avx\n")
    assert cpu_has_avx2(cpuinfo) is True
    assert cpu_has_avx2(older) is False
    assert cpu_has_avx2(tmp_path / "missing") is False


def _stage_process_env(extra: dict[str, str]) -> dict[str, str]:
    code = (
        "import os, runpy, sys; sys.argv = ['stages', '--help']\n"
        "try:\n    runpy.run_module('stages', run_name='__main__')\nexcept SystemExit:\n    pass\n"
        f"print(repr({{k: os.environ.get(k) for k in {sorted(PINNED_KERNELS)!r}}}))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        env={"PATH": "/usr/bin:/bin", **extra},
        capture_output=True,
        text=True,
        check=True,
    )
    import ast

    return ast.literal_eval(done.stdout.strip().splitlines()[-1])


@pytest.mark.skipif(not cpu_has_avx2(), reason="the pin applies on x86-64 CPUs with AVX2 only")
def test_a_stage_process_overrides_the_machine_choice():
    seen = _stage_process_env({"ATEN_CPU_CAPABILITY": "default", "MKL_CBWR": "COMPATIBLE"})
    assert seen == PINNED_KERNELS
    native = _stage_process_env({NATIVE_SWITCH: "1", "ATEN_CPU_CAPABILITY": "default"})
    assert native["ATEN_CPU_CAPABILITY"] == "default" and native["MKL_CBWR"] is None
