"""CLIMB: simulated classes carry their defining feature, records round-trip through the Challenge format (signal
and header, also through wfdb), the SNOMED mapping, multi-hot labels through the loader, bad inputs named, params
rules, the claims logic on made-up results, and a smoke run of the whole chain."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from stages.core.errors import DataValidationError
from stages.datasets.ecg.records import (
    LEADS_8,
    ECGFormatError,
    LoadOptions,
    parse_header,
    read_folder,
    read_record,
    write_record,
)
from stages.datasets.ecg.simulate import SiteShift, qrs_width, rr_intervals, simulate_record
from stages.datasets.ecg.snomed import (
    BENCHMD,
    CLASSES,
    CODE_OF,
    OOD_CLASSES,
    OOD_FINE,
    UnknownCodeError,
    labels_of,
)
from stages.papers.climb.params import ClimbParams

FS = 100.0


def _simulate(label: str, n: int = 4, seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [simulate_record([label], SiteShift(fs=FS, noise=0.005, wander=0.0), 10.0, rng) for _ in range(n)]


def _heart_rate(signal: np.ndarray) -> float:
    return 60.0 / float(np.mean(rr_intervals(signal[1], FS)))


def _irregularity(signal: np.ndarray) -> float:
    rr = rr_intervals(signal[1], FS)
    return float(np.std(np.diff(rr)) / np.mean(rr))


@pytest.fixture(scope="module")
def simulated() -> dict[str, list[np.ndarray]]:
    return {label: _simulate(label) for label in ("normal", "brady", "tachy", "afib", "cd", "lbbb", "rbbb")}


def test_rate_defines_brady_and_tachy(simulated):
    normal = [_heart_rate(x) for x in simulated["normal"]]
    assert max(_heart_rate(x) for x in simulated["brady"]) < 56 < min(normal)
    assert min(_heart_rate(x) for x in simulated["tachy"]) > 100 > max(normal)


def test_rr_irregularity_defines_afib(simulated):
    normal = max(_irregularity(x) for x in simulated["normal"])
    assert min(_irregularity(x) for x in simulated["afib"]) > 2 * normal


def test_qrs_width_defines_the_block_classes(simulated):
    normal = np.median([qrs_width(x[1], FS) for x in simulated["normal"]])
    for label in ("cd", "lbbb", "rbbb"):
        assert np.median([qrs_width(x[1], FS) for x in simulated[label]]) > 1.5 * normal, label


def test_a_written_record_reads_back_identical(tmp_path):
    signal = _simulate("afib", 1)[0]
    header_path = write_record(
        tmp_path, "A0001", signal, FS, LEADS_8, ["164889003", "164873001"], {"Age": "63"}
    )
    back, header = read_record(header_path, LoadOptions(fs=FS, seconds=10.0))
    assert back.shape == (8, 1000)
    np.testing.assert_allclose(back, signal, atol=0.5e-3 + 1e-6)  # int16 at 1000 units/mV
    assert header.leads == list(LEADS_8) and header.fs == FS and header.n_samples == 1000
    assert header.dx == ["164889003", "164873001"] and header.comments["Age"] == "63"
    again = write_record(tmp_path / "..", "A0001", back, FS, LEADS_8, header.dx, {"Age": "63"})
    assert again.read_text() == header_path.read_text()


def test_wfdb_reads_our_records_the_same(tmp_path):
    import wfdb

    signal = _simulate("normal", 1)[0]
    write_record(tmp_path, "B1", signal, 500.0, LEADS_8, ["426783006"])
    ours, _ = read_record(tmp_path / "B1.hea", LoadOptions(fs=500.0, seconds=2.0, min_seconds=1.0))
    theirs = wfdb.rdrecord(str(tmp_path / "B1"))
    assert theirs.sig_name == list(LEADS_8) and theirs.fs == 500
    np.testing.assert_allclose(theirs.p_signal.T[:, :1000], ours, atol=1e-6)


def test_resampling_keeps_the_rhythm(tmp_path):
    signal = simulate_record(
        ["tachy"], SiteShift(fs=500.0, noise=0.0, wander=0.0), 10.0, np.random.default_rng(3)
    )
    write_record(tmp_path, "C1", signal, 500.0, LEADS_8, [CODE_OF["tachy"]])
    down, _ = read_record(tmp_path / "C1.hea", LoadOptions(fs=FS))
    assert down.shape == (8, 1000)
    rate_500 = 60 / np.mean(rr_intervals(signal[1], 500.0))
    assert abs(_heart_rate(down) - rate_500) < 3


def test_snomed_mapping_on_known_codes():
    known = {
        "426783006": "normal",
        "164889003": "afib",
        "164890007": "afib",
        "59118001": "cd",
        "164909002": "cd",
        "270492004": "cd",
        "164865005": "mi",
        "164934002": "sttc",
        "164873001": "hyp",
        "427084000": "other",
        "426177001": "other",
    }
    for code, label in known.items():
        assert BENCHMD[code] == label
    assert (
        OOD_FINE["164909002"] == "lbbb" and OOD_FINE["59118001"] == "rbbb" and OOD_FINE["270492004"] == "avb"
    )
    assert all(BENCHMD[CODE_OF[name]] == name for name in CLASSES)
    assert all(OOD_FINE[CODE_OF[name]] == name for name in OOD_CLASSES)


def test_unknown_codes_are_listed_not_dropped():
    with pytest.raises(UnknownCodeError, match=r"999999.*in 2 records.*e\.g\. a") as error:
        labels_of({"a": ["999999", "426783006"], "b": ["999999"], "c": ["123"]})
    assert set(error.value.unknown) == {"999999", "123"}
    labels = labels_of({"a": ["999999", "426783006"]}, ignore=["999999"])
    assert labels.tolist() == [[1, 0, 0, 0, 0, 0, 0]]


def test_multi_hot_labels_survive_the_loader(tmp_path):
    site = tmp_path / "site"
    site.mkdir()
    sets = [["mi", "sttc"], ["cd", "hyp", "afib"], ["normal"]]
    for i, labels in enumerate(sets):
        signal = simulate_record(labels, SiteShift(fs=250.0), 6.0, np.random.default_rng(i))
        write_record(site, f"R{i}", signal, 250.0, LEADS_8, [CODE_OF[name] for name in labels])
    loaded = read_folder(site, LoadOptions(fs=FS, seconds=6.0))
    assert loaded.signals.shape == (3, 8, 600)
    y = labels_of(loaded.codes)
    for row, labels in zip(y, sets, strict=True):
        assert sorted(CLASSES[i] for i in np.flatnonzero(row)) == sorted(labels)


def _record(tmp_path: Path) -> Path:
    signal = _simulate("normal", 1)[0]
    return write_record(tmp_path, "D1", signal, FS, LEADS_8, ["426783006"])


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        (
            lambda p: p.write_text(p.read_text().replace("D1 8 100 1000", "D1 8 abc 1000")),
            "sampling rate 'abc'",
        ),
        (lambda p: p.write_text(p.read_text().replace("D1 8 100 1000", "D1 8 0 1000")), "positive number"),
        (lambda p: p.write_text(p.read_text().replace("D1 8 100", "D1 9 100")), "declares 9 signals"),
        (lambda p: p.write_text(p.read_text().replace(" V6\n", " V9\n")), "lead V6 missing"),
        (lambda p: p.with_suffix(".mat").unlink(), "data file D1.mat not found"),
        (lambda p: p.with_suffix(".mat").write_bytes(b"\0" * 100), "not a MATLAB file"),
        (lambda p: p.write_text(p.read_text().replace("1000/mV", "1000/degC", 1)), "not a voltage"),
        (lambda p: p.write_text(p.read_text().replace("D1 8 100 1000", "D1 8 100 300")), "shorter than"),
    ],
)
def test_bad_records_are_named(tmp_path, damage, message):
    path = _record(tmp_path)
    damage(path)
    with pytest.raises(ECGFormatError, match=message):
        read_record(path, LoadOptions(fs=FS, seconds=10.0))


def test_a_damaged_sample_fails_the_checksum(tmp_path):
    path = _record(tmp_path)
    mat = path.with_suffix(".mat")
    raw = bytearray(mat.read_bytes())
    raw[100] ^= 0x7F
    mat.write_bytes(bytes(raw))
    with pytest.raises(ECGFormatError, match="checksum"):
        read_record(path, LoadOptions(fs=FS))


def test_a_folder_lists_every_bad_record(tmp_path):
    for name in ("E1", "E2"):
        write_record(tmp_path, name, _simulate("normal", 1)[0], FS, LEADS_8, ["426783006"])
        (tmp_path / f"{name}.mat").unlink()
    with pytest.raises(ECGFormatError, match=r"2 unreadable record\(s\).*E1.*E2"):
        read_folder(tmp_path, LoadOptions(fs=FS))


def test_header_comments_and_dx(tmp_path):
    header = parse_header(_record(tmp_path))
    assert header.dx == ["426783006"] and header.comments["Rx"] == "Unknown"


@pytest.mark.parametrize(
    ("section", "message"),
    [
        ({"few_shot": {"shots": [1, 8, 64]}}, "exceeds data.ood_train_per_class"),
        ({"few_shot": {"shots": [8, 1]}}, "increasing"),
        ({"fusion": {"hidden": 60}}, "multiple of fusion.attention_heads"),
        ({"data": {"sites": {"ptbxl": {"prior": {"normal": 1.0}}}}}, "missing"),
        ({"data": {"sites": {"ptbxl": {"prior": {"bogus": 1.0}}}}}, "unknown classes"),
        ({"seeds": [0, 0]}, "distinct"),
    ],
)
def test_bad_params_name_the_key(section, message):
    with pytest.raises(ValueError, match=message):
        ClimbParams.model_validate(section)


def test_params_yaml_section_is_the_models_default(repo_root):
    import yaml

    section = yaml.safe_load((repo_root / "params.yaml").read_text())["climb"]
    assert ClimbParams.model_validate(section) == ClimbParams()


# ---- claims on made-up results: each verdict reachable ----


def _auroc_frame(gain_by_site: dict[str, float], seeds=(0, 1, 2), noise=0.005) -> pl.DataFrame:
    rows, rng = [], np.random.default_rng(0)
    for seed in seeds:
        for site, gain in gain_by_site.items():
            base = 0.7 + rng.normal(0, noise)
            for regime, value in (("single", base), ("multitask", base + gain + rng.normal(0, noise))):
                rows.append(
                    {
                        "seed": seed,
                        "model": site if regime == "single" else "multitask",
                        "regime": regime,
                        "site": site,
                        "own_site": True,
                        "macro_auroc": value,
                        "classes_scored": 7,
                        "per_class": "{}",
                    }
                )
    return pl.DataFrame(rows)


def test_rq1_claim_holds_fails_and_is_undecided():
    from stages.papers.climb.claims import rq1_claim

    params = ClimbParams()
    up = rq1_claim(params, _auroc_frame({"ptbxl": 0.05, "chapman": 0.08, "georgia": 0.1, "cpsc": 0.04}))
    assert up.verdict == "holds" and up.measured["max_gain"]["site"] == "georgia"
    down = rq1_claim(params, _auroc_frame({"ptbxl": -0.05, "chapman": -0.08, "georgia": 0.1, "cpsc": -0.04}))
    assert down.verdict == "fails"
    flat = rq1_claim(
        params, _auroc_frame({"ptbxl": 0.0, "chapman": 0.0, "georgia": 0.0, "cpsc": 0.0}, noise=0.03)
    )
    assert flat.verdict == "inconclusive"


def _fewshot_frame(means: dict[tuple[int, str], float], seeds=(0, 1, 2), draws=3) -> pl.DataFrame:
    rng = np.random.default_rng(1)
    return pl.DataFrame(
        [
            {
                "seed": s,
                "draw": d,
                "k": k,
                "init": init,
                "shots": 5 * k,
                "macro_auroc": m + rng.normal(0, 0.005),
            }
            for (k, init), m in means.items()
            for s in seeds
            for d in range(draws)
        ]
    )


def test_rq2_claims_follow_the_ordering():
    from stages.papers.climb.claims import rq2_claims

    params = ClimbParams()
    good = {
        (1, "multitask"): 0.75,
        (1, "single_site"): 0.65,
        (1, "scratch"): 0.55,
        (8, "multitask"): 0.85,
        (8, "single_site"): 0.75,
        (8, "scratch"): 0.65,
        (32, "multitask"): 0.9,
        (32, "single_site"): 0.88,
        (32, "scratch"): 0.87,
    }
    first, second = rq2_claims(params, _fewshot_frame(good))
    assert first.verdict == "holds" and second.verdict == "holds"
    bad = dict(good) | {(8, "multitask"): 0.6, (32, "scratch"): 0.5}
    first, second = rq2_claims(params, _fewshot_frame(bad))
    assert first.verdict == "fails" and second.verdict == "fails"


def test_jepa_claim_is_inconclusive_by_design():
    from stages.papers.climb.claims import jepa_claim

    claim = jepa_claim()
    assert claim.verdict == "inconclusive" and "weights" in claim.reason


def test_few_shot_weights_balance_the_classes():
    from stages.papers.climb.fusion import few_shot_weights

    y = np.array([0.0] * 30 + [1.0] * 5)
    w = few_shot_weights(y, 8, np.random.default_rng(0))
    assert (w[:30] > 0).sum() == 8 and (w[30:] > 0).sum() == 5
    assert np.isclose(w[:30].sum(), 1) and np.isclose(w[30:].sum(), 1)


# ---- the own-data command ----


def _user_folder(tmp_path: Path) -> Path:
    root = tmp_path / "records"
    rng = np.random.default_rng(0)
    for s, site in enumerate(("siteA", "siteB")):
        (root / site).mkdir(parents=True)
        for i in range(16):
            labels = [("normal", "afib", "cd", "mi")[(i + s) % 4]]
            signal = simulate_record(labels, SiteShift(fs=250.0), 5.0, rng)
            write_record(root / site, f"{site}_{i:02d}", signal, 250.0, LEADS_8, [CODE_OF[n] for n in labels])
    return root


def _set_dx(path: Path, codes: str) -> None:
    lines = [f"#Dx: {codes}" if line.startswith("#Dx") else line for line in path.read_text().splitlines()]
    path.write_text("\n".join(lines) + "\n")


@pytest.fixture(scope="module")
def user_folder(tmp_path_factory) -> Path:
    return _user_folder(tmp_path_factory.mktemp("climb-user"))


def test_ecg_benchmark_command_writes_a_report(tmp_path, user_folder):
    from tests.conftest import run_cli

    result = run_cli(
        [
            "ecg-benchmark",
            "--input",
            str(user_folder),
            "--output",
            str(tmp_path / "out"),
            "--steps",
            "6",
            "--seconds",
            "5",
        ],
        tmp_path,
    )
    assert result.returncode == 0, result.stderr
    report = (tmp_path / "out" / "report.json").read_text()
    assert '"siteA"' in report and '"multitask"' in report
    assert (tmp_path / "out" / "site_auroc.png").is_file()


@pytest.mark.parametrize(
    ("damage", "args", "message"),
    [
        (lambda r: _set_dx(r / "siteA" / "siteA_03.hea", "999999"), [], "unknown SNOMED code in #Dx: 999999"),
        (lambda r: _set_dx(r / "siteA" / "siteA_04.hea", ""), [], "siteA_04.hea: no #Dx line"),
        (lambda r: shutil.rmtree(r / "siteB"), [], "needs ≥ 2"),
        (
            lambda r: (r / "siteA" / "siteA_02.mat").unlink(),
            [],
            "siteA_02.hea: data file siteA_02.mat not found",
        ),
        (lambda r: None, ["--leads", "I", "aVR"], "lead aVR missing"),
        (lambda r: None, ["--map", "123=bogus"], "--map: unknown classes"),
        (lambda r: None, ["--rate", "0"], "--rate must be a positive number"),
    ],
)
def test_ecg_benchmark_bad_inputs_are_named_and_write_nothing(tmp_path, user_folder, damage, args, message):
    from tests.conftest import run_cli

    root = tmp_path / "copy"
    shutil.copytree(user_folder, root)
    damage(root)
    result = run_cli(
        [
            "ecg-benchmark",
            "--input",
            str(root),
            "--output",
            str(tmp_path / "out"),
            "--steps",
            "2",
            "--seconds",
            "5",
            *args,
        ],
        tmp_path,
    )
    assert result.returncode == 2, result.stderr
    assert message in result.stderr and "Traceback" not in result.stderr
    assert not (tmp_path / "out").exists()


def test_a_bad_folder_fails_with_its_name(tmp_path):
    from stages.methods.multitask.own_data import site_folders

    with pytest.raises(DataValidationError, match="not a folder"):
        site_folders(tmp_path / "nope")


# ---- the whole chain at smoke size ----


@pytest.mark.slow
def test_smoke_chain_writes_claims(tmp_path, repo_root):
    from stages.core.params import deep_merge, read_params_file, write_params_file
    from stages.papers.registry import load_paper
    from stages.platform.pipelines import run_stage

    params = deep_merge(
        read_params_file(repo_root / "params.yaml"), read_params_file(repo_root / "params.smoke.yaml")
    )
    write_params_file(params, tmp_path / "params.yaml")
    for stage in load_paper("climb").pipeline.stage_names():
        run_stage(stage, tmp_path / "params.yaml", tmp_path)
    import json

    claims = json.loads((tmp_path / "data/climb/claims.json").read_text())
    assert {c["id"] for c in claims} >= {
        "multitask_beats_single_task",
        "fewshot_multitask_first",
        "ecg_jepa_beats_units",
    }
    assert all(c["verdict"] in ("holds", "fails", "inconclusive") for c in claims)
    assert len(list((tmp_path / "data/climb/figures").glob("*.png"))) == 4


# ---- real formats: a Challenge-style 12-lead fixture, WFDB .dat in formats 16 and 212 ----

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "climb"


def test_challenge_fixture_reads_with_12_leads_and_labels():
    import wfdb

    signal, header = read_record(FIXTURES / "A0001.hea", LoadOptions(fs=500.0, seconds=2.0, min_seconds=1.0))
    assert header.n_signals == 12 and header.fs == 500 and header.comments["Age"] == "74"
    assert signal.shape == (8, 1000)
    theirs = wfdb.rdrecord(str(FIXTURES / "A0001"))
    for row, lead in enumerate(LEADS_8):
        np.testing.assert_allclose(signal[row], theirs.p_signal[:, theirs.sig_name.index(lead)], atol=1e-6)
    labels = labels_of({"A0001": header.dx})
    assert [CLASSES[i] for i in np.flatnonzero(labels[0])] == ["cd", "afib"]


@pytest.mark.parametrize("fmt", ["16", "212"])
def test_wfdb_dat_records_read_through_the_same_loader(tmp_path, fmt):
    import wfdb

    signal = _simulate("normal", 1)[0]
    wfdb.wrsamp(
        "W1",
        fs=100,
        units=["mV"] * 8,
        sig_name=list(LEADS_8),
        p_signal=signal.T,
        fmt=[fmt] * 8,
        adc_gain=[200.0] * 8,
        baseline=[0] * 8,
        comments=["Dx: 426783006"],
        write_dir=str(tmp_path),
    )
    ours, header = read_record(tmp_path / "W1.hea", LoadOptions(fs=FS))
    assert header.dx == ["426783006"]
    np.testing.assert_allclose(ours, signal, atol=1 / 200 / 2 + 1e-6)
