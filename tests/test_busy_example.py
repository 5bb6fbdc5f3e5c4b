"Issue 44: the first example on a busy machine: the time-capped path judged like for like, the batch that ran recorded."
import pandas as pd
import pytest
from conftest import FAST_API
from throughput_bench import infer

def test_the_time_capped_path_passes_the_gate_in_every_precision(work):
    """A time cap (every step predicted over its limit) runs batch 1 instead of the default 32: each precision's
    outputs are compared image for image at the batch that ran (the gate compared 1 image against 8: `wrong`, inf), and
    the row says batch 1, asked 32."""
    kw = {k: v for k, v in FAST_API.items() if k != 'batch_sizes'} | dict(results_dir=work / 'results',
                                                                          max_step_seconds=1e-4)
    df = infer(['resnet18'], **(kw | dict(precisions=['fp32', 'bf16', 'fp16', 'amp'])))
    ran = df[df.status.ne('skipped')]
    assert len(ran) >= 2 and ran.status.eq('ok').all(), ran[['precision', 'status', 'error']].to_string()
    assert ran.batch_size.eq(1).all() and ran.batch_requested.eq(32).all() and ran.batch_reason.eq('time-cap').all()
    gated = ran[ran.precision.ne('fp32')]
    assert (gated.max_rel_diff <= gated.tolerance).all()

import subprocess, sys, time
from throughput_bench.api import rerun_note, rerun_command
from throughput_bench.result import BenchResult
from throughput_bench.api import SweepOptions
from throughput_bench.scale import sweep as S

def row(model, precision, lo, hi, contended=False):
    return BenchResult(model_name=model, precision=precision, throughput_mean=100.0, throughput_ci_low=lo,
                       throughput_ci_high=hi, contended=contended, repeats=3)

def test_the_end_says_once_which_rows_to_measure_again_and_how():
    "Rows too wide to rank (±83%, ±203%) or beside other work: one note naming them and the command for a quiet host."
    o = SweepOptions(models=['resnet18', 'vit_tiny_patch16_224'], device='cpu', budget_minutes=2)
    new = [row('resnet18', 'fp32', 17.0, 183.0), row('resnet18', 'bf16', 0.0, 303.0), row('vit_tiny_patch16_224', 'fp32', 97.0, 103.0),
           row('vit_tiny_patch16_224', 'bf16', 98.0, 102.0, contended=True)]
    note = rerun_note(new, o, 404.0)
    *words, command = note.splitlines()  # within 100 columns; the command whole, on a line of its own
    assert all(len(l) <= 100 for l in words) and command == '  ' + rerun_command(new[:2] + new[3:], o), note
    note = ' '.join(note.split())
    assert note.startswith('budget: 2 min; the run took 6 min 44 s: on a host this busy no budget buys a usable '
                           'interval. 3 row(s)'), note
    assert 'resnet18 fp32 ±83%' in note and 'resnet18 bf16 ±203%' in note and 'vit_tiny_patch16_224 bf16 ±2%' in note
    assert note.endswith('tbench infer --models resnet18 vit_tiny_patch16_224 --precisions fp32 bf16 --device cpu '
                         '--rerun --wait-idle 60'), note
    assert rerun_note(new[2:3], o, 100.0) == ''  # narrow, quiet, within its budget: nothing to say
    assert rerun_note(new[2:3], o, 400.0).startswith('budget: 2 min; the run took 6 min 40 s: each configuration')
    quiet = ' '.join(rerun_note(new[:1], o, 161.0).split())  # wide from too few processes on a quiet host: more time, not a quiet host
    assert quiet.startswith('budget: 2 min; the run took 2 min 41 s: each configuration needs at least 3') and \
        'Measure them again with more time' in quiet, quiet

def test_after_the_first_round_a_budget_says_what_the_rest_will_cost():
    "Eight configurations whose first processes took 12 s each: 16 more are needed, 3 min 12 s, past a 2-minute budget."
    now = time.monotonic()
    class Run(S.SweepRun):
        def __init__(self): pass
    r = Run()
    r.rep = S.Repeats(most=20, least=3, ci=0.03, seconds=13.5, deadline=now - 96 + 120, budget_s=120)
    class Spec:
        def __init__(self, i): self.i = i
        def key(self): return self.i
    r.mine = [Spec(i) for i in range(8)]
    r.parts = {i: [object()] for i in range(8)}; r.spent = {i: 12.0 for i in range(8)}
    r.final, r.busy = {}, {0: ['host busy']}
    f = r.forecast()
    assert f.startswith('budget: the first round took 1 min 36 s (8 configurations, 12 s a worker process, beside other work)'), f
    assert 'the 16 processes left (3 a configuration' in f and 'need about 3 min 12 s' in f and 'past its 2 min budget' in f
    r.rep.deadline = now + 600  # plenty of budget left on a busy host: the time it ends
    f = r.forecast()
    assert 'so the run ends about ' in f and f.endswith(', within its 2 min budget'), f
    r.busy = {}  # and on a quiet one: nothing to say
    assert r.forecast() == ''

@pytest.fixture
def two_busy_loops():
    ps = [subprocess.Popen([sys.executable, '-c', 'import time\nt = time.time()\nwhile time.time() - t < 300: pass'])
          for _ in range(2)]
    time.sleep(0.3)
    yield ps
    for p in ps: p.kill(); p.wait()

@pytest.mark.alone  # it makes the host busy: nothing may run beside it
@pytest.mark.slow
def test_the_first_example_on_a_busy_host(work, two_busy_loops):
    """The README's first example, scaled to CI (one model at 64 px, the two precisions that came out `wrong`, a
    20-second budget), beside two busy loops on this 2-core host: no row is wrong, each says the batch it ran, and the
    end says what to measure again and how."""
    from conftest import tbench
    import torch
    from throughput_bench.analyse.store import ResultStore
    from throughput_bench.machine.hardware import device_slug
    st = ResultStore(work / 'results', device_slug(torch.device('cpu')))  # a process measured before: 2 s (the plan's cost)
    S.keep_cost(st, S.expand(['resnet18'], ['fp32'], ['none'], [2], device='cpu')[0], 2.0)
    r = tbench('infer', '--models', 'resnet18', '--device', 'cpu', '--input-size', '64', '--precisions', 'fp16', 'amp',
               '--budget-minutes', '0.33', '--max-step-seconds', '0.05', '--timed-seconds', '0.3', '--warmup-seconds', '0',
               '--no-progress', '--wandb', 'disabled', '--wait-idle', '0', cwd=work, timeout=600)
    assert r.returncode == 0, r.stderr
    df = pd.read_csv(next((work / 'results').glob('*.csv')))
    assert not df.status.eq('wrong').any(), df[['precision', 'status', 'error']].to_string()
    ran = df[df.status.eq('ok')]
    assert len(ran) >= 1 and (ran.batch_size <= ran.batch_requested).all()
    assert (ran[ran.batch_reason.eq('time-cap')].error.str.extract(r'ran (\d+)$')[0].astype(int) == ran.batch_size[ran.batch_reason.eq('time-cap')]).all()
    assert df.contended.any(), df[['precision', 'contended', 'busy_share']].to_string()
    assert 'Measure them again on a quiet host: tbench infer --models resnet18 --precisions' in ' '.join(r.stdout.split())
    assert ' '.join(r.stdout.split()).count('Measure them again on a quiet host') == 1  # said once (wrapped anywhere)
