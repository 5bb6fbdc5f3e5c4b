"`tbench train`, `ready-steady-go` and `tbench hw --ceilings`, end to end on CPU."
import json, math
import pytest
from conftest import tbench, FAST
from throughput_bench.analyse.store import read_results
from throughput_bench.core import BenchError

def only_csv(work):
    (f,) = sorted((work / 'results').glob('*.csv')); return f

@pytest.mark.slow
def test_train_adamw_breakdown_flops_mfu(work, cli):
    r = cli('train', '--models', 'resnet18', *FAST, '--optimizers', 'sgd', 'adamw', '--breakdown', cwd=work)
    assert r.returncode == 0, r.stderr
    assert 'plan: 2 to run' in r.stdout
    df = read_results(only_csv(work))
    assert list(df['mode']) == ['training'] * 2 and list(df.optimizer) == ['sgd', 'adamw'] and (df.status == 'ok').all()
    assert ((df.throughput_mean - df.iterations * df.batch_size / df.seconds_measured).abs() < 1e-5 * df.throughput_mean).all()
    shares = df[['breakdown_data_pct', 'breakdown_forward_pct', 'breakdown_backward_pct', 'breakdown_optimizer_pct']]
    assert ((shares.sum(axis=1) - 100).abs() < 1e-3).all() and (shares >= 0).all().all()
    assert (df.breakdown_backward_pct > 0).all() and (df.breakdown_forward_pct > 0).all()
    assert (df.gflops_per_sample > 0).all()
    # mfu_measured comes from the GEMM ceiling cached in the hardware JSON; both MFUs are fractions in (0, 1]
    hw = json.loads(next((work / 'results').glob('*_hardware.json')).read_text())
    assert hw['ceilings']['gemm_tflops']['fp32'] > 0
    assert ((df.mfu_measured > 0) & (df.mfu_measured <= 1)).all()
    assert (df.mfu.isna() | ((df.mfu > 0) & (df.mfu <= 1))).all()
    assert (abs(df.tflops_achieved - df.throughput_mean * df.gflops_per_sample / 1e3) < 1e-6).all()

@pytest.mark.slow
def test_training_flops_are_about_three_times_inference(work, cli):
    for task in ('infer', 'train'):  # in this process: what is checked is the rows' FLOPs
        assert cli(task, '--models', 'resnet18', *FAST, cwd=work).returncode == 0
    df = read_results(only_csv(work)).set_index('mode')
    ratio = df.gflops_per_sample['training'] / df.gflops_per_sample['inference']
    assert 2.5 < ratio < 3.5, ratio

@pytest.mark.slow
def test_ready_steady_go(work, cli):
    r = tbench('--model', 'resnet18', '--bs', '4', '--size', '32', '--n_seconds', '0.5', '--run_number', '2', '--wnb', 'offline', '--wnb_run', 'rsg-resnet18-bs4',
               cwd=work, cmd='ready-steady-go')
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert 'samples/s' in lines[-9] and [l.split(':')[0] for l in lines[-3:]] == ['duration', 'n_items', 'throughput']
    kv = dict(l.split(': ', 1) for l in lines[-8:])
    df = read_results(only_csv(work))
    assert int(kv['n_items']) == df.iterations[0] * 4 and math.isclose(float(kv['throughput']), int(kv['n_items']) / float(kv['duration']), rel_tol=1e-3)
    assert (kv['model'], kv['bs'], kv['fp16']) == ('resnet18', '4', 'False')
    # logged through the same W&B code as tbench: the row's run_id is the offline run's id
    from throughput_bench.analyse.tracking import read_offline_runs
    runs = read_offline_runs(work / 'wandb')
    assert list(df['mode']) == ['training'] and df.batch_size[0] == 4 and list(runs.run_id) == [df.run_id[0]]
    assert runs.throughput_mean[0] == df.throughput_mean[0]
    from throughput_bench.analyse.tracking import inspect_run, offline_run_dirs
    assert inspect_run(offline_run_dirs(work / 'wandb')[0])['name'] == 'rsg-resnet18-bs4'  # --wnb_run names the run
    printed = float(lines[-9].split(': ')[-1].split()[0])
    assert math.isclose(printed, df.throughput_mean[0], rel_tol=1e-3, abs_tol=0.005)  # printed to 2 decimals: 0.98 of 0.97847
    # n_batches fixes the iteration count; a second call is a new measurement, not a skip
    # (in this process: the first was a process of its own)
    r = cli('--model', 'resnet18', '--bs', '4', '--size', '32', '--n_batches', '6', cwd=work, cmd='ready-steady-go')
    assert r.returncode == 0, r.stderr
    df = read_results(only_csv(work))
    assert len(df) == 2 and df.iterations[1] == 6

@pytest.mark.parametrize('args,msg', [
    (['--model', 'resnet18', '--bs', '0', '--n_seconds', '1'], 'must be > 0'),
    (['--model', 'resnet18', '--n_seconds', '1', '--n_batches', '3'], 'exactly one of'),
    (['--model', 'resnet18'], 'exactly one of'),
    (['--model', 'resnet18', '--n_batches', '0'], 'exactly one of'),  # 0 means unset, as in ready-steady-go
    (['--model', 'resnet18', '--n_batches', '-1'], 'must be >= 0'),
    (['--model', 'resnet18', '--n_seconds', '1', '--wnb', 'cloud'], "--wnb 'cloud': use disabled, offline, online or auto"),
])
def test_ready_steady_go_bad_input(work, args, msg, cli):
    r = cli(*args, cwd=work, cmd='ready-steady-go')
    assert r.returncode == 2 and r.stderr.count('\n') == 1 and msg in r.stderr, r.stderr
    assert not (work / 'results').exists()

def test_train_fp16_is_a_skipped_row_and_bad_optimizer(work, cli):
    r = cli('train', '--models', 'resnet18', *[a if a != 'fp32' else 'fp16' for a in FAST], cwd=work)
    assert r.returncode == 0 and '1 skipped' in r.stdout
    df = read_results(only_csv(work))
    assert df.status[0] == 'skipped' and 'amp' in df.error[0]
    r = cli('train', '--models', 'resnet18', *FAST, '--optimizers', 'lamb', cwd=work)  # the flag's choices (as --precisions)
    assert r.returncode == 2 and "invalid choice: 'lamb'" in r.stderr and len(r.stderr.strip().splitlines()) == 1
    from throughput_bench.api import train  # the API says it in its own words
    with pytest.raises(BenchError, match="unknown optimizer 'lamb'"): train(['resnet18'], optimizers=['lamb'])

@pytest.mark.slow
def test_hw_ceilings(work, cli, monkeypatch):
    """In this process, one small GEMM shape (not the four a machine's ceilings are the best of) timed 0.3 s as a sweep's
    own ceilings are (not 1 s): the command's path is checked; the shapes' own figures are notebook 14's."""
    import functools
    from throughput_bench.scale import sweep as S
    from throughput_bench.measure import flops as F
    monkeypatch.setattr(S, 'measure_ceilings', functools.partial(S.measure_ceilings, quick=True))
    monkeypatch.setitem(F.CEILING_SHAPES, 'cpu', [(256, 256, 256)])
    monkeypatch.setenv('TB_CACHE_DIR', str(work / 'cache'))  # kept there, not as this machine's ceilings
    r = cli('hw', '--device', 'cpu', '--ceilings', cwd=work)
    assert r.returncode == 0, r.stderr
    assert 'GEMM fp32' in r.stdout and 'GFLOP/s' in r.stdout and 'GB/s' in r.stdout
    hw = json.loads(next((work / 'results').glob('*_hardware.json')).read_text())
    assert hw['ceilings']['gemm_tflops']['fp32'] > 0 and hw['ceilings']['copy_gbps'] > 0
