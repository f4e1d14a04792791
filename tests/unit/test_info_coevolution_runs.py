"""Info-Coevolution's run kinds: their own annotation caps, and the worker processes that run them."""

from __future__ import annotations

import re

import pytest
import torch

from stages.core.errors import PipelineError
from stages.core.params import ParamsError, read_params_file, validate_section
from stages.models import workers
from stages.papers.info_coevolution.claims import censored_by_cap
from stages.papers.info_coevolution.params import InfoCoevolutionParams
from tests.conftest import REPO_ROOT


@pytest.fixture(scope="module")
def section() -> dict:
    return read_params_file(REPO_ROOT / "params.yaml")["info_coevolution"]


def test_a_run_kind_may_have_its_own_cap(section):
    params = validate_section(InfoCoevolutionParams, section, "info_coevolution")
    assert params.schedule(1500).budget == 1500  # the default cap: the whole pool
    assert params.schedule(1500, "info_coevolution").budget == 1500
    assert (
        params.schedule(1500, "info_coevolution_semi").budget == 975
    )  # 65 %: the supervised operating point
    assert censored_by_cap(params, 1500) is None  # the judged run kind can stop and save anywhere
    assert censored_by_cap(params.model_copy(update={"budget": 0.5}), 1500).startswith(
        "Inconclusive by design"
    )
    counted = section | {
        "strategies": section["strategies"] | {"random": {"strategy": "random", "budget": 2000}}
    }
    params = validate_section(InfoCoevolutionParams, counted, "info_coevolution")
    with pytest.raises(
        PipelineError, match=re.escape("info_coevolution.strategies.random.budget 2000 exceeds the pool size")
    ):
        params.schedule(1500, "random")


def test_a_cap_below_the_seed_set_is_refused(section):
    low = section | {"strategies": section["strategies"] | {"random": {"strategy": "random", "budget": 0.01}}}
    with pytest.raises(ParamsError, match=re.escape("seed_fraction 0.05 must be below the budget 0.01")):
        validate_section(InfoCoevolutionParams, low, "info_coevolution")


def threads_and_square(value: int) -> tuple[int, int]:
    return torch.get_num_threads(), value * value


@pytest.mark.parametrize("count", [1, 2])
def test_runs_come_back_in_task_order_each_on_one_thread(count):
    threads = torch.get_num_threads()
    results = workers.map_runs(threads_and_square, [(value,) for value in range(5)], count, "test runs")
    assert results == [(1, value * value) for value in range(5)]
    assert torch.get_num_threads() == threads  # restored here after the in-process runs
