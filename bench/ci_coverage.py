"""Does a row's interval predict a re-run? Coverage of the 95% CI over independent re-runs, and what a configuration costs.

For each of a few configurations, run `tbench infer` N times, each time as a new command (new fork server, new worker
processes), into its own results folder. For every re-run, check whether its row's 95% CI contains the median of the
other N-1 re-runs' img/s. Do it for the row's interval (over `--repeats` worker processes) and, for comparison, for the
within-process interval the row keeps beside it (what a single process would have claimed). Re-runs of the
configurations are interleaved (A B C A B C ...), so that a drift of the machine hits them alike.

    python bench/ci_coverage.py                       # 3 configurations x 8 re-runs, the default repeats
    python bench/ci_coverage.py --reruns 8 --repeats 3 --models resnet18 vit_tiny_patch16_224 --sizes 224 112
"""
import argparse, subprocess, sys, tempfile, time, statistics
from pathlib import Path
import numpy as np
from throughput_bench.store import read_results

CONFIGS = [('resnet18', 224, 16), ('resnet18', 112, 16), ('vit_tiny_patch16_224', 224, 16)]

def one_run(model, size, batch, repeats, extra, out):
    "One fresh `tbench infer`; its row and wall seconds."
    cmd = [str(Path(sys.executable).parent / 'tbench'), 'infer', '--models', model, '--device', 'cpu', '--input-size', str(size),
           '--batch-sizes', str(batch), '--precisions', 'fp32', '--results-dir', str(out), '--wandb', 'disabled', '--no-progress', *extra]
    if repeats: cmd += ['--repeats', str(repeats)]
    t0 = time.perf_counter()
    r = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if r.returncode: raise SystemExit(f"tbench failed: {r.stderr.strip()}")
    row = read_results(out).iloc[-1]
    if row.status != 'ok': raise SystemExit(f"{model}: {row.status}: {row.error}")
    return row, wall

def covers(lo, hi, x): return lo <= x <= hi

def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument('--reruns', type=int, default=8); p.add_argument('--repeats', type=int, default=None)
    p.add_argument('--extra', nargs=argparse.REMAINDER, default=[], help="more tbench flags, e.g. --timed-seconds 15")
    a = p.parse_args()
    rows = {c: [] for c in CONFIGS}; walls = {c: [] for c in CONFIGS}
    with tempfile.TemporaryDirectory() as d:
        for i in range(a.reruns):
            for c in CONFIGS:
                row, wall = one_run(*c, a.repeats, a.extra, Path(d) / f"{c[0]}_{c[1]}_{i}")
                rows[c].append(row); walls[c].append(wall)
                half = (row.throughput_ci_high - row.throughput_ci_low) / 2
                print(f"re-run {i + 1}/{a.reruns} {c[0]} {c[1]}px bs{c[2]}: {row.throughput_mean:8.2f} ± {half:6.2f} img/s "
                      f"(n={int(row.repeats)}, contended={bool(row.contended)}, {wall:.1f} s)", flush=True)
    print(f"\n{'configuration':<34} {'median img/s':>12} {'spread':>8} {'row CI covers':>14} {'within-process':>15} {'wall s/config':>14}")
    tot = tot_in = n = 0
    for c, rs in rows.items():
        means = np.array([r.throughput_mean for r in rs])
        cov = cov_in = 0
        for j, r in enumerate(rs):
            others = float(np.median(np.delete(means, j)))
            cov += covers(r.throughput_ci_low, r.throughput_ci_high, others)
            cov_in += covers(r.throughput_ci_within_low, r.throughput_ci_within_high, others)
        tot += cov; tot_in += cov_in; n += len(rs)
        spread = (means.max() - means.min()) / np.median(means)
        print(f"{c[0] + f' {c[1]}px bs{c[2]}':<34} {np.median(means):12.2f} {spread:8.1%} {f'{cov}/{len(rs)}':>14} {f'{cov_in}/{len(rs)}':>15} "
              f"{statistics.median(walls[c]):14.1f}")
    print(f"\ncoverage of the median of the other re-runs: row CI {tot}/{n} = {tot / n:.0%}; "
          f"within-process CI {tot_in}/{n} = {tot_in / n:.0%}")

if __name__ == '__main__': main()
