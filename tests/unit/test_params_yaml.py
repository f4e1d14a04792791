"""params.yaml is read as DVC reads it (YAML 1.2), strictly: duplicate keys, alias bombs and bad bytes are
one-line errors naming the file."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest
from dvc.utils.serialize import parse_yaml

from stages.core.errors import ParamsError
from stages.core.params import (
    MAX_YAML_VALUES,
    parse_override,
    read_params_file,
    validate_section,
    write_params_file,
)
from stages.papers.blae.params import BLAEParams

DIALECT = "rate: 1e-4\nflag: yes\nswitch: on\noctal: 0o17\nplain: 017\nnull_word: ~\n"


def test_the_stages_read_the_values_dvc_reads(tmp_path):
    path = tmp_path / "params.yaml"
    path.write_text(DIALECT)
    ours = read_params_file(path)
    assert ours == parse_yaml(DIALECT, str(path))
    assert ours["rate"] == pytest.approx(1e-4) and isinstance(ours["rate"], float)
    assert ours["flag"] == "yes" and ours["switch"] == "on"  # YAML 1.2: strings, as DVC records them


def test_a_yes_for_a_boolean_is_refused_not_read_as_true():
    with pytest.raises(ParamsError, match=r"blae\.curve_points"):
        validate_section(BLAEParams, {"curve_points": "yes"}, "blae")


def test_a_duplicate_key_is_an_error_naming_the_key_and_line(tmp_path):
    path = tmp_path / "params.yaml"
    path.write_text("mrmc:\n  pool_size: 1500\n  seed: 1\n  pool_size: 777\n")
    with pytest.raises(ParamsError, match=r'params\.yaml: .*duplicate key "pool_size".*line 4'):
        read_params_file(path)


def test_an_alias_bomb_is_refused_quickly(tmp_path):
    lines = ["a: &a [x, x, x, x, x, x, x, x, x, x]"]
    for level in "bcdefgh":
        previous = chr(ord(level) - 1)
        lines.append(f"{level}: &{level} [{', '.join(['*' + previous] * 10)}]")
    path = tmp_path / "params.yaml"
    path.write_text("\n".join(lines) + "\n")
    started = time.perf_counter()
    with pytest.raises(ParamsError, match=f"more than {MAX_YAML_VALUES:,} values"):
        read_params_file(path)
    assert time.perf_counter() - started < 5


def test_an_override_with_aliases_is_bounded_too():
    bomb = (
        "[&a [1,1,1,1,1,1,1,1,1,1], &b [*a,*a,*a,*a,*a,*a,*a,*a,*a,*a], &c [*b,*b,*b,*b,*b,*b,*b,*b,*b,*b], "
        "&d [*c,*c,*c,*c,*c,*c,*c,*c,*c,*c], &e [*d,*d,*d,*d,*d,*d,*d,*d,*d,*d]]"
    )
    with pytest.raises(ParamsError, match=r"override 'mrmc\.budgets=.*more than"):
        parse_override(f"mrmc.budgets={bomb}")


def test_an_override_reads_yaml_1_2_values():
    assert parse_override("fdiv_losses.lr=1e-4") == (["fdiv_losses", "lr"], pytest.approx(1e-4))


def test_bytes_that_are_not_utf8_are_named(tmp_path):
    path = tmp_path / "params.yaml"
    path.write_bytes(b"common:\n  seed: 0\n  note: caf\xe9\n")
    with pytest.raises(ParamsError, match=r"params\.yaml: not UTF-8 text \(byte 0xe9"):
        read_params_file(path)


def test_writing_params_keeps_order_and_reads_back_the_same(tmp_path):
    params = {"z": {"rate": 1e-4, "word": "yes", "text": "1e-4", "none": None}, "a": [1, 2]}
    path = tmp_path / "params.yaml"
    write_params_file(params, path)
    assert read_params_file(path) == params
    assert path.read_text().startswith("z:")


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"common:\n  seed: 1\n  seed: 2\n", "duplicate key"),
        (b"common:\n  seed: 18446744073709551616\n", "common.seed"),
        (b"common: [1\n", "not valid YAML"),
        (b"\xff\xfe", "not UTF-8"),
    ],
)
def test_the_params_check_stops_with_one_line_and_no_traceback(tmp_path, content, message):
    path = tmp_path / "params.yaml"
    path.write_bytes(content)
    done = subprocess.run(
        [sys.executable, "-m", "stages", "stage", "params", "--params", str(path)],
        capture_output=True,
        text=True,
        env={"ICML25_ANY_INTERPRETER": "1", "PATH": ""},
        check=False,
    )
    assert done.returncode == 2
    assert message in done.stderr
    assert "Traceback" not in done.stderr
