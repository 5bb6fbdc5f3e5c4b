"DDP training throughput through torchrun on CPU (gloo): two processes of one thread each, and a rank killed mid-run."
import os, signal, subprocess, sys, time
import psutil, pytest
from conftest import BIN
from throughput_bench.api import train
from throughput_bench.analyse.store import read_results

pytestmark = pytest.mark.slow  # servers, browsers, launches: the full run, not the fast tier

TINY = dict(device='cpu', input_size=32, batch_sizes=[4], precisions=['fp32'], warmup=1, warmup_seconds=0, threads=1,
            progress=False, wandb='disabled', repeats=1, wait_idle=0, quiet=True, ddp_timeout=60)

def test_two_ranks_give_a_row_with_the_group_throughput_and_its_scaling(tmp_path):
    df = train(['resnet18'], nproc=2, timed_iters=6, breakdown=True, results_dir=tmp_path, **TINY)
    assert list(df.world_size) == [1, 2] and (df.status == 'ok').all(), df[['world_size', 'status', 'error']]
    one, two = df.iloc[0], df.iloc[1]
    assert two.ddp_backend == 'gloo' and two.batch_size == 4 and two.threads == 1 and two.iterations == 6
    # global img/s: the samples of both ranks (iterations x per-process batch x 2) over the slowest rank's seconds, to the stored rounding
    assert two.throughput_mean == pytest.approx(6 * 4 * 2 / two.seconds_measured, rel=1e-5)
    assert two.throughput_per_device == pytest.approx(two.throughput_mean / 2, rel=1e-5)
    assert one.throughput_mean == pytest.approx(6 * 4 / one.seconds_measured, rel=1e-5)
    # efficiency against world size 1 of the same configuration, measured in the same sweep
    assert two.scaling_efficiency == pytest.approx(two.throughput_mean / (2 * one.throughput_mean), rel=1e-5)
    assert 0 < two.scaling_efficiency <= 1.2
    parts = [two[f'breakdown_{p}_pct'] for p in ('data', 'forward', 'backward', 'allreduce', 'optimizer')]
    assert all(p >= 0 for p in parts) and sum(parts) == pytest.approx(100, abs=1e-3)
    # a second call measures nothing: both world sizes are stored
    again = train(['resnet18'], nproc=2, timed_iters=6, breakdown=True, results_dir=tmp_path, **TINY)
    assert list(again.measured) == ['stored', 'stored']

def _rank_process(root:psutil.Process, rank:int):
    "The DDP rank `rank` among `root`'s descendants (our own processes only), or None."
    for p in root.children(recursive=True):
        try:
            if 'throughput_bench.ddp' in ' '.join(p.cmdline()) and p.environ().get('RANK') == str(rank): return p
        except (psutil.NoSuchProcess, psutil.AccessDenied): continue
    return None

def test_a_killed_rank_ends_the_group_with_an_error_row_naming_it(tmp_path):
    timeout = 30
    cmd = [str(BIN / 'tbench'), 'train', '--models', 'resnet18', '--nproc', '2', '--device', 'cpu', '--input-size', '32', '--batch-sizes', '4',
           '--precisions', 'fp32', '--threads', '1', '--timed-seconds', '600', '--warmup', '1', '--warmup-seconds', '0', '--repeats', '1',
           '--wait-idle', '0', '--wandb', 'disabled', '--no-progress', '--ddp-timeout', str(timeout)]
    proc = subprocess.Popen(cmd, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        root, victim, t0 = psutil.Process(proc.pid), None, time.monotonic()
        # the world-size-1 baseline runs first (600 s timed: it would run to its limit), so kill its only rank, then rank 1 of the pair
        while victim is None and time.monotonic() - t0 < 180 and proc.poll() is None:
            victim = _rank_process(root, 0); time.sleep(0.5)
        assert victim is not None, "the world-size-1 rank never started"
        time.sleep(2); victim.kill()
        victim, t0 = None, time.monotonic()
        while victim is None and time.monotonic() - t0 < 180 and proc.poll() is None:
            victim = _rank_process(root, 1); time.sleep(0.5)
        assert victim is not None, "rank 1 of the two-process group never started"
        time.sleep(3); victim.kill()
        out, err = proc.communicate(timeout=timeout + 120)   # the group's stated timeout bounds the wait, plus start-up
    finally:
        if proc.poll() is None: proc.kill(); proc.communicate()
    df = read_results(tmp_path / 'results')
    assert list(df.world_size) == [1, 2] and (df.status == 'error').all(), df[['world_size', 'status', 'error']]
    assert 'rank 0 was killed by SIGKILL' in df.error[0] and 'rank 1 was killed by SIGKILL' in df.error[1], list(df.error)
    assert f'process-group timeout {timeout} s' in df.error[1]
    assert not [p for p in psutil.Process().children(recursive=True) if 'throughput_bench.ddp' in ' '.join(p.cmdline())]  # no rank left behind

def test_a_clusters_own_torchrun_launch_takes_tbench_trains_flags_and_resumes(tmp_path):
    "torchrun -m throughput_bench.ddp with tbench train's flags: rank 0 stores the row; launched again, it measures nothing."
    cmd = [str(BIN / 'torchrun'), '--standalone', '--nproc-per-node', '2', '-m', 'throughput_bench.ddp', '--models', 'resnet18', '--device', 'cpu',
           '--input-size', '32', '--batch-sizes', '4', '--precisions', 'fp32', '--timed-iters', '4', '--warmup', '1', '--warmup-seconds', '0', '--threads', '1']
    r = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and '1 new row(s), 0 already stored' in r.stdout, r.stdout + r.stderr[-2000:]
    df = read_results(tmp_path / 'results')
    assert len(df) == 1 and df.world_size[0] == 2 and df.iterations[0] == 4 and df.status[0] == 'ok'
    assert df.throughput_mean[0] == pytest.approx(4 * 4 * 2 / df.seconds_measured[0], rel=1e-5)
    r = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and '0 new row(s), 1 already stored' in r.stdout, r.stdout
