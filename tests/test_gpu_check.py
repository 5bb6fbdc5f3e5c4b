"Issue 41: bench/gpu_check.sh, the one command for a short GPU window: its limits, its budget and its one tarball, checked on a CPU."
import subprocess, sys, tarfile
from conftest import ROOT

SCRIPT = ROOT / 'bench' / 'gpu_check.sh'

def run(out, **env):
    import os
    return subprocess.run(['bash', str(SCRIPT), str(out)], capture_output=True, text=True, timeout=120,
                          env=os.environ | {'PYTHON': sys.executable} | env)

def members(tgz):
    with tarfile.open(tgz) as t: return {m.name.lstrip('./') for m in t.getmembers()}, t

def steps(tgz):
    with tarfile.open(tgz) as t: return t.extractfile('./logs/steps.txt').read().decode().splitlines()

def test_each_step_runs_under_its_limit_and_the_budget_and_one_tarball_comes_back(tmp_path):
    r = run(tmp_path, GPU_CHECK_STEPS='selftest')
    assert r.returncode == 0, r.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ['gpu_check.tgz']
    lines = steps(tmp_path / 'gpu_check.tgz')
    assert lines[0].startswith('quick rc=0 ok') and '(limit 5s)' in lines[0]
    assert lines[1].startswith('slow rc=124 timed out') and '(limit 1s)' in lines[1]  # a 30 s sleep stopped at its 1 s
    assert lines[2].startswith('late skipped: out of time')                          # nothing starts past the budget
    names, _ = members(tmp_path / 'gpu_check.tgz')
    assert {'logs/quick.log', 'logs/slow.log', 'logs/steps.txt'} <= names
    with tarfile.open(tmp_path / 'gpu_check.tgz') as t: assert t.extractfile('./logs/quick.log').read() == b'fine\n'

def test_without_a_gpu_every_step_is_skipped_and_said(tmp_path):
    import torch
    if torch.cuda.is_available(): import pytest; pytest.skip('a CUDA device is here: the check would run')
    out = tmp_path / 'out'
    r = run(out, GPU_CHECK_WHEELS=str(tmp_path / 'no-wheels'))  # not this checkout's bench/gpu_wheels (Python 3.12's)
    assert r.returncode == 0, r.stderr
    tmp_path = out
    assert steps(tmp_path / 'gpu_check.tgz') == ['no CUDA device: every GPU step skipped']
    names, _ = members(tmp_path / 'gpu_check.tgz')
    assert {'logs/nvidia-smi.txt', 'logs/pip-freeze.txt', 'logs/cuda.txt'} <= names

def test_the_carried_wheels_are_installed_whichever_steps_are_named(tmp_path):
    "On the H200 a run naming its steps skipped the install, so every step failed with `tbench` not found."
    wheels = tmp_path / 'wheels'; wheels.mkdir(); (wheels / 'not_a-0.0-py3-none-any.whl').write_bytes(b'junk')
    out = tmp_path / 'out'
    r = run(out, GPU_CHECK_WHEELS=str(wheels), GPU_CHECK_STEPS='map,serve')
    assert r.returncode == 0, r.stderr
    lines = steps(out / 'gpu_check.tgz')
    assert lines[0].startswith('install rc=') and 'limit 120s' in lines[0]  # tried (this junk wheel fails: said)
