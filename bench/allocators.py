"""What the C allocator gives each runtime on this CPU: glibc at its defaults, glibc told to keep its memory, tcmalloc
and jemalloc, side by side with PyTorch eager, ONNX Runtime and OpenVINO.

Each round measures every (model, batch, backend, allocator) once, each in a fresh worker process forked from its
allocator's own server (as `tbench infer --allocators ...` does), in an order rotated every round so that the
machine's drift hits all alike. It prints img/s per configuration (mean over rounds, 95% t interval), each allocator's
ratio to glibc's defaults for the same backend (paired over rounds: Student's t on the log ratios), and each backend's
best against PyTorch eager at glibc's defaults, the runtime comparison the README used to make.

    python bench/allocators.py                      # resnet50, vit_small_patch16_224, convnext_tiny; batch 1 and 16; 3 rounds
    python bench/allocators.py --models resnet50 --batches 16 --rounds 3 --seconds 2
    python bench/allocators.py --models resnet50 --batches 16 --backends pytorch --allocators glibc --spawn-too

--spawn-too also measures each glibc configuration in a freshly spawned interpreter (what `python script.py` is), beside
the worker forked from the fork server that imported torch once: whether the server's allocator state, carried into
every worker, moves a figure.
"""
import argparse, collections, itertools, json, sys, tempfile, time
from pathlib import Path
sys.path.insert(0, str(Path(__file__).parent))
from common import mean_ci, show

def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--models', nargs='+', default=['resnet50', 'vit_small_patch16_224', 'convnext_tiny'])
    ap.add_argument('--batches', nargs='+', type=int, default=[1, 16])
    ap.add_argument('--backends', nargs='+', default=['pytorch', 'onnxruntime', 'openvino'])
    ap.add_argument('--allocators', nargs='+', default=None, help="default: every one installed")
    ap.add_argument('--rounds', type=int, default=3)
    ap.add_argument('--seconds', type=float, default=2.0, help="each process's timed phase")
    ap.add_argument('--threads', type=int, default=None, help="default: PyTorch's")
    ap.add_argument('--spawn-too', action='store_true', help="glibc also in a freshly spawned interpreter")
    ap.add_argument('--out', default='allocators.json', help="every figure, written as it is measured (default: %(default)s)")
    ap.add_argument('--report-only', metavar='JSON', help="print the report of an earlier run's figures, measuring nothing")
    a = ap.parse_args()
    if a.report_only:
        saved = json.loads(Path(a.report_only).read_text())
        got = collections.defaultdict(list, {tuple(json.loads(k)): v for k, v in saved['got'].items()})
        for k, v in saved['args'].items(): setattr(a, k, v)
        from throughput_bench.stats import paired_ratio
        return report(got, a, saved['allocs'], paired_ratio)
    import torch
    from throughput_bench.core import ALLOCATORS, BenchSpec
    from throughput_bench.stats import paired_ratio
    from throughput_bench.machine.allocator import missing
    from throughput_bench.scale.sweep import run_isolated
    from throughput_bench.measure.timing import TimingConfig
    from throughput_bench.backbones.registry import get_model
    allocs = a.allocators or [x for x in ALLOCATORS if missing(x) is None]
    threads = a.threads or torch.get_num_threads()
    cache = tempfile.mkdtemp(prefix='tbench-allocators-')
    specs = [BenchSpec(m, batch_size=b, backend=be, allocator=al, threads=threads, input_channels=get_model(m).channels,
                       input_size=get_model(m).size, cache_dir=None if be == 'pytorch' else cache, probe_batch=False,
                       max_step_seconds=None)
             for m, b, be, al in itertools.product(a.models, a.batches, a.backends, allocs)]
    starts = [(s, 'server') for s in specs] + [(s, 'spawn') for s in specs if a.spawn_too and s.allocator == 'glibc']
    timing = TimingConfig(warmup=2, warmup_seconds=0, timed_seconds=a.seconds)
    got = collections.defaultdict(list)  # (model, batch, backend, allocator) -> img/s per round (NaN: failed)
    t0 = time.monotonic()
    print(f"{len(starts)} configurations x {a.rounds} rounds; allocators {' '.join(allocs)}; {threads} threads; "
          f"{a.seconds:g} s timed each", flush=True)
    for r in range(a.rounds):
        order = starts[r % len(starts):] + starts[:r % len(starts)]  # rotated: each sits elsewhere each round
        for i, (s, start) in enumerate(order):
            res = run_isolated(s, timing) if start == 'server' else run_spawned(s, timing)
            ok = res.status == 'ok' and res.allocator == s.allocator
            name = s.allocator if start == 'server' else 'glibc, spawned'
            got[(s.model_name, s.batch_size, s.backend, name)].append(res.throughput_mean if ok else float('nan'))
            if not ok: print(f"\n  {s.short()} {name}: {res.status}: {res.error}", flush=True)
            Path(a.out).write_text(json.dumps(dict(args=dict(models=a.models, batches=a.batches, backends=a.backends,
                                                             spawn_too=a.spawn_too),
                                                   allocs=allocs + ['glibc, spawned'] * a.spawn_too,
                                                   got={json.dumps(list(k)): v for k, v in got.items()}), indent=1))
            done = r * len(starts) + i + 1
            eta = (time.monotonic() - t0) / done * (a.rounds * len(starts) - done)
            print(f"\rround {r + 1}/{a.rounds}: {i + 1}/{len(starts)}, ~{eta / 60:.0f} min left ", end='', flush=True)
        print(flush=True)
    report(got, a, allocs + ['glibc, spawned'] * a.spawn_too, paired_ratio)

def run_spawned(spec, timing):
    "`sweep.run_isolated`, but in a freshly spawned interpreter (no fork server): what a plain script starts as."
    import multiprocessing, os, tempfile
    from dataclasses import asdict
    from throughput_bench.scale import sweep
    from throughput_bench.result import BenchResult
    ctx = multiprocessing.get_context('spawn')
    recv, send = ctx.Pipe(duplex=False)
    fd, log = tempfile.mkstemp(prefix='tbench-spawned-', suffix='.log'); os.close(fd)
    p = ctx.Process(target=sweep._worker, args=(send, asdict(spec), asdict(timing), {}, log, os.getpid()))
    with sweep._no_main(): p.start()
    send.close(); row = recv.recv(); p.join(); os.unlink(log)
    if '__error__' in row: return BenchResult(status='error', error=row['__error__'])
    return BenchResult(**row)

ALLOCATOR_NAMES = ('glibc', 'glibc-retain', 'tcmalloc', 'jemalloc')

def report(got, a, allocs, paired_ratio):
    "img/s, each allocator against glibc's defaults, and each backend's best against eager PyTorch at glibc's."
    import numpy as np
    for m, b in itertools.product(a.models, a.batches):
        print(f"\n{m}, batch {b}: img/s (mean over rounds [95% CI]); x glibc's defaults, paired over rounds")
        for be in a.backends:
            base = got[(m, b, be, 'glibc')]
            for al in allocs:
                xs = got[(m, b, be, al)]
                line = f"  {be:12} {al:13} {show(*mean_ci(xs), fmt='.1f')}"
                if al != 'glibc' and 'glibc' in allocs:
                    keep = [i for i in range(min(len(xs), len(base))) if xs[i] == xs[i] and base[i] == base[i]]
                    if not keep: print(line + "   (no run measured)"); continue
                    r = paired_ratio(np.take(base, keep), np.take(xs, keep))
                    line += f"   x{r.ratio:.2f} [{r.low:.2f}, {r.high:.2f}]" if r.n > 1 else f"   x{r.ratio:.2f}"
                print(line)
        eager = got[(m, b, 'pytorch', 'glibc')] if 'pytorch' in a.backends and 'glibc' in allocs else None
        if eager is None: continue
        for be in a.backends:
            best = max([x for x in allocs if x in ALLOCATOR_NAMES], key=lambda al: np.nanmean(got[(m, b, be, al)]) if any(x == x for x in got[(m, b, be, al)]) else -1)
            xs = got[(m, b, be, best)]
            keep = [i for i in range(min(len(xs), len(eager))) if xs[i] == xs[i] and eager[i] == eager[i]]
            if not keep: continue
            r = paired_ratio(np.take(eager, keep), np.take(xs, keep))
            print(f"  best {be} ({best}) vs PyTorch eager at glibc's defaults: x{r.ratio:.2f}"
                  + (f" [{r.low:.2f}, {r.high:.2f}]" if r.n > 1 else ''))

if __name__ == '__main__': main()
