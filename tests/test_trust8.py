"""Files the tool wrote and reads back (the FLOPs, parameter and thread caches, a submission's hardware record, a SLURM
manifest) damaged past the JSON parser's depth, or holding a value changed by hand; and a module missing from a package
that is installed, said as that."""
import json, os, subprocess, sys, time
from pathlib import Path
import pytest
from throughput_bench.core import BenchError, BenchSpec

ROOT = Path(__file__).parents[1]
DEEP = '[' * 100_000  # json.loads raises RecursionError here, which is no ValueError

@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv('TB_CACHE_DIR', str(tmp_path / 'cache'))
    (tmp_path / 'cache').mkdir()
    return tmp_path / 'cache'

@pytest.mark.parametrize('text', [DEEP, '{"k": ' + DEEP])
def test_a_flops_cache_nested_past_the_parsers_depth_is_counted_again(cache, text):
    "Every row of a sweep was an error row (RecursionError) with such a file in the cache."
    from throughput_bench.measure.flops import known_gflops
    (cache / 'gflops.json').write_text(text)
    spec, calls = BenchSpec(model_name='resnet18', input_size=32), []
    assert known_gflops(spec, lambda: calls.append(1) or 0.075) == 0.075 and calls == [1]
    assert known_gflops(spec, lambda: calls.append(1) or 0.075) == 0.075 and calls == [1]  # mended: read back

@pytest.mark.parametrize('bad', [1e308, 5e-324, 0.75, 7])
def test_a_kept_count_changed_by_hand_is_counted_again(cache, bad):
    "A positive number under the right key was read as it was: a row recorded gflops_per_sample 1e308."
    from throughput_bench.measure.flops import known_gflops
    spec = BenchSpec(model_name='resnet18', input_size=32)
    assert known_gflops(spec, lambda: 0.075) == 0.075
    kept = json.loads((cache / 'gflops.json').read_text())
    for changed in ({k: [bad, v[1]] if isinstance(v, list) else bad for k, v in kept.items()},
                    {k: bad for k in kept}):  # the form before checks: a bare number
        (cache / 'gflops.json').write_text(json.dumps(changed))
        assert known_gflops(spec, lambda: 0.075) == 0.075
    calls = []
    assert known_gflops(spec, lambda: calls.append(1) or 0.075) == 0.075 and calls == []  # its own count: read

def test_a_folder_in_place_of_a_cache_file_leaves_no_temporary_file(cache):
    "The count was right, but each process left `gflops.<pid>.tmp` behind, one per configuration of every sweep."
    from throughput_bench.measure.flops import known_gflops
    (cache / 'gflops.json').mkdir()
    assert known_gflops(BenchSpec(model_name='resnet18', input_size=32), lambda: 0.075) == 0.075
    assert sorted(p.name for p in cache.iterdir()) == ['gflops.json']

@pytest.mark.parametrize('text', ['[]', DEEP, 'junk'])
def test_a_damaged_parameter_cache_is_counted_again(cache, text):
    "`tbench models` printed a traceback with `[]` in params_M.json (`list | dict`), and `ValueError` with a string."
    from throughput_bench.backbones.registry import count_params, get_model
    (cache / 'params_M.json').write_text(text)
    n = count_params(get_model('resnet18'))
    assert isinstance(n, float) and 11 < n < 12, n
    kept = json.loads((cache / 'params_M.json').read_text())
    (cache / 'params_M.json').write_text(json.dumps({k: 'lots' for k in kept}))
    assert count_params(get_model('resnet18')) == n

THREADS = '''import json, sys
from throughput_bench.machine.host import cache_root
from throughput_bench.machine.devices import _threads_key, torch_threads
(cache_root() / 'torch_threads.json').write_text(sys.argv[1].replace('KEY', json.dumps(_threads_key())))
print(json.dumps([list(torch_threads()), 'torch' in sys.modules]))
'''

@pytest.mark.parametrize('text,env,said', [
    ('{KEY: [100000, 100000]}', {}, [[1, 1], True]),  # another machine's, or junk: torch is asked
    ('{KEY: [3, 100000]}', {}, [[1, 1], True]),
    (DEEP, {}, [[1, 1], True]),
    ('{KEY: [1, 1]}', {}, [[1, 1], False]),  # what torch said here: read, torch not imported
    ('{KEY: [64, 1]}', {'OMP_NUM_THREADS': '64'}, [[64, 1], False])])  # a count a variable set is torch's own
def test_kept_thread_counts_no_torch_here_could_say_are_asked_again(tmp_path, text, env, said):
    """A count above this machine's CPUs (and any count its variables set), under the key of this machine, was recorded
    in every row (`threads`) and the hardware record; junk nested past the parser's depth was a traceback."""
    fake = tmp_path / 'fake' / 'torch'; fake.mkdir(parents=True)  # a torch that says 1 and 1, imported in no time
    (fake / '__init__.py').write_text("__version__ = '9.9.9'\ndef get_num_threads(): return 1\n"
                                      "def get_num_interop_threads(): return 1\n")
    (fake / 'version.py').write_text("__version__ = '9.9.9'\ncuda = None\n")
    (tmp_path / 'cache').mkdir()
    keep = {k: v for k, v in os.environ.items() if not k.startswith(('OMP_', 'MKL_', 'KMP_', 'GOMP_', 'OPENBLAS_'))}
    r = subprocess.run([sys.executable, '-c', THREADS, text], capture_output=True, text=True, cwd=tmp_path, timeout=120,
                       env=keep | env | {'TB_CACHE_DIR': str(tmp_path / 'cache'),
                                         'PYTHONPATH': os.pathsep.join([str(fake.parent), str(ROOT)])})
    assert r.returncode == 0, r.stderr[-2000:]
    assert json.loads(r.stdout.strip().splitlines()[-1]) == said

def test_a_module_missing_from_an_installed_package_is_not_said_as_the_package_not_installed():
    """`numpy.linalg` missing said "the Python package 'numpy' is not installed: pip install numpy", and a module of
    this package missing (a bug) said throughput_bench was not installed; one without a name said `pip install ?`."""
    from throughput_bench.cli import missing_text
    def said(name):
        try: __import__(name)
        except ModuleNotFoundError as e: return missing_text(e)
    line = said('numpy.no_such_module_here')
    assert "'numpy' is installed, but its module 'numpy.no_such_module_here' is missing" in line, line
    assert line.endswith('pip install --force-reinstall numpy'), line
    line = said('throughput_bench.no_such_module_here')
    assert "'throughput_bench' is installed" in line and 'not installed' not in line, line
    line = said('no_such_package_here.sub')
    assert "'no_such_package_here' is not installed" in line and line.endswith('pip install no_such_package_here')
    line = missing_text(ModuleNotFoundError('No module named x\nFAKE'))
    assert '?' not in line and 'x\\nFAKE' in line and '\n' not in line, line

def test_a_serving_cell_nested_past_the_parsers_depth_is_an_empty_one():
    from throughput_bench.analyse.charts import _json_object
    assert _json_object('{"a": ' + DEEP) == {}

def test_a_slurm_manifest_nested_past_the_parsers_depth_is_one_line(tmp_path):
    from throughput_bench.scale.slurm import load_manifest, manifest_path
    manifest_path(tmp_path).write_text('{"submissions": ' + DEEP)
    with pytest.raises(BenchError, match='not valid JSON'): load_manifest(tmp_path)

def test_a_hardware_record_nested_past_the_parsers_depth_is_named_as_such(tmp_path):
    "It was said as a fault of the CSV (`cpu_amd_epyc.csv: maximum recursion depth exceeded ...`)."
    from throughput_bench.analyse.submit import check_all
    from test_trust7 import copy, reseal
    f = copy('cpu_amd_epyc', tmp_path / 'cpu_amd_epyc')
    (f / 'cpu_amd_epyc_hardware.json').write_text('{"a": ' + DEEP); reseal(f)
    said, _ = check_all(f)
    assert any('cpu_amd_epyc_hardware.json: not readable as JSON' in l for l in said[f]), said[f]

import signal
from throughput_bench.analyse.store import ResultStore

def test_ctrl_c_between_a_rows_write_and_its_fsync_keeps_the_row_then_stops(tmp_path, monkeypatch):
    "CI lost a measured row this way: Ctrl-C after the row was on disk, before fsync returned, took it back out."
    s = ResultStore(tmp_path, 'dev')
    s.append({'model_name': 'resnet18', 'throughput_mean': '1.5'})
    real = os.fsync
    def interrupted(fd): real(fd); os.kill(os.getpid(), signal.SIGINT)
    monkeypatch.setattr(os, 'fsync', interrupted)
    was = signal.signal(signal.SIGINT, signal.default_int_handler)  # a pytest-xdist worker ignores SIGINT
    try:
        with pytest.raises(KeyboardInterrupt): s.append({'model_name': 'vit_tiny_patch16_224', 'throughput_mean': '2.5'})
    finally: signal.signal(signal.SIGINT, was)
    monkeypatch.setattr(os, 'fsync', real)
    assert [r['model_name'] for r in s.rows()] == ['resnet18', 'vit_tiny_patch16_224']
    assert signal.pthread_sigmask(signal.SIG_BLOCK, []) == set()  # nothing left held

def _what_a_worker_imports(out):
    import timm.utils.summary
    try: import wandb; got = 'wandb imports'
    except ImportError: got = 'no wandb'
    Path(out).write_text(f"{got}; timm holds wandb: {hasattr(timm.utils.summary, 'wandb')}")

@pytest.mark.slow
def test_a_worker_imported_timm_without_wandb_and_can_still_import_it(tmp_path):
    "The fork server skips timm's optional W&B import (a second of CPU a sweep); a plugin that imports W&B still can."
    from throughput_bench.scale.sweep import worker_process
    p = worker_process('glibc', _what_a_worker_imports, (str(tmp_path / 'out'),))
    p.start(); p.join(120)
    assert p.exitcode == 0 and (tmp_path / 'out').read_text() == 'wandb imports; timm holds wandb: False'

def test_ctrl_c_to_a_sweep_with_other_threads_keeps_the_row(tmp_path, monkeypatch):
    """A sweep's process has threads besides the main one (its progress, its contention watch): the kernel may give the
    signal to any of them, and Python runs the handler in the main thread, inside the write. The row stays."""
    s = ResultStore(tmp_path, 'dev')
    s.append({'model_name': 'resnet18', 'throughput_mean': '1.5'})
    import threading
    stop = threading.Event(); idle = threading.Thread(target=stop.wait); idle.start()
    real = os.fsync
    def interrupted(fd):
        real(fd)
        for _ in range(20): os.kill(os.getpid(), signal.SIGINT)  # to the process: any of its threads
        time.sleep(0.05)  # the handler runs at the main thread's next bytecode: inside the write
    monkeypatch.setattr(os, 'fsync', interrupted)
    was = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with pytest.raises(KeyboardInterrupt): s.append({'model_name': 'vit_tiny_patch16_224', 'throughput_mean': '2.5'})
    finally: signal.signal(signal.SIGINT, was); stop.set(); idle.join()
    monkeypatch.setattr(os, 'fsync', real)
    assert [r['model_name'] for r in s.rows()] == ['resnet18', 'vit_tiny_patch16_224']
    assert signal.getsignal(signal.SIGINT) is was

@pytest.mark.slow  # a sweep's start, interrupted
def test_ctrl_c_while_the_fork_server_imports_is_one_line_and_leaves_no_process(tmp_path):
    "A Ctrl-C to the terminal's process group while the fork server imports torch printed its traceback from the server."
    import psutil
    from conftest import FAST, BIN
    p = subprocess.Popen([str(BIN / 'tbench'), 'infer', '--models', 'resnet18', *FAST], cwd=tmp_path, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, start_new_session=True,
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))  # a pytest-xdist worker ignores
    me = psutil.Process(p.pid)                                                             # SIGINT: so would its child
    for _ in range(600):  # until the fork server runs (it is importing)
        try:
            if any('forkserver' in ' '.join(k.cmdline()) for k in me.children()): break
        except psutil.Error: pass  # a process ended while looked at
        if p.poll() is not None: break
        time.sleep(0.05)
    time.sleep(0.3)
    os.killpg(p.pid, signal.SIGINT)  # as a terminal's Ctrl-C: every process of the group
    out, err = p.communicate(timeout=120)
    assert p.returncode == 130 and 'Traceback' not in err and 'KeyboardInterrupt' not in err, err
    assert 'interrupted' in err and len(err.strip().splitlines()) <= 3, err
    time.sleep(1)
    left = []
    for q in psutil.process_iter(['status']):
        try:
            if q.info['status'] != psutil.STATUS_ZOMBIE and os.getpgid(q.pid) == p.pid: left.append(q.pid)
        except (ProcessLookupError, psutil.Error): pass  # ended while looked at
    assert not left, left
