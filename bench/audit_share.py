"""What a submission's audits cost against the sweep they audit: the audit process as it was and as it is, side by side.

A sweep of the README's kind (`tbench infer --models ... --device cpu --precisions fp32`, the CPU's default timing and
worker processes) is measured once into a folder of its own; then its rows are audited in alternating rounds, each
way in turn on the same rows, so that a drift of the host falls on both:

- **before**: a warm-up call, a timed phase of at least 1 s for the seed's img/s, the gate's call, a warm call and 3
  pairs of repeated against distinct inputs (`AuditConfig(pairs=3, most_pairs=3, timed_phase=True)`: the process
  `tbench submit` ran until this change, less the yardstick it no longer measures beside an audit);
- **two pairs**: the gate's call (it warms the model), then 2 pairs, the distinct calls the seed's img/s, more pairs
  only while a verdict is close (`AuditConfig(pairs=2)`: the default until one pair was enough);
- **after**: the same from 1 pair (`AuditConfig()`, the default).

It prints each audit's seconds and verdict, each round's share of the sweep's seconds on those rows (the goal: 10%),
and the ratios of the ways' seconds in each round.

    python bench/audit_share.py [--models resnet18 mobilenetv3_large_100] [--rounds 2] [--busy]

`--busy` starts two busy loops (ended with the script, at most 15 minutes) beside the audits (not the sweep).
"""
import argparse, subprocess, sys, tempfile, time
from pathlib import Path

def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--models', nargs='+', default=['resnet18', 'mobilenetv3_large_100'])
    ap.add_argument('--rounds', type=int, default=2)
    ap.add_argument('--busy', action='store_true')
    a = ap.parse_args()
    from throughput_bench.api import infer
    from throughput_bench.analyse.submit import Submission, device_files
    from throughput_bench.analyse.audit import AuditConfig, run_audits
    ways = {'before': AuditConfig(pairs=3, most_pairs=3, timed_phase=True), 'two pairs': AuditConfig(pairs=2),
            'after': AuditConfig()}
    with tempfile.TemporaryDirectory() as d:
        t = time.monotonic()
        infer(a.models, device='cpu', precisions=['fp32'], results_dir=f"{d}/results", progress=False,
              wandb='disabled', wait_idle=0, quiet=True)
        csv, hw, _ = device_files(f"{d}/results")
        sub = Submission.read(csv, hw)
        print(f"sweep: {len(sub.rows)} rows in {time.monotonic() - t:.0f} s "
              f"(their processes' wall seconds: {sub.rows.wall_seconds.sum():.0f})")
        busy = [subprocess.Popen([sys.executable, '-c', 'import time\nt=time.time()\nwhile time.time()-t<900: pass'])
                for _ in range(2 if a.busy else 0)]
        try:
            ratios = []
            for r in range(a.rounds):
                order = list(ways) if r % 2 == 0 else list(ways)[::-1]
                spent = {}
                for w in order:
                    recs, s = run_audits(sub, ways[w], log=lambda m, w=w: print(f"  {w}: {m}"))
                    spent[w] = s['audit_seconds']
                    calls = [x['cache_pairs'] for x in recs]
                    print(f"round {r + 1} {w}: {s['audit_seconds']:.1f} s, {s['share']:.1%} of the sweep's "
                          f"{s['sweep_seconds']:.0f} s; {s['passed']} of {s['configurations']} passed; pairs {calls}")
                ratios.append((spent['before'] / spent['after'], spent['two pairs'] / spent['after']))
                print(f"round {r + 1}: before / after = {ratios[-1][0]:.2f}x, two pairs / after = {ratios[-1][1]:.2f}x")
            print(f"over {a.rounds} round(s): before / after {', '.join(f'{x:.2f}x' for x, _ in ratios)}; "
                  f"two pairs / after {', '.join(f'{y:.2f}x' for _, y in ratios)}")
        finally:
            for p in busy: p.kill()

if __name__ == '__main__': main()
