"""Which runtime runs this backbone fastest here, and what does the harness cost each? PyTorch, ONNX Runtime and OpenVINO side by side.

For each model and batch, each round measures, interleaved (the same drift of the machine hits all alike):
- each backend through tbench's own path: a fresh worker process running `run_inference` (build, the correctness gate,
  the backend's prepare, the timing loop), fp32, a fixed timed phase;
- each runtime driven directly, in a fresh process: the 10-line loop its documentation shows (PyTorch eager under
  inference_mode; an ONNX Runtime session's run; OpenVINO's LATENCY hint with one request at batch 1, else its THROUGHPUT
  hint with an AsyncInferQueue kept full), on the same exported graph.
It prints img/s, each backend's ratio to eager PyTorch (tbench's rows), and the ratio of tbench's row to the direct loop,
as means over rounds with 95% intervals, and each row's correctness figures (max relative difference from fp32 eager).

    python bench/runtimes.py                                   # resnet50, vit_small_patch16_224 at batch 1 and 16; 3 rounds of 3 s
    python bench/runtimes.py --models resnet18 --batches 1 8 --size 112 --rounds 2 --seconds 1
"""
import argparse, json, os, subprocess, sys, tempfile, time
from pathlib import Path
sys.path.insert(0, str(Path(__file__).parent))
from common import mean_ci, show
BACKENDS = ['pytorch', 'onnxruntime', 'openvino']

def direct(backend:str, model:str, batch:int, size:int, seconds:float, threads:int, cache:str)->float:
    "img/s of the runtime driven by hand on the graph tbench exported (run in a fresh process)."
    import numpy as np, torch
    from throughput_bench.core import BenchSpec
    from throughput_bench.backends.model import build_model
    from throughput_bench.backends.export import onnx_model
    spec = BenchSpec(model, input_channels=3, input_size=size, batch_size=batch, threads=threads, cache_dir=cache, device='cpu')
    _, _, m = build_model(spec); m.eval()
    x = np.random.default_rng(0).standard_normal((batch, 3, size, size), dtype=np.float32)
    def loop(step, per_step):
        for _ in range(3): step()
        n, t0 = 0, time.perf_counter()
        while time.perf_counter() - t0 < seconds: step(); n += 1
        return n * per_step / (time.perf_counter() - t0)
    if backend == 'pytorch':
        xt = torch.from_numpy(x)
        with torch.inference_mode(): return loop(lambda: m(xt), batch)
    path = str(onnx_model(m, spec)[0])
    if backend == 'onnxruntime':
        import onnxruntime as ort
        so = ort.SessionOptions(); so.intra_op_num_threads = threads
        s = ort.InferenceSession(path, so, providers=['CPUExecutionProvider'])
        return loop(lambda: s.run(None, {'x': x}), batch)
    import openvino as ov
    core = ov.Core(); g = core.read_model(path); g.reshape([batch, 3, size, size])
    cm = core.compile_model(g, 'CPU', {'PERFORMANCE_HINT': 'LATENCY' if batch == 1 else 'THROUGHPUT', 'INFERENCE_PRECISION_HINT': 'f32',
                                       'INFERENCE_NUM_THREADS': threads})
    if batch == 1:
        r = cm.create_infer_request(); return loop(lambda: r.infer({0: x}), batch)
    q = ov.AsyncInferQueue(cm, int(cm.get_property('OPTIMAL_NUMBER_OF_INFER_REQUESTS')))
    for _ in range(len(q)): q.start_async({0: x})
    q.wait_all()
    n, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < seconds: q.start_async({0: x}); n += 1  # blocks while every request is busy: the queue stays full
    q.wait_all()
    return n * batch / (time.perf_counter() - t0)

def through_tbench(backend, model, batch, size, seconds, threads, cache):
    "tbench's row for the configuration: a fresh worker process, the whole inference path."
    from throughput_bench.core import BenchSpec
    from throughput_bench.measure.timing import TimingConfig
    from throughput_bench.scale.sweep import run_isolated
    spec = BenchSpec(model, input_channels=3, input_size=size, batch_size=batch, threads=threads, cache_dir=cache, device='cpu',
                     backend=backend, probe_batch=False)
    r = run_isolated(spec, TimingConfig(warmup=3, warmup_seconds=0.5, timed_seconds=seconds))
    if r.status != 'ok': raise SystemExit(f"{model} {backend} bs={batch}: {r.status}: {r.error}")
    return r

def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument('--models', nargs='+', default=['resnet50', 'vit_small_patch16_224'])
    p.add_argument('--batches', nargs='+', type=int, default=[1, 16])
    p.add_argument('--size', type=int, default=224)
    p.add_argument('--rounds', type=int, default=3)
    p.add_argument('--seconds', type=float, default=3.0)
    p.add_argument('--threads', type=int, default=os.cpu_count())
    p.add_argument('--direct', nargs=2, metavar=('BACKEND', 'MODEL'), help=argparse.SUPPRESS)  # internal: one direct run
    p.add_argument('--cache', help=argparse.SUPPRESS)
    a = p.parse_args()
    if a.direct:
        print(json.dumps(direct(a.direct[0], a.direct[1], a.batches[0], a.size, a.seconds, a.threads, a.cache))); return
    cache = a.cache or tempfile.mkdtemp(prefix='tb-runtimes-')
    configs = [(m, b) for m in a.models for b in a.batches]
    got = {(m, b, be, how): [] for m, b in configs for be in BACKENDS for how in ('tbench', 'direct')}
    gate = {}
    print(f"{len(configs)} configurations x {len(BACKENDS)} backends x (tbench, direct) x {a.rounds} rounds, {a.seconds:g} s timed each, "
          f"{a.threads} threads, {a.size} px, fp32; exported graphs in {cache}", flush=True)
    for r in range(a.rounds):
        for m, b in configs:
            for be in BACKENDS:
                row = through_tbench(be, m, b, a.size, a.seconds, a.threads, cache)
                got[m, b, be, 'tbench'].append(row.throughput_mean); gate[m, b, be] = (row.max_rel_diff, row.backend_settings)
                out = subprocess.run([sys.executable, __file__, '--direct', be, m, '--batches', str(b), '--size', str(a.size),
                                      '--seconds', str(a.seconds), '--threads', str(a.threads), '--cache', cache],
                                     capture_output=True, text=True)
                if out.returncode: raise SystemExit(f"direct {be} {m}: {out.stderr.strip().splitlines()[-1]}")
                got[m, b, be, 'direct'].append(json.loads(out.stdout.strip().splitlines()[-1]))
                print(f"round {r + 1}: {m} bs={b} {be:<11} tbench {got[m, b, be, 'tbench'][-1]:7.1f} img/s, direct {got[m, b, be, 'direct'][-1]:7.1f} img/s", flush=True)
    print("\n| model, batch | backend | tbench img/s | × eager PyTorch (tbench) | tbench / direct | max rel diff vs fp32 eager | settings |")
    print("|---|---|---:|---|---|---:|---|")
    for m, b in configs:
        eager = got[m, b, 'pytorch', 'tbench']
        for be in BACKENDS:
            t, d = got[m, b, be, 'tbench'], got[m, b, be, 'direct']
            vs_eager = show(*mean_ci([x / e for x, e in zip(t, eager)]), '.2f', '×') if be != 'pytorch' else '1'
            rel, settings = gate[m, b, be]
            print(f"| {m}, {b} | {be} | {mean_ci(t)[0]:.1f} | {vs_eager} | {show(*mean_ci([x / y for x, y in zip(t, d)]), '.2f', '×')} | "
                  f"{'' if rel != rel or rel is None else format(rel, '.1e')} | {settings} |")

if __name__ == '__main__': main()
