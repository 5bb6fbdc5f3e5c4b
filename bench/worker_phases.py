"""Where a worker process's time goes, for the README's first example's configurations.

Each configuration (`tbench infer --models resnet18 vit_tiny_patch16_224 --device cpu`: the precisions this CPU has
units for, the default batch with its time cap, the CPU's default timing) runs in a fresh Python process that times
its phases: the interpreter's start, the imports, the model's build (and its GFLOP count), the reference outputs of
the correctness gate, the accuracy reference, the backend's preparation (a cast, an export or a compile), the CPU's
batch probe, the warm-up, the timed phase, the rest of the measurement, the gate's comparison, the accuracy check, the
machine's yardstick after it, writing the row, and the process's exit. It prints each phase's seconds and share of the
process, per configuration and summed over them.

A sweep's workers fork from a server that imported torch once, so they pay the imports once per sweep, not per
process; the table shows what a fresh process pays, and the sweep's own cost of one worker process (`run_isolated`
of the same configuration, whole) beside it.

    python bench/worker_phases.py [--busy] [--rounds 1]

`--busy` starts two busy loops (ended with the script, at most 15 minutes) beside the measurement.
"""
import argparse, json, os, subprocess, sys, tempfile, time
from pathlib import Path

PHASES = ['start', 'imports', 'build', 'gate reference', 'accuracy reference', 'prepare (cast/export/compile)',
          'batch probe', 'warm-up', 'timed phase', 'measure, other', 'gate', 'accuracy', 'yardstick', 'write row',
          'exit']

def child(spec_json:str, timing_json:str, t_parent:float):
    "In a fresh process: run one configuration with each phase timed; print the phases as JSON."
    t = {'start': time.time() - t_parent}
    t0 = time.perf_counter()
    import dataclasses, torch, timm  # noqa: F401
    from throughput_bench.core import BenchSpec
    from throughput_bench.measure import inference as I
    from throughput_bench.measure.timing import TimingConfig
    from throughput_bench.scale import sweep as S
    from throughput_bench.analyse.store import ResultStore
    from throughput_bench.backends.base import get_backend
    t['imports'] = time.perf_counter() - t0
    spent = {}
    def timed(owner, name, phase):
        f = getattr(owner, name)
        def g(*a, **k):
            s = time.perf_counter()
            try: return f(*a, **k)
            finally: spent[phase] = spent.get(phase, 0.0) + time.perf_counter() - s
        setattr(owner, name, g)
    for name, phase in [('build_model', 'build'), ('gflops_per_sample', 'build'),
                        ('reference_output', 'gate reference'),
                        ('accuracy_reference', 'accuracy reference'), ('cpu_batch_fit', 'batch probe'),
                        ('measure', 'measure'), ('judge', 'gate'), ('gate_outputs', 'gate'),
                        ('judge_accuracy', 'accuracy')]:
        timed(I, name, phase)
    timed(S, 'reference_speed', 'yardstick')
    spec = BenchSpec(**json.loads(spec_json))
    timed(type(get_backend(spec.backend)), 'prepare', 'prepare (cast/export/compile)')
    res = S.run_spec(spec, TimingConfig(**json.loads(timing_json)))
    s = time.perf_counter()
    with tempfile.TemporaryDirectory() as d: ResultStore(d, 'cpu_t').append(res)
    spent['write row'] = time.perf_counter() - s
    m = spent.pop('measure', 0.0)
    spent['warm-up'] = res.warmup_seconds or 0.0
    spent['timed phase'] = res.seconds_measured or 0.0
    spent['measure, other'] = max(0.0, m - spent['warm-up'] - spent['timed phase'])
    print(json.dumps(dict(t, **spent, status=res.status, batch=res.batch_size, img_s=res.throughput_mean,
                          label=f"{spec.model_name} {spec.precision}", end=time.time())))

def configurations():
    "The first example's configurations that run on this CPU, and its timing (as `tbench infer` makes them)."
    import dataclasses, torch
    from throughput_bench.scale.launch import SweepOptions, check, configurations as confs, timing_config
    from throughput_bench.scale.sweep import skip_reason
    o = check(SweepOptions(models=['resnet18', 'vit_tiny_patch16_224'], device='cpu'))
    specs = [s for s in confs(o, torch.device('cpu')) if not skip_reason(s)]
    return specs, dataclasses.asdict(timing_config('cpu'))

def one(spec, timing):
    "A configuration's phases, in a fresh process timed from the parent."
    import dataclasses
    t = time.time()
    r = subprocess.run([sys.executable, __file__, '--child', json.dumps(dataclasses.asdict(spec)), json.dumps(timing),
                        repr(t)], capture_output=True, text=True)
    total = time.time() - t
    if r.returncode: raise SystemExit(r.stderr[-2000:])
    d = json.loads(r.stdout.strip().splitlines()[-1])
    d['exit'] = max(0.0, t + total - d.pop('end'))
    d['total'] = total
    return d

def forked(spec, timing):
    "The sweep's own cost of one worker process of `spec`: `run_isolated`, from its start to its row."
    from throughput_bench.scale.sweep import run_isolated
    from throughput_bench.measure.timing import TimingConfig
    s = time.perf_counter(); run_isolated(spec, TimingConfig(**timing)); return time.perf_counter() - s

def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--busy', action='store_true', help='beside two busy loops (ended with the script)')
    ap.add_argument('--rounds', type=int, default=1, help='fresh processes per configuration (default 1)')
    a = ap.parse_args()
    loops = [subprocess.Popen([sys.executable, '-c', 'import time\nt = time.time()\nwhile time.time() - t < 900: pass'])
             for _ in range(2 if a.busy else 0)]
    try:
        specs, timing = configurations()
        rows = [one(s, timing) for _ in range(a.rounds) for s in specs]
        forks = [forked(s, timing) for s in specs]
    finally:
        for p in loops: p.kill(); p.wait()
    labels = list(dict.fromkeys(r['label'] for r in rows))
    total = {p: sum(r.get(p, 0.0) for r in rows) for p in PHASES}
    whole = sum(r['total'] for r in rows)
    batch = {r['label']: r['batch'] for r in rows}
    head = ['phase'] + [f"{l} (bs {batch[l]})" for l in labels] + ['all', 'share']
    print(f"{'beside two busy loops' if a.busy else 'quiet'}; {os.cpu_count()} CPUs; {a.rounds} fresh process(es) "
          f"each; seconds (mean over rounds)")
    print('| ' + ' | '.join(head) + ' |'); print('|' + '---|' * len(head))
    mean = lambda l, p: sum(r.get(p, 0.0) for r in rows if r['label'] == l) / a.rounds
    for p in PHASES:
        print(f"| {p} | " + ' | '.join(f"{mean(l, p):.2f}" for l in labels)
              + f" | {total[p] / a.rounds:.2f} | {100 * total[p] / whole:.0f}% |")
    other = whole - sum(total.values())
    print(f"| unaccounted | " + ' | '.join('' for _ in labels)
          + f" | {other / a.rounds:.2f} | {100 * other / whole:.0f}% |")
    whole_of = lambda l: sum(r['total'] for r in rows if r['label'] == l) / a.rounds
    print(f"| **whole process** | " + ' | '.join(f"{whole_of(l):.2f}" for l in labels)
          + f" | {whole / a.rounds:.2f} | 100% |")
    print(f"| a sweep's forked worker, whole | " + ' | '.join(f"{x:.2f}" for x in forks) + f" | {sum(forks):.2f} | |")

if __name__ == '__main__':
    if len(sys.argv) > 1 and sys.argv[1] == '--child': child(sys.argv[2], sys.argv[3], float(sys.argv[4]))
    else: main()
