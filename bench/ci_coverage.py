"""Are a row's intervals tight as well as honest? Half-width, coverage of independent re-runs, and time per configuration.

For each of a few configurations at default settings (CPU: 5 to 20 short worker processes until the row's 95% CI is
within ±3%, or 30 s of worker time), run `tbench infer` N times, each as a new command (new fork server, new worker
processes), into its own results folder; the re-runs of the configurations are interleaved (A B C A B C ...), so a drift
of the machine hits them alike. For every re-run, check whether its row's 95% CI contains the median of the other N-1
re-runs' img/s, and print: the rows' relative half-widths, that coverage (with its Wilson interval), the within-process
interval's coverage for comparison (what one process would have claimed), and the seconds each configuration took (in its
workers, and the whole command).

    python bench/ci_coverage.py                          # 3 configurations x 6 re-runs, the defaults
    python bench/ci_coverage.py --reruns 8 --extra --repeats 3     # the old default, 3 processes
"""
import argparse, subprocess, sys, tempfile, time, statistics
from pathlib import Path
import numpy as np
sys.path.insert(0, str(Path(__file__).parent))
from common import wilson
from throughput_bench.store import read_results

CONFIGS = [('resnet18', 64), ('vit_tiny_patch16_224', 224), ('mobilenetv3_small_100', 224)]

def one_run(model, size, extra, out):
    "One fresh `tbench infer` at default settings; its row and the command's wall seconds."
    cmd = [str(Path(sys.executable).parent / 'tbench'), 'infer', '--models', model, '--device', 'cpu', '--input-size', str(size),
           '--precisions', 'fp32', '--results-dir', str(out), '--wandb', 'disabled', '--no-progress', *extra]
    t0 = time.perf_counter()
    r = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if r.returncode: raise SystemExit(f"tbench failed: {r.stderr.strip()}")
    row = read_results(out).iloc[-1]
    if row.status != 'ok': raise SystemExit(f"{model}: {row.status}: {row.error}")
    return row, wall

def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument('--reruns', type=int, default=6)
    p.add_argument('--extra', nargs=argparse.REMAINDER, default=[], help="more tbench flags, e.g. --repeats 3")
    a = p.parse_args()
    rows = {c: [] for c in CONFIGS}; walls = {c: [] for c in CONFIGS}
    with tempfile.TemporaryDirectory() as d:
        for i in range(a.reruns):
            for c in CONFIGS:
                row, wall = one_run(*c, a.extra, Path(d) / f"{c[0]}_{c[1]}_{i}")
                rows[c].append(row); walls[c].append(wall)
                half = (row.throughput_ci_high - row.throughput_ci_low) / 2
                print(f"re-run {i + 1}/{a.reruns} {c[0]} {c[1]}px: {row.throughput_mean:8.2f} ± {half:6.2f} img/s ({half / row.throughput_mean:.1%}; "
                      f"n={int(row.repeats)}, batch {int(row.batch_size)}, contended={bool(row.contended)}, "
                      f"{row.wall_seconds:.1f} s in workers, {wall:.1f} s command)", flush=True)
    print(f"\n{'configuration':<30} {'median img/s':>12} {'spread':>7} {'half-width':>17} {'n':>6} {'covers':>7} {'within':>7} {'workers s':>10} {'command s':>10}")
    tot = tot_in = n = 0; halves = []; secs = []
    for c, rs in rows.items():
        means = np.array([r.throughput_mean for r in rs])
        h = [(r.throughput_ci_high - r.throughput_ci_low) / 2 / r.throughput_mean for r in rs]; halves += h
        secs += [r.wall_seconds for r in rs]
        cov = cov_in = 0
        for j, r in enumerate(rs):
            others = float(np.median(np.delete(means, j)))
            cov += r.throughput_ci_low <= others <= r.throughput_ci_high
            cov_in += r.throughput_ci_within_low <= others <= r.throughput_ci_within_high
        tot += cov; tot_in += cov_in; n += len(rs)
        spread = (means.max() - means.min()) / np.median(means)
        print(f"{c[0] + f' {c[1]}px':<30} {np.median(means):12.2f} {spread:7.1%} {f'{min(h):.1%}-{max(h):.1%} (med {statistics.median(h):.1%})':>17} "
              f"{f'{int(min(r.repeats for r in rs))}-{int(max(r.repeats for r in rs))}':>6} {f'{cov}/{len(rs)}':>7} {f'{cov_in}/{len(rs)}':>7} "
              f"{statistics.median(r.wall_seconds for r in rs):10.1f} {statistics.median(walls[c]):10.1f}")
    p_, lo, hi = wilson(tot, n); pi, loi, hii = wilson(tot_in, n)
    print(f"\nrow CI: median half-width {statistics.median(halves):.1%} (max {max(halves):.1%}); covers the median of the other re-runs in "
          f"{tot}/{n} = {p_:.0%} [95% CI {lo:.0%}, {hi:.0%}]; within-process CI: {tot_in}/{n} = {pi:.0%} [{loi:.0%}, {hii:.0%}]; "
          f"seconds per configuration in its workers: median {statistics.median(secs):.1f} (max {max(secs):.1f})")

if __name__ == '__main__': main()
