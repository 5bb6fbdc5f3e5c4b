"Geo encoders: the registry's claims hold, every encoder runs through `tbench infer`, and `--geo-compare` pairs them with baselines."
import contextlib, sys
from pathlib import Path
import pandas as pd
import pytest, torch
from conftest import tbench, SHARED
from test_infer_cli import csv_of, check_rows_consistent
from throughput_bench.core import PRECISIONS, BenchError
from throughput_bench.machine.devices import autocast, precision_dtypes
from throughput_bench.backbones.registry import GEO_NAMES, get_model, build, count_params, n_params
from throughput_bench.backbones.geo import has_geo
from throughput_bench.analyse.store import read_results
from throughput_bench.api import infer, train

# a string: judged when a geo test is set up, so that collecting this file (every pytest worker does) imports no geo package
needs_geo = pytest.mark.skipif("not has_geo()", reason="the [geo] extra is not installed (CI installs it)")
RUN = ['--device', 'cpu', '--batch-sizes', '2', '--timed-iters', '3', '--warmup', '1', '--warmup-seconds', '0',
       '--threads', '1', '--no-progress', '--wandb', 'disabled', '--repeats', '1', '--wait-idle', '0']
# the same in this process (no interpreter start, no worker processes: torch and the geo packages are imported once for all)
IN = dict(device='cpu', batch_sizes=[2], timed_iters=3, warmup=1, warmup_seconds=0, threads=1, progress=False, wandb='disabled',
          isolate=False, repeats=1, wait_idle=0, quiet=True)

def tiny_size(info): return 2 * info.patch_size

@contextlib.contextmanager
def quick_random_init(period:int=1_000_003):
    """Tensor.uniform_ and normal_ filled from one seeded block of `period` (a prime) draws, each call at an offset
    from the global generator, scaled to its own bounds: the same distributions, without drawing each of a large
    encoder's 300-475 M values (galileo_large's init: 8.7 s of its 9.5 s build). What these tests check (precisions,
    shapes, parameters, FLOPs) does not depend on the values; the package's own build is untouched."""
    uniform, normal = torch.Tensor.uniform_, torch.Tensor.normal_
    g = torch.Generator().manual_seed(0)
    blocks = {'u': torch.rand(period, generator=g), 'n': torch.randn(period, generator=g)}
    def fill(t, kind):
        b, n, at = blocks[kind], t.numel(), int(torch.randint(period, (1,)))
        with torch.no_grad():
            if not t.is_contiguous(): return t.copy_(b.repeat(-(-(n + at) // period))[at:at + n].view(t.shape))
            flat, done = t.view(-1), 0
            while done < n:  # the block, from `at`, again and again: no copy of the whole tensor's size
                k = min(n - done, period - at)
                flat[done:done + k].copy_(b[at:at + k])
                done, at = done + k, 0
        return t
    def quick_uniform(t, a=0.0, b=1.0, *, generator=None):
        if generator is not None or t.is_meta or not t.is_floating_point(): return uniform(t, a, b, generator=generator)
        return fill(t, 'u').mul_(b - a).add_(a)
    def quick_normal(t, mean=0.0, std=1.0, *, generator=None):
        if generator is not None or t.is_meta or not t.is_floating_point(): return normal(t, mean, std, generator=generator)
        return fill(t, 'n').mul_(std).add_(mean)
    torch.Tensor.uniform_, torch.Tensor.normal_ = quick_uniform, quick_normal
    try: yield
    finally: torch.Tensor.uniform_, torch.Tensor.normal_ = uniform, normal

def forward(model, info, precision, size, batch=2):
    dev = torch.device('cpu')
    dtype, _ = precision_dtypes(precision, dev)
    m = model.to(dtype)
    with torch.no_grad(), autocast(precision, dev):
        return m(torch.randn(batch, info.channels, size, size, dtype=dtype))

@needs_geo
@pytest.mark.parametrize('name', GEO_NAMES)
def test_registry_precisions_are_what_runs_and_the_sweep_measures_each_encoder(name, tmp_path, monkeypatch):
    """Each precision the registry lists runs and gives one finite embedding per sample; each it leaves out fails under a
    cast. Then the same encoder, built once (random init of a large encoder costs 5-12 s of CPU), runs through the sweep
    and reports its real parameter count and FLOPs."""
    info = get_model(name)
    size = tiny_size(info)
    with quick_random_init(): model = build(info, info.channels, size)
    for p in PRECISIONS:
        if p in info.precisions:
            out = forward(model, info, p, size)
            assert out.ndim == 2 and out.shape[0] == 2 and torch.isfinite(out.float()).all(), (p, out.shape)
        else:
            with pytest.raises(RuntimeError): forward(model, info, p, size)
        model.float()
    import throughput_bench.backends.model as M
    monkeypatch.setattr(M, 'build', lambda *a, **kw: model)  # the sweep's build (in this process): this encoder
    # batch 1: what is checked is that it runs, and its parameters and FLOPs (per sample)
    infer([name], input_size=size, precisions=['fp32'], results_dir=tmp_path / 'results', **(IN | {'batch_sizes': [1]}))
    df = read_results(csv_of(tmp_path)).set_index('model_name')
    assert list(df.index) == [name] and df.loc[name, 'status'] == 'ok', df[['status', 'error']].to_string()
    check_rows_consistent(df.reset_index(), 0, iterations=3)
    assert df.loc[name, 'input_size'] == size and df.loc[name, 'input_channels'] == info.channels
    assert df.loc[name, 'params_M'] == pytest.approx(n_params(model), rel=1e-6)  # positional embeddings follow the size
    assert df.loc[name, 'gflops_per_sample'] > 0

@needs_geo
def test_parameter_counts_match_the_seed_tools_file():
    "Random-init encoders have the parameter counts the seed tool published for the same architectures."
    ref = Path(__file__).parent / 'fixtures' / 'throughput-bench' / 'nvidia_h100_nvl.csv'  # the seed tool's file (MIT), copied
    seed = pd.read_csv(ref).drop_duplicates('model_name').set_index('model_name').params_M
    for name in ['dofa_base', 'dofa_large', 'croma_optical', 'croma_sar', 'galileo_nano', 'galileo_base', 'galileo_large']:
        assert count_params(get_model(name)) == pytest.approx(seed[name], rel=2e-3, abs=0.006), name  # the seed rounds to 0.01 M

def test_missing_extra_is_one_line_naming_it(monkeypatch, tmp_path):
    for mod in ('torchgeo', 'torchgeo.models'): monkeypatch.setitem(sys.modules, mod, None)
    with pytest.raises(BenchError, match=r'\.\[geo\]'): build(get_model('dofa_base'))
    code = ("import sys; sys.modules['torchgeo'] = None\n"
            "from throughput_bench.cli import tbench; tbench(['infer', '--models', 'dofa_base', '--device', 'cpu'])")
    import subprocess
    r = subprocess.run([sys.executable, '-c', code], cwd=tmp_path, capture_output=True, text=True)
    assert r.returncode == 2 and r.stderr.count('\n') == 1 and 'geo extra' in r.stderr and '.[geo]' in r.stderr, r.stderr
    assert not (tmp_path / 'results').exists()

def test_backbones_geo_lists_every_encoder_and_senpamae(work, cli):
    r = cli('models', '--geo', cwd=work)
    assert r.returncode == 0, r.stderr
    for name in GEO_NAMES: assert name in r.stdout
    assert '12x128' in r.stdout and 'fp32 amp' in r.stdout
    assert 'not available: senpamae' in r.stdout
    assert max(map(len, r.stdout.splitlines())) <= 100  # it was a 485-column table
    r = cli('infer', '--models', 'senpamae', '--device', 'cpu', cwd=work)
    assert r.returncode == 2 and 'no PyPI package ships it' in r.stderr and r.stderr.count('\n') == 1

@needs_geo
@pytest.mark.slow
def test_infer_at_native_inputs_with_skipped_precisions(work):
    "The issue's models: rows carry each encoder's real input; casts it cannot run are skipped rows."
    # batch 1, fp32: what is checked is each row's input, status and FLOPs (per sample, counted at batch 2 whatever the
    # batch); at these native sizes a forward is seconds. A cast an encoder can run is run by the registry's test above
    # (CROMA's bf16 at native size, emulated on a CPU without bf16 units, cost 40 s here); the casts two cannot run are
    # skipped rows, which build nothing
    with quick_random_init():
        infer(['dofa_base', 'olmoearth_nano', 'galileo_nano', 'croma_optical'], precisions=['fp32'],
              results_dir=work / 'results', **(IN | {'batch_sizes': [1]}))
    infer(['dofa_base', 'galileo_nano'], precisions=['bf16'], results_dir=work / 'results',
          **(IN | {'batch_sizes': [1]}))
    df = read_results(csv_of(work)).set_index(['model_name', 'precision'])
    want = {'dofa_base': (12, 224), 'olmoearth_nano': (12, 128), 'galileo_nano': (10, 64), 'croma_optical': (12, 120)}
    for m, (c, s) in want.items():
        assert tuple(df.loc[(m, 'fp32'), ['input_channels', 'input_size']]) == (c, s), m
        assert df.loc[(m, 'fp32'), 'status'] == 'ok' and df.loc[(m, 'fp32'), 'timesteps'] == 1
    for m in ('dofa_base', 'galileo_nano'):
        row = df.loc[(m, 'bf16')]
        assert row.status == 'skipped' and 'runs under amp' in row.error, row.error
        assert tuple(df.loc[(m, 'bf16'), ['input_channels', 'input_size']]) == want[m], m
    check_rows_consistent(df.reset_index(), 0, iterations=3)
    # FLOPs include attention: CROMA-Optical at 12 x 120 is ~40.4 GFLOPs (the seed tool's file says 40.36)
    assert df.loc[('croma_optical', 'fp32'), 'gflops_per_sample'] == pytest.approx(40.36, rel=0.01)

@needs_geo
@pytest.mark.slow
def test_timesteps(work):
    "Encoders with a time axis take T frames (their FLOPs grow with T); the others are skipped rows that say why."
    models = ['olmoearth_nano', 'galileo_nano', 'prithvi_eo2_100', 'dofa_base', 'resnet18']
    with quick_random_init():
        for t in (1, 2):
            infer(models, input_size=32, timesteps=t, precisions=['fp32'], results_dir=work / 'results', **IN)
    df = read_results(csv_of(work))
    two = df[df.timesteps == 2].set_index('model_name')
    assert (two.loc[['olmoearth_nano', 'galileo_nano', 'prithvi_eo2_100'], 'status'] == 'ok').all()
    assert two.loc['resnet18', 'status'] == 'skipped' and two.loc['resnet18', 'error'] == 'resnet18 takes one timestep'
    assert two.loc['dofa_base', 'status'] == 'skipped'
    one = df[df.timesteps == 1].set_index('model_name')
    for m in ('olmoearth_nano', 'galileo_nano', 'prithvi_eo2_100'):  # tokens double (Prithvi's class token does not): 1.8x and more
        assert two.loc[m, 'gflops_per_sample'] > 1.75 * one.loc[m, 'gflops_per_sample'], m
    check_rows_consistent(df, 0, iterations=3)

@needs_geo
@pytest.mark.slow
def test_geo_compare_pairs_baselines_with_each_geo_shape_and_reports(work, cli, capsys):
    with quick_random_init():
        infer(['resnet18', 'olmoearth_nano', 'galileo_nano'], geo_compare=True, precisions=['fp32'],
              results_dir=work / 'results', **(IN | dict(quiet=False)))
    assert 'phase 2: resnet18 at 2 input shape(s): 12x128px, 10x64px' in capsys.readouterr().out
    df = read_results(csv_of(work))
    assert set(zip(df.model_name, df.input_channels, df.input_size)) == {
        ('olmoearth_nano', 12, 128), ('galileo_nano', 10, 64), ('resnet18', 12, 128), ('resnet18', 10, 64)}
    assert (df.status == 'ok').all()
    r = cli('report', 'results', '-o', 'rep', '--formats', 'png', '--charts', 'geo_compare', cwd=work)
    assert r.returncode == 0, r.stderr
    assert (work / 'rep' / 'geo_compare.png').stat().st_size > 10_000
    assert 'resnet18 @ 12x128' in (work / 'rep' / 'summary.md').read_text()
    r = cli('infer', '--geo-compare', '--input-size', '64', '--device', 'cpu', cwd=work)
    assert r.returncode == 2 and r.stderr.count('\n') == 1 and '--geo-compare' in r.stderr

@needs_geo
@pytest.mark.slow
def test_training_a_geo_encoder(work):
    "A training step on an encoder's embedding; bf16 training is autocast, so Galileo (which cannot be cast) trains in bf16 too."
    with quick_random_init():
        train(['galileo_nano', 'olmoearth_nano'], input_size=16, precisions=['fp32', 'bf16'], results_dir=work / 'results',
              **IN)
    df = read_results(csv_of(work))
    assert (df.status == 'ok').all() and len(df) == 4 and (df['mode'] == 'training').all(), df[['model_name', 'precision', 'status', 'error']]
    check_rows_consistent(df, 0, iterations=3)
