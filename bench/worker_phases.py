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

    python bench/worker_phases.py --before REV [--rounds 3] [--models resnet18] [--precisions fp32]

measures instead what a sweep's forked worker costs beyond its timed phase, for this checkout and for the package as
it was at git revision REV, side by side: each round runs one child process per version (the order alternating), each
child starts its fork server (not counted), then runs each configuration's worker processes as a sweep does (the
first probes the batch, two more at the batch it settled) and reports each process's wall time and timed phase. It
prints each version's seconds beyond the timed phase per process and their ratio, per round and over the rounds.
"""
import argparse, json, os, re, shutil, statistics, subprocess, sys, tempfile, time
from pathlib import Path

PHASES = ['start', 'imports', 'build', 'gate reference', 'accuracy reference', 'prepare (cast/export/compile)',
          'batch probe', 'warm-up', 'gate, in the warm-up', 'timed phase', 'measure, other', 'gate',
          'accuracy', 'yardstick', 'write row', 'exit']

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
    spent, inside = {}, []
    def timed(owner, name, phase):
        f = getattr(owner, name)
        def g(*a, **k):
            s = time.perf_counter(); inside.append(phase)
            try: return f(*a, **k)
            finally:
                inside.pop()
                # on a CPU the gate's call is the warm-up's first: its seconds are the warm-up's, said apart
                p = 'gate, in the warm-up' if phase == 'gate' and 'measure' in inside else phase
                spent[p] = spent.get(p, 0.0) + time.perf_counter() - s
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
    spent['warm-up'] = (res.warmup_seconds or 0.0) - spent.get('gate, in the warm-up', 0.0)
    spent['timed phase'] = res.seconds_measured or 0.0
    # the first call, the loop's stop checks
    spent['measure, other'] = max(0.0, m - (res.warmup_seconds or 0.0) - spent['timed phase'])
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
    """The sweep's own cost of one worker process of `spec` (`run_isolated`, from its start to its row; its fork server
    started before), and its timed phase's seconds."""
    from throughput_bench.scale.sweep import run_isolated, start_servers
    from throughput_bench.measure.timing import TimingConfig
    start_servers([spec.allocator])
    s = time.perf_counter(); r = run_isolated(spec, TimingConfig(**timing))
    return time.perf_counter() - s, r.seconds_measured or 0.0

def forked_child(models:list, precisions:list, processes:int):
    """In a child of `--before`: each configuration's `processes` forked workers as a sweep runs them; one JSON line
    per process (label, wall seconds, timed seconds, warm-up seconds and calls, batch)."""
    import dataclasses, torch
    from throughput_bench.scale.launch import SweepOptions, check, configurations as confs, timing_config
    from throughput_bench.scale.sweep import skip_reason, run_isolated
    o = check(SweepOptions(models=models, precisions=precisions, device='cpu'))
    specs = [s for s in confs(o, torch.device('cpu')) if not skip_reason(s)]
    timing = timing_config('cpu')
    run_isolated(dataclasses.replace(specs[0], batch_size=1, probe_batch=False), timing)  # the server's imports
    for s in specs:
        for i in range(processes):
            t = time.perf_counter(); r = run_isolated(s, timing); wall = time.perf_counter() - t
            if i == 0: s = dataclasses.replace(s, batch_size=r.batch_size, probe_batch=False)  # as the sweep does
            print(json.dumps(dict(label=f"{s.model_name} {s.precision}", process=i + 1, wall=wall,
                                  timed=r.seconds_measured, warm=r.warmup_seconds, warm_calls=r.warmup_iters,
                                  batch=r.batch_size, status=r.status)), flush=True)

def before_after(rev:str, rounds:int, models:list, precisions:list):
    "This checkout against the package at `rev`, in alternating child processes; a table of seconds beyond the timing."
    root = Path(__file__).resolve().parents[1]
    old = Path(tempfile.mkdtemp(prefix='tbench-before-'))
    try:
        tar = subprocess.run(['git', 'archive', rev, 'throughput_bench'], cwd=root, capture_output=True, check=True)
        subprocess.run(['tar', '-x', '-C', str(old)], input=tar.stdout, check=True)
        sha = subprocess.run(['git', 'rev-parse', '--short', rev], cwd=root, capture_output=True, text=True).stdout.strip()
        versions = {f'before ({sha})': str(old), 'after (this checkout)': str(root)}
        got = {v: [] for v in versions}
        for r in range(rounds):
            for v in (list(versions) if r % 2 == 0 else list(versions)[::-1]):
                env = os.environ | {'PYTHONPATH': versions[v]}
                out = subprocess.run([sys.executable, __file__, '--forked-child', json.dumps([models, precisions])],
                                     env=env, capture_output=True, text=True, cwd=tempfile.gettempdir())
                if out.returncode: raise SystemExit(f"{v}: {out.stderr[-2000:]}")
                rows = [json.loads(l) for l in out.stdout.splitlines() if l.startswith('{')]
                got[v].append(rows)
                print(f"round {r + 1}, {v}: " + ', '.join(f"{x['label']} #{x['process']} {x['wall'] - x['timed']:.2f} s"
                                                         for x in rows), flush=True)
    finally:
        shutil.rmtree(old, ignore_errors=True)
    over = lambda rows, first: [x['wall'] - x['timed'] for x in rows if (x['process'] == 1) == first]
    print(f"\nseconds beyond the timed phase, per worker process (mean over {rounds} rounds; a round's figure is the "
          f"mean of its processes); {os.cpu_count()} CPUs")
    print('| processes | ' + ' | '.join(got) + ' | after / before, per round |')
    print('|---|---|---|---|')
    for first, what in ((True, 'first of a configuration (probes its batch)'), (False, 'the others')):
        per = {v: [statistics.mean(over(rows, first)) for rows in got[v]] for v in got}
        b, a = per.values()
        ratios = [y / x for x, y in zip(b, a)]
        print(f"| {what} | " + ' | '.join(f"{statistics.mean(x):.2f}" for x in per.values())
              + f" | {statistics.mean(ratios):.2f} ({', '.join(f'{q:.2f}' for q in ratios)}) |")
    wall = {v: statistics.mean(x['wall'] for rows in got[v] for x in rows) for v in got}
    timed = {v: statistics.mean(x['timed'] for rows in got[v] for x in rows) for v in got}
    print('| whole process (timed phase) | ' + ' | '.join(f"{wall[v]:.2f} ({timed[v]:.2f})" for v in got) + ' | |')

def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--busy', action='store_true', help='beside two busy loops (ended with the script)')
    ap.add_argument('--rounds', type=int, default=1, help='fresh processes per configuration (default 1)')
    ap.add_argument('--before', metavar='REV', help='compare forked workers with the package at git revision REV')
    ap.add_argument('--models', nargs='+', default=['resnet18'], help='with --before (default resnet18)')
    ap.add_argument('--precisions', nargs='+', default=['fp32'], help='with --before (default fp32)')
    a = ap.parse_args()
    if a.before:
        loops = [subprocess.Popen([sys.executable, '-c', 'import time\nt = time.time()\nwhile time.time() - t < 900: pass'])
                 for _ in range(2 if a.busy else 0)]
        try: return before_after(a.before, max(a.rounds, 1), a.models, a.precisions)
        finally:
            for p in loops: p.kill(); p.wait()
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
    # short headers (a docs page is 1000 px wide): vit_tiny_patch16_224 as vit_tiny, the batch said once where it is one
    short = lambda l: re.sub(r'_patch\d+_\d+', '', l)
    same_batch = len(set(batch.values())) == 1
    head = ['phase'] + [short(l) + ('' if same_batch else f" (bs {batch[l]})") for l in labels] + ['all', 'share']
    names = sorted({f"{short(l).split()[0]}: {l.split()[0]}" for l in labels if short(l) != l})
    print(f"{'beside two busy loops' if a.busy else 'quiet'}; {os.cpu_count()} CPUs; {a.rounds} fresh process(es) "
          f"each; seconds (mean over rounds)" + (f"; every configuration at batch {batch[labels[0]]}" if same_batch else '')
          + ''.join(f"; {n}" for n in names))
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
    print(f"| a sweep's forked worker, whole | " + ' | '.join(f"{x:.2f}" for x, _ in forks)
          + f" | {sum(x for x, _ in forks):.2f} | |")
    print(f"| its seconds beyond its timed phase | " + ' | '.join(f"{x - t:.2f}" for x, t in forks)
          + f" | {sum(x - t for x, t in forks):.2f} | |")

if __name__ == '__main__':
    if len(sys.argv) > 1 and sys.argv[1] == '--child': child(sys.argv[2], sys.argv[3], float(sys.argv[4]))
    elif len(sys.argv) > 1 and sys.argv[1] == '--forked-child': forked_child(*json.loads(sys.argv[2]), processes=3)
    else: main()
