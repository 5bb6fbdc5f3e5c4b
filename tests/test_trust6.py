"""Records beside the results that a careless or hostile hand changed: the costs record `--budget-minutes` plans from,
the drift record, the hardware record and the claims, each replaced by deep JSON, a device or a pipe; and a budget too
large to count in seconds. None of them may cost a traceback, a hang or the sweep's rows."""
import json, os, threading
from pathlib import Path
import pytest
import torch
from conftest import FAST
from throughput_bench.scale import sweep as S
from throughput_bench.scale.launch import SweepOptions, check_together
from throughput_bench.analyse.store import ResultStore, UnreadableFile
from throughput_bench.measure import drift as D
from throughput_bench.machine.hardware import device_slug
from throughput_bench.core import BenchError

DEEP = '[' * 100_000 + ']' * 100_000   # valid-looking JSON nested past the parser's recursion limit

def spec(): return S.expand(['resnet18'], ['fp32'], ['none'], [32], device='cpu')[0]

@pytest.mark.parametrize('minutes', [1e308, 1e7])
def test_a_budget_too_large_to_count_is_refused_before_measuring(minutes):
    "1e308 minutes is infinite seconds: the sweep measured its first round, then failed formatting the budget."
    with pytest.raises(BenchError, match='--budget-minutes must be at most'):
        check_together(SweepOptions(models=['resnet18'], device='cpu', budget_minutes=minutes))
    check_together(SweepOptions(models=['resnet18'], device='cpu', budget_minutes=600))   # ten hours: fine

def test_a_budget_too_large_to_count_is_one_line_and_exit_2(cli, tmp_path):
    i = FAST.index('--repeats'); fast = FAST[:i] + FAST[i + 2:]
    r = cli('infer', '--models', 'resnet18', *fast, '--budget-minutes', '1e308', cwd=tmp_path)
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and 'Traceback' not in r.stderr, r.stderr
    assert r.stderr.startswith('tbench infer: error: --budget-minutes must be at most'), r.stderr
    assert not list(tmp_path.glob('results/*.csv'))
