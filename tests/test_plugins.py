"A backend from another installed package (tests/plugins/tbench_torchscript, found through its entry point) runs like a built-in one: measured in the forked workers, checked by the correctness gate, screened by tune, served, and its version recorded."
import importlib, io, json, os, shutil, subprocess, sys, importlib.metadata as md
from pathlib import Path
import numpy as np, pytest
from conftest import tbench, FAST
from throughput_bench.core import BenchSpec, BenchError, BACKEND_GROUP
from throughput_bench.backends import base
from throughput_bench.analyse.store import read_results

PLUGIN = Path(__file__).parent / 'plugins' / 'tbench_torchscript'

@pytest.fixture(scope='module', autouse=True)
def plugin_installed(tmp_path_factory):
    """The test backend's package, found through its entry point: where it is not installed, the tests install it into a
    folder of their own (no network: it builds from its source here) and put that folder on the path, this process's
    and every command's it starts. Where that cannot be done they skip with the reason; on CI they fail."""
    if 'torchscript' in {ep.name for ep in md.entry_points(group=BACKEND_GROUP)}: return
    target, src = tmp_path_factory.mktemp('plugin'), tmp_path_factory.mktemp('plugin_src') / PLUGIN.name
    shutil.copytree(PLUGIN, src, ignore=shutil.ignore_patterns('build', '*.egg-info'))  # a build of its own: no shared
    r = subprocess.run([sys.executable, '-m', 'pip', 'install', '-q', '--no-deps', '--no-build-isolation', '--target',
                        str(target), str(src)], capture_output=True, text=True, timeout=300)  # build/ across workers
    if r.returncode != 0:
        why = f"could not install the test backend package {PLUGIN.name}: {(r.stderr.strip().splitlines() or ['?'])[-1]}"
        if os.environ.get('CI'): pytest.fail(why)
        pytest.skip(why)
    sys.path.insert(0, str(target)); importlib.invalidate_caches()
    os.environ['PYTHONPATH'] = os.pathsep.join([str(target)] + [p for p in [os.environ.get('PYTHONPATH')] if p])
    base.BACKENDS.update({k: v for k, v in base.plugin_backends().items() if k not in base.BACKENDS})
    assert 'torchscript' in base.BACKENDS, r.stdout + r.stderr

def test_the_entry_point_names_the_backend_without_importing_it():
    assert base.BACKENDS['torchscript'] == 'tbench_torchscript' and base.plugin_backends()['torchscript'] == 'tbench_torchscript'
    b = base.get_backend('torchscript')
    assert b.name == 'torchscript' and b.unsupported(BenchSpec('resnet18', input_channels=3, input_size=32)) is None

def test_a_plugin_backend_is_measured_in_the_workers_and_checked_against_eager(tmp_path):
    r = tbench('infer', '--models', 'resnet18', '--backends', 'torchscript', *FAST, cwd=tmp_path)
    assert r.returncode == 0, r.stderr[-2000:]
    row = read_results(tmp_path / 'results').iloc[-1]
    assert (row.backend, row.status) == ('torchscript', 'ok') and row.throughput_mean > 0
    assert row.backend_settings.startswith('jit=trace+freeze') and 0 <= row.max_rel_diff <= 1e-3  # the gate ran against fp32 eager
    hw = json.loads(next((tmp_path / 'results').glob('*_hardware.json')).read_text())
    assert hw['runtimes']['tbench-torchscript'] == md.version('tbench-torchscript'), hw.get('runtimes')  # its version, as a runtime's

def test_tune_screens_what_the_plugin_says_and_takes_it_by_default():
    from throughput_bench.studies.tune import candidates
    words = candidates('cpu', 2, ['pytorch', 'torchscript'], [1], ['fp32', 'bf16'])
    assert [w for w in words if 'torchscript' in w] == ['backend=torchscript batch=1 threads=2 precision=fp32',
                                                        'backend=torchscript batch=1 threads=1 precision=fp32']  # fp32 only: what it runs

def test_a_plugin_backend_is_served(tmp_path):
    import httpx, torch
    from throughput_bench.serve.serving import ServerProcess, npy_bytes
    from throughput_bench.backends.model import build_model
    x = np.random.default_rng(1).standard_normal((2, 3, 32, 32)).astype(np.float32)
    with ServerProcess('--model', 'resnet18', '--input-size', '32', '--device', 'cpu', '--backend', 'torchscript', ready_timeout=240) as s:
        r = httpx.post(f"{s.url}/v1/infer", files={'input_array': ('input_array', npy_bytes(x))}, timeout=60)
        meta = httpx.get(f"{s.url}/v1/metadata", timeout=10).json()
    assert r.status_code == 200 and meta['backend'] == 'torchscript', r.text
    _, _, m = build_model(BenchSpec('resnet18', input_channels=3, input_size=32, device='cpu'))
    with torch.inference_mode(): ref = m.eval()(torch.from_numpy(x)).numpy()
    got = np.load(io.BytesIO(r.content))
    assert got.shape == ref.shape and np.abs(got - ref).max() <= 1e-3 * np.abs(ref).max()

def test_a_plugin_that_does_not_load_is_one_line(monkeypatch):
    monkeypatch.setitem(base.BACKENDS, 'broken', 'no_such_module_for_tbench')
    with pytest.raises(BenchError, match="backend 'broken' .* could not be loaded: ModuleNotFoundError"): base.get_backend('broken')

def test_the_hardware_record_lists_the_builtin_backends_packages():
    from throughput_bench.machine.hardware import RUNTIME_PACKAGES
    builtin = [n for n, where in base.BACKENDS.items() if where.startswith('throughput_bench.')]
    assert set(RUNTIME_PACKAGES) == {p for n in builtin for p in base.get_backend(n).packages}
