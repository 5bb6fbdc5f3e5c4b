"""What freezing the fork server's objects saves each sweep worker (`gc.freeze()` at the top of `sweep._worker`).

A sweep's workers fork from a server that imported torch, timm and the package once: about 400,000 Python objects.
A worker's garbage collection (the measurement collects before it resets the peak memory) walks every one of them
and writes to each, so the kernel copies the server's pages into the worker. Frozen first, a collection walks only the
worker's own objects. This script imports what the server imports, then forks workers that run one configuration
(`run_spec`, as `_worker` does), alternately with and without `gc.freeze()`, side by side in one run, and prints each
one's CPU seconds and page faults (the kernel's count, `wait4`) and their medians' ratio.

    python bench/fork_gc.py [--rounds 5] [--model resnet18] [--input-size 32]
"""
import argparse, dataclasses, gc, importlib, os, statistics, sys, time

def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--rounds', type=int, default=5, help='workers of each kind (default 5)')
    ap.add_argument('--model', default='resnet18')
    ap.add_argument('--input-size', type=int, default=32)
    a = ap.parse_args()
    import torch
    from throughput_bench.scale.sweep import PRELOAD, run_spec
    from throughput_bench.scale.launch import SweepOptions, check, configurations, timing_config
    from throughput_bench.measure.timing import TimingConfig
    for m in PRELOAD: importlib.import_module(m)
    o = check(SweepOptions(models=[a.model], device='cpu', input_size=a.input_size, batch_sizes=[2], precisions=['fp32'],
                           threads=1, progress=False, wandb='disabled'))
    spec = configurations(o, torch.device('cpu'))[0]
    timing = TimingConfig(**(dataclasses.asdict(timing_config('cpu')) | dict(timed_seconds=0.3, warmup=1, warmup_seconds=0)))
    print(f"{len(gc.get_objects()):,} objects in the server; {a.model} fp32 batch 2 at {a.input_size} px, a 0.3 s timed "
          f"phase; {a.rounds} workers each way, alternating")
    got = {False: [], True: []}
    for i in range(2 * a.rounds):
        freeze = bool(i % 2)
        pid = os.fork()
        if pid == 0:
            code = 1
            try:
                if freeze: gc.freeze()
                code = 0 if run_spec(spec, timing).status == 'ok' else 1
            finally: os._exit(code)
        _, status, ru = os.wait4(pid, 0)
        if os.waitstatus_to_exitcode(status): sys.exit(f"a worker failed (freeze={freeze})")
        got[freeze].append((ru.ru_utime + ru.ru_stime, ru.ru_minflt))
    med = {k: (statistics.median(c for c, _ in v), statistics.median(f for _, f in v)) for k, v in got.items()}
    for k, label in ((False, 'as before'), (True, 'gc.freeze() first')):
        cpu = ' '.join(f"{c:.2f}" for c, _ in got[k])
        print(f"{label:18s} CPU s: {cpu}  median {med[k][0]:.2f}; page faults median {med[k][1]:,.0f}")
    print(f"frozen / as before: CPU {med[True][0] / med[False][0]:.2f}, page faults {med[True][1] / med[False][1]:.2f}; "
          f"saved {med[False][0] - med[True][0]:.2f} CPU s a worker")

if __name__ == '__main__': main()
