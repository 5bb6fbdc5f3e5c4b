import os, sys, shutil, subprocess, threading, functools, contextlib
from http.server import ThreadingHTTPServer, SimpleHTTPRequestHandler
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
    env = os.environ | {'PYTHONUNBUFFERED': '1'} | kw.pop('env', {})
    return subprocess.run([str(BIN / cmd), *map(str, args)], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout, env=env, **kw)

@pytest.fixture
def work(tmp_path): return tmp_path

@pytest.fixture
def cli(capsys, monkeypatch):
    "A console command run in this process, for what ends before measuring (bad input, errors): no interpreter start, no imports again."
    import signal
    from throughput_bench import cli as C
    def run(*args, cwd, cmd='tbench'):
        monkeypatch.chdir(cwd)
        fn = {'tbench': C.tbench, 'throughput-bench': C.throughput_bench, 'ready-steady-go': C.ready_steady_go}[cmd]
        old = signal.getsignal(signal.SIGTERM)
        try: fn([str(a) for a in args]); code = 0
        except SystemExit as e: code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        finally: signal.signal(signal.SIGTERM, old)
        out = capsys.readouterr()
        return subprocess.CompletedProcess(args, code, out.out, out.err)
    return run

# ---- the browser tests: Debian's chromium driven by Playwright (no browser download) ----
CHROMIUM = shutil.which('chromium') or '/usr/bin/chromium'
REQUIRED = os.environ.get('TB_REQUIRE_BROWSER') == '1'   # CI sets this: a missing site or browser is a failure there, not a skip

def need(cond, why):
    "Skip (or, where the browser is required, fail) unless `cond`."
    if not cond:
        if REQUIRED: pytest.fail(why)
        pytest.skip(why)

@contextlib.contextmanager
def static_server(folder):
    "A plain static HTTP server for `folder` on a free loopback port; yields its URL."
    class Quiet(SimpleHTTPRequestHandler):
        def log_message(self, *a): pass
    httpd = ThreadingHTTPServer(('127.0.0.1', 0), functools.partial(Quiet, directory=str(folder)))
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try: yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally: httpd.shutdown()

@pytest.fixture(scope='module')
def browser():
    need(Path(CHROMIUM).exists(), 'no chromium (apt-get install chromium)')
    pw = pytest.importorskip('playwright.sync_api') if not REQUIRED else __import__('playwright.sync_api', fromlist=['x'])
    with pw.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, headless=True,
                              args=['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
                                    '--disable-component-update', '--disable-sync'])
        yield b
        b.close()

def pytest_collection_modifyitems(session, config, items):
    """Test files longest first, each file's tests together in their own order: `--dist loadfile` then gives each
    worker whole files (a module's fixture is made once, not once a worker) in the order that ends both workers
    together. The seconds are a quiet full run's (`tests/durations.json`: test seconds a file, `--durations=0`); a
    file not in it counts as a minute, so that a new slow file does not start last."""
    import json
    secs = json.loads((ROOT / 'tests' / 'durations.json').read_text())
    order = {f: i for i, f in enumerate(dict.fromkeys(Path(str(it.fspath)).name for it in items))}
    items.sort(key=lambda it: (-secs.get(Path(str(it.fspath)).name, 60), order[Path(str(it.fspath)).name]))

def pytest_collection_finish(session):
    """What collection imported (torch, timm, every test module: about 680,000 objects) is never garbage: frozen, each
    garbage collection during the tests (the measurement collects twice a configuration run in this process, and Python
    collects on its own) walks only what the tests made since (0.3 s of CPU a full collection otherwise)."""
    import gc
    gc.freeze()

def pytest_ignore_collect(collection_path, config):
    """Run with `-m alone` (the tier that runs after the others, one test at a time), a test file that marks no test
    `alone` is not imported: collecting all of them imports every package the suite uses (about 16 s of CPU) to run
    two tests."""
    if config.getoption('markexpr', '') != 'alone' or collection_path.suffix != '.py' \
            or not collection_path.name.startswith('test_'):
        return None
    return True if 'mark.alone' not in collection_path.read_text() else None
