"Serving: `tbench serve` (LitServe) and `tbench latency` (MLPerf LoadGen), on loopback, every loop bounded."
import io, csv, json, time, signal, threading, subprocess, os, http.server
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
import numpy as np, pytest, httpx
from conftest import tbench, BIN
from throughput_bench.serve.serving import ServerProcess, npy_bytes, untar_npy, free_port

pytestmark = pytest.mark.slow  # servers, browsers, launches: the full run, not the fast tier

SERVE = ['--model', 'resnet18', '--input-size', '32', '--device', 'cpu', '--max-batch-size', '4', '--batch-timeout-ms', '20',
         '--max-request-mb', '1']
QUICK = ['--burn-in', '1', '--trials', '5', '--min-duration', '0.3', '--max-duration', '20', '--wandb', 'disabled', '--no-progress']

class _Healthy(http.server.BaseHTTPRequestHandler):
    "Another server, whose every answer is 200: a health check it answers is not the started server's."
    def do_GET(self): self.send_response(200); self.end_headers()
    def log_message(self, *a): pass

@pytest.fixture(scope='module')
def server():
    s = ServerProcess(*SERVE, ready_timeout=240)
    s.first_port = s.port
    # another server takes the chosen port before this one listens there, and answers its health check
    other = http.server.HTTPServer(('127.0.0.1', s.port), _Healthy)
    threading.Thread(target=other.serve_forever, daemon=True).start()
    try: s.start()
    finally: other.shutdown(); other.server_close()
    try: yield s
    finally: s.stop()

def test_a_port_taken_before_the_server_listens_is_chosen_again(server):
    assert server.port != server.first_port and str(server.port) in server.url
    assert httpx.get(f"{server.url}/v1/health/ready", timeout=10).status_code == 200

def post(url, body=None, **kw):
    files = {'input_array': ('input_array', body)} if body is not None else None
    return httpx.post(f"{url}/v1/infer", files=files, timeout=60, **kw)

def img(*shape, dtype=np.float32, seed=0): return np.random.default_rng(seed).standard_normal(shape).astype(dtype)

def rows(csv_path): return list(csv.DictReader(open(csv_path)))

def test_bad_requests_get_a_4xx_and_the_server_stays_up(server):
    b = io.BytesIO(); np.save(b, np.array([{'a': 1}], dtype=object), allow_pickle=True)
    bad = {'not a .npy': (dict(body=b'hello'), 400), 'a pickle': (dict(body=b.getvalue()), 400),
           'int64': (dict(body=npy_bytes(np.zeros((3, 32, 32), np.int64))), 422),
           'rank 2': (dict(body=npy_bytes(img(32, 32))), 422), '4 channels': (dict(body=npy_bytes(img(1, 4, 32, 32))), 422),
           '31 px': (dict(body=npy_bytes(img(3, 31, 31))), 422), 'over 1 MB': (dict(body=npy_bytes(img(90, 3, 32, 32))), 413),
           'no input_array': (dict(data={'samples': '1'}, files={'other': ('x', b'1')}), 422),
           'samples=0': (dict(body=npy_bytes(img(3, 32, 32)), data={'samples': '0'}), 422),
           '5,001 fields': (dict(body=npy_bytes(img(3, 32, 32)), data={f"f{i}": '1' for i in range(5001)}), 400),
           'a 100 kB filename': (dict(files={'input_array': ('x' * 100_000, npy_bytes(img(3, 32, 32)))}), 400),
           '8 images x samples=9': (dict(body=npy_bytes(img(8, 3, 32, 32)), data={'samples': '9'}), 422)}
    def send(kw):
        kw = dict(kw)
        if 'files' in kw: return httpx.post(f"{server.url}/v1/infer", timeout=60, **kw)
        return post(server.url, **kw)
    with ThreadPoolExecutor(4) as ex: answers = dict(zip(bad, ex.map(lambda k: send(bad[k][0]), bad)))
    for name, (kw, status) in bad.items():
        r = answers[name]
        assert r.status_code == status, (name, r.status_code, r.text)
        assert list(r.json()) == ['detail'] and '\n' not in r.text, (name, r.text)
    r = httpx.post(f"{server.url}/v1/infer", content=b'raw bytes', timeout=60)
    assert r.status_code == 415 and 'multipart/form-data' in r.json()['detail']
    good = post(server.url, npy_bytes(img(3, 32, 32)))
    assert good.status_code == 200 and np.load(io.BytesIO(good.content)).shape == (1, 1000)

def test_the_nim_page_request_corrected_gets_a_tar(server):
    # the NIM page's client, with its two slips fixed: post `file_dict` as `files`, and send the file's bytes
    data = {'samples': 2, 'steps': 8, 'seed': 0}
    r = httpx.post(f"{server.url}/v1/infer", files={'input_array': ('input_array', npy_bytes(img(3, 32, 32)))}, data=data,
                   headers={'accept': 'application/x-tar'}, timeout=180)
    assert r.status_code == 200 and r.headers['content-type'] == 'application/x-tar'
    out = untar_npy(r.content)
    assert out.shape == (2, 1000) and np.allclose(out[0], out[1], atol=1e-5)
    meta = httpx.get(f"{server.url}/v1/metadata", timeout=10).json()
    assert (meta['model'], meta['input_shape'], meta['max_batch_size'], meta['server']) == ('resnet18', [3, 32, 32], 4, 'litserve')
    assert httpx.get(f"{server.url}/v1/health/ready", timeout=10).status_code == 200

def test_dynamic_batching_gives_each_request_its_own_rows(server):
    x = img(3, 3, 32, 32, seed=1)
    alone = [np.load(io.BytesIO(post(server.url, npy_bytes(x[i])).content)) for i in range(3)]
    bodies = [x[:1], x[:2], x, x[2:]]  # sent together: LitServe may gather them into one forward pass
    with ThreadPoolExecutor(4) as ex: outs = list(ex.map(lambda a: np.load(io.BytesIO(post(server.url, npy_bytes(a)).content)), bodies))
    assert [o.shape[0] for o in outs] == [1, 2, 3, 1]
    ref = np.concatenate(alone)
    for a, o in zip(bodies, outs):
        start = 2 if a is bodies[3] else 0
        assert np.allclose(o, ref[start:start + len(a)], atol=1e-3)

def test_each_scenario_writes_rows_with_ordered_percentiles(server, tmp_path):
    r = tbench('latency', f"{server.url}/v1/infer", '--runs', '2', '--form', 'samples=1', '--form', 'steps=8', '--form', 'steps=18', *QUICK, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    r = tbench('latency', server.url, '--scenario', 'offline', '--concurrency', '1', '2', '--runs', '1', *QUICK, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    r = tbench('latency', server.url, '--scenario', 'server', '--qps', '20', '--latency-bound-ms', '0.001', '--latency-percentile', '0.5',
               '--runs', '1', *QUICK, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert 'INVALID' in r.stdout
    (f,) = (tmp_path / 'results').glob('*.csv')
    got = rows(f)
    assert [(g['scenario'], g['request_form'], g['concurrency']) for g in got] == [
        ('single-stream', 'samples=1 steps=8', '1'), ('single-stream', 'samples=1 steps=18', '1'),
        ('offline', '', '1'), ('offline', '', '2'), ('server', '', '')]
    for g in got:
        assert g['mode'] == 'serving' and g['status'] == 'ok' and g['request_errors'] == '0', g
        p = [float(g[f'latency_{k}_ms']) for k in ('p50', 'p90', 'p95', 'p99', 'p999')]
        assert p == sorted(p) and p[0] > 0
        assert abs(float(g['throughput_mean']) - float(g['achieved_qps']) * int(g['batch_size'])) < 1e-3 * float(g['throughput_mean'])
        assert (tmp_path / g['loadgen_log'] / 'run1' / 'mlperf_log_summary.txt').exists()
        assert json.loads(g['server_metadata'])['model'] == 'resnet18' and float(g['client_p50_ms']) > 0
    assert [g['runs'] for g in got[:2]] == ['2', '2'] and all(int(g['requests']) >= 10 for g in got[:2])
    assert float(got[0]['latency_ci_low_ms']) <= float(got[0]['latency_mean_ms']) <= float(got[0]['latency_ci_high_ms'])
    assert got[4]['valid'] == 'INVALID' and got[4]['invalid_reason'] and float(got[4]['target_qps']) == 20
    assert {g['latency_source'] for g in got} == {'loadgen', 'client'}
    from throughput_bench.analyse.store import read_results  # the rows read back as what they are: text as text, flags as flags
    df = read_results(f)
    assert json.loads(df.server_metadata[0])['model'] == 'resnet18' and df.max_qps.dtype == bool and df.valid.tolist()[-1] == 'INVALID'
    assert df.latency_p999_ms.dtype.kind == 'f' and df.request_form[0] == 'samples=1 steps=8'

def test_a_server_killed_mid_run_gives_an_error_row_and_a_clean_exit(server, tmp_path):
    # the last test to use the module's server: it kills it
    p = subprocess.Popen([str(BIN / 'tbench'), 'latency', server.url, '--runs', '1', '--burn-in', '1', '--min-duration', '6',
                          '--max-duration', '30', '--timeout', '5', '--wandb', 'disabled', '--no-progress'],
                         cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60  # wait until LoadGen is running (its log folder exists), then kill the server
        while not list(tmp_path.glob('results/*.loadgen/*/run1')) and time.monotonic() < deadline and p.poll() is None: time.sleep(0.2)
        time.sleep(1)
        server.kill()
        out, err = p.communicate(timeout=120)
    finally:
        if p.poll() is None: p.kill()
    assert p.returncode == 1, (out, err)
    assert 'Traceback' not in err and 'stopped answering' in err, err
    (f,) = (tmp_path / 'results').glob('*.csv')
    (g,) = rows(f)
    assert g['status'] == 'error' and 'stopped answering' in g['error'] and int(g['request_errors']) >= 1

def run_cli(argv, cwd):
    "`tbench ARGV` in this process: (exit code, stderr)."
    import contextlib, io as _io
    from throughput_bench.cli import tbench as cli
    err, old = _io.StringIO(), os.getcwd()
    os.chdir(cwd)
    try:
        with contextlib.redirect_stderr(err):
            try: cli([str(a) for a in argv]); return 0, err.getvalue()
            except SystemExit as e: return e.code, err.getvalue()
    finally: os.chdir(old)

@pytest.mark.parametrize('args,msg', [
    (['latency', 'ftp://x'], "is not an http(s) URL"),
    (['latency', 'http://127.0.0.1:{port}', '--scenario', 'server'], "--scenario server needs --qps"),
    (['latency', 'http://127.0.0.1:{port}', '--find-max-qps'], "--find-max-qps needs --latency-bound-ms"),
    (['latency', 'http://127.0.0.1:{port}', '--concurrency', '2'], "--concurrency is for --scenario offline"),
    (['latency', 'http://127.0.0.1:{port}'], "nothing answered at http://127.0.0.1:"),
    (['latency', 'http://127.0.0.1:{port}', '--input-file', 'missing.npy'], "no such file"),
    (['latency', 'http://127.0.0.1:{port}', '--form', 'steps'], "write KEY=VALUE"),
    (['serve', '--model', 'resnet_18', '--port', '{port}'], "did you mean"),  # not 8000: another may listen there
])
def test_bad_input_is_one_line_and_exit_2(tmp_path, args, msg):
    port = free_port()  # nobody listens there
    code, err = run_cli([a.format(port=port) for a in args], tmp_path)
    assert code == 2 and msg in err and err.count('\n') == 1 and 'Traceback' not in err, err
    assert not (tmp_path / 'results').exists() or not list((tmp_path / 'results').glob('*.csv'))

def test_serve_refuses_a_port_in_use(tmp_path):
    import socket
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0)); s.listen(1)
        code, err = run_cli(['serve', '--model', 'resnet18', '--device', 'cpu', '--port', s.getsockname()[1]], tmp_path)
    assert code == 2 and 'cannot listen on 127.0.0.1' in err, err

def test_sigterm_stops_the_server_quietly_and_says_so(tmp_path):
    "SIGTERM to `tbench serve`: exit 143, one line saying it stopped, no LitServe traceback (its monitor thread once logged a BrokenPipeError), no process left."
    import sys, psutil
    from throughput_bench.serve.serving import wait_ready
    port = free_port()
    p = subprocess.Popen([sys.executable, '-c', 'from throughput_bench.cli import tbench; tbench()', 'serve', *SERVE, '--port', str(port)],
                         cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    stop = threading.Event()  # before the try: its finally sets it whether or not the server came up
    try:
        assert wait_ready(f"http://127.0.0.1:{port}", 240, p), ('the server did not come up', p.poll())
        kids = psutil.Process(p.pid).children(recursive=True)
        def health():  # requests in flight while the server stops (CI once caught one going through a dead manager)
            while not stop.is_set():
                try: httpx.get(f"http://127.0.0.1:{port}/v1/health/ready", timeout=1.0)
                except httpx.HTTPError: pass
        pollers = [threading.Thread(target=health, daemon=True) for _ in range(4)]
        for t in pollers: t.start()
        time.sleep(0.5)
        p.send_signal(signal.SIGTERM)
        out, err = p.communicate(timeout=60)
    finally:
        stop.set()
        if p.poll() is None: p.kill()
    assert p.returncode == 143 and 'Traceback' not in err and 'Monitoring worker crashed' not in err, err[-2000:]
    assert 'stopped (SIGTERM)' in err and err.count('stopped (SIGTERM)') == 1, err
    _, alive = psutil.wait_procs(kids, timeout=10)
    assert not alive, alive

# ---- the body check (NimGuard) alone, as ASGI calls: no server ----

def _guarded(receive, headers, monkeypatch=None, max_mb=1.0):
    "What NimGuard sends for one POST to /v1/infer, and the scope its app got (None where it answered itself)."
    import asyncio
    from throughput_bench.serve.serving import NimGuard
    sent, seen = [], []
    async def app(scope, rcv, send):
        seen.append(scope); await send({'type': 'http.response.start', 'status': 200, 'headers': []})
        await send({'type': 'http.response.body', 'body': b'ok'})
    async def send(msg): sent.append(msg)
    scope = dict(type='http', method='POST', path='/v1/infer', headers=[(k.encode(), v.encode()) for k, v in headers])
    asyncio.run(NimGuard(app, max_mb)(scope, receive, send))
    return sent[0]['status'], (seen[0] if seen else None)

def test_a_body_that_stops_arriving_is_a_408_not_a_request_held_open(monkeypatch):
    import asyncio
    from throughput_bench.serve import serving as S  # (`throughput_bench.serve` is also the API's function)
    monkeypatch.setattr(S, 'BODY_SECONDS', 0.05)
    async def stalls(): await asyncio.sleep(60)
    status, seen = _guarded(stalls, [('content-type', 'multipart/form-data; boundary=x'), ('content-length', '10')])
    assert status == 408 and seen is None

def test_a_body_dripped_a_byte_at_a_time_is_a_408_once_its_whole_time_is_up(monkeypatch):
    "Each byte within the pause allowed, the whole body past its time: it was held open for as long as the client liked."
    import asyncio
    from throughput_bench.serve import serving as S
    monkeypatch.setattr(S, 'BODY_SECONDS', 5); monkeypatch.setattr(S, 'BODY_TOTAL_SECONDS', 0.3)
    sent = []
    async def drips():
        sent.append(1); await asyncio.sleep(0.05)
        return {'type': 'http.request', 'body': b'x', 'more_body': True}
    status, seen = _guarded(drips, [('content-type', 'multipart/form-data; boundary=x')])
    assert status == 408 and seen is None and 2 <= len(sent) <= 40, len(sent)

def test_a_chunked_body_over_the_limit_is_a_413_not_a_500():
    "The server's own size middleware raises inside receive() on a body without a length: NimGuard answers it."
    from fastapi import HTTPException
    async def too_big(): raise HTTPException(413, 'Payload too large')
    assert _guarded(too_big, [('content-type', 'multipart/form-data; boundary=x')]) == (413, None)

def test_a_media_type_in_capitals_is_a_form():
    "HTTP media types are case-insensitive; the form parser behind the server reads lower case only (it was a 500)."
    body = b'--x\r\nContent-Disposition: form-data; name="a"\r\n\r\n1\r\n--x--\r\n'
    async def once(): return {'type': 'http.request', 'body': body, 'more_body': False}
    status, seen = _guarded(once, [('Content-Type', 'Multipart/Form-Data; BOUNDARY=x')])
    assert status == 200 and dict(seen['headers'])[b'Content-Type'] == b'multipart/form-data; BOUNDARY=x'

def test_several_content_type_headers_are_a_400():
    "The guard read the last, the form parser the first: two of them bypassed the checks (a 500 behind them)."
    async def never(): raise AssertionError('the body is not read')
    status, seen = _guarded(never, [('content-type', 'text/plain'), ('content-type', 'multipart/form-data; boundary=x')])
    assert status == 400 and seen is None

@pytest.mark.parametrize('ct', ['multipart/form-data; xboundary=QQ; boundary=XyZ', 'multipart/form-data; boundary=XyZ ',
                                'multipart/form-data; BOUNDARY="XyZ"'])
def test_the_boundary_is_read_as_http_reads_it(ct):
    "Another parameter ending in `boundary`, a trailing space or quotes made the field count check find no field at all."
    from throughput_bench.serve.serving import form_problem, MAX_FIELDS
    body = b'--XyZ\r\nContent-Disposition: form-data; name="a"\r\n\r\n1\r\n' * (MAX_FIELDS + 1) + b'--XyZ--\r\n'
    assert form_problem(body, ct) == f"{MAX_FIELDS + 1} form fields; this server takes at most {MAX_FIELDS}"
