import os, sys, subprocess
from pathlib import Path
import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / 'shared'
BIN = Path(sys.executable).parent

# Tiny, fast configurations: 32 px, batch 2, a fixed 0.3 s timed phase, one worker process, no waiting for a quiet host.
FAST = ['--device', 'cpu', '--input-size', '32', '--batch-sizes', '2', '--precisions', 'fp32',
        '--timed-seconds', '0.3', '--warmup', '1', '--warmup-seconds', '0', '--threads', '1', '--no-progress', '--wandb', 'disabled',
        '--repeats', '1', '--wait-idle', '0']
# The same for the Python API
FAST_API = dict(device='cpu', input_size=32, batch_sizes=[2], precisions=['fp32'], timed_seconds=0.3, warmup=1, warmup_seconds=0,
                threads=1, progress=False, wandb='disabled', repeats=1, wait_idle=0, quiet=True)

def tbench(*args, cwd, cmd='tbench', timeout=300, **kw):
    "Run a console command in a subprocess; returns CompletedProcess."
    env = os.environ | {'PYTHONUNBUFFERED': '1'}
    return subprocess.run([str(BIN / cmd), *map(str, args)], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout, env=env, **kw)

@pytest.fixture
def work(tmp_path): return tmp_path
