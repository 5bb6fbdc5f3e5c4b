"""Do a row's intervals predict its re-runs? The within-run CI and the re-run interval, against re-runs spread over an hour.

For each of a few configurations at default settings (CPU: 5 to 20 short worker processes until the row's 95% CI is
within ±3%, or 30 s of worker time), run `tbench infer --rerun` N times, each as a new command (new fork server, new
worker processes), into one results folder, so that the machine's drift record (`<slug>_drift.tsv`) grows as a user's
would; the re-runs of the configurations are interleaved (A B C, wait, A B C, ...) and paced so that they span
`--spread-minutes`. For every re-run, check whether each of its intervals contains the median of the other N-1
re-runs' img/s: the within-run 95% CI (over the row's processes), and the re-run interval (the within-run CI and the
machine's measured drift; provisional ones counted apart). Then: does dividing img/s by the yardstick measured beside
it (`ref_gemm_gflops`, `ref_copy_gbs`) make the re-runs agree better? Last, the drift record by lag.

    python bench/ci_coverage.py                                   # 3 configurations x 8 re-runs over 70 minutes
    python bench/ci_coverage.py --reruns 4 --spread-minutes 0     # a quick look (minutes apart: not the goal's test)
    python bench/ci_coverage.py --results DIR                     # keep (or continue) the folder and its drift record
"""
import argparse, subprocess, sys, tempfile, time, statistics
from pathlib import Path
import numpy as np
sys.path.insert(0, str(Path(__file__).parent))
from common import wilson
from throughput_bench.analyse.store import read_results
from throughput_bench.stats import rerun_interval
from throughput_bench.measure.drift import read_record, reference_drift, config_drift, machine_drift

CONFIGS = [('resnet18', 64), ('vit_tiny_patch16_224', 224), ('mobilenetv3_small_100', 224)]

def one_run(model, size, extra, out):
    "One fresh `tbench infer --rerun` at default settings into `out`; its new row and the command's wall seconds."
    cmd = [str(Path(sys.executable).parent / 'tbench'), 'infer', '--models', model, '--device', 'cpu', '--input-size', str(size),
           '--precisions', 'fp32', '--results-dir', str(out), '--wandb', 'disabled', '--no-progress', '--rerun', *extra]
    t0 = time.perf_counter()
    r = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if r.returncode: raise SystemExit(f"tbench failed: {r.stderr.strip()}")
    df = read_results(out)
    row = df[df.model_name.eq(model) & df.input_size.eq(size)].iloc[-1]
    if row.status != 'ok': raise SystemExit(f"{model}: {row.status}: {row.error}")
    return row, wall

def covers(rows, lo, hi, keep=None):
    "How many rows' [lo, hi] contain the median of the other rows' img/s (of those `keep` says)."
    means = np.array([r.throughput_mean for r in rows]); k = n = 0
    for j, r in enumerate(rows):
        if keep is not None and not keep(r): continue
        others = float(np.median(np.delete(means, j)))
        k += bool(r[lo] <= others <= r[hi]); n += 1
    return k, n

def spread(xs)->float:
    "Coefficient of variation of `xs`."
    xs = np.asarray(xs, float)
    return float(xs.std(ddof=1) / xs.mean())

def stored(folder):
    "The rows an earlier measurement left in `folder`, by configuration, in the order they ran (no command times)."
    df = read_results(folder)
    rows = {c: [r for _, r in df[df.model_name.eq(c[0]) & df.input_size.eq(c[1])].iterrows()] for c in CONFIGS}
    return rows, {c: [float('nan')] * len(rs) for c, rs in rows.items()}

def measure(a, folder):
    "The re-runs, interleaved and paced: `{config: [rows]}`, `{config: [command seconds]}`."
    rows = {c: [] for c in CONFIGS}; walls = {c: [] for c in CONFIGS}
    gap = a.spread_minutes * 60 / max(a.reruns - 1, 1); t_start = time.time()
    for i in range(a.reruns):
        wait = t_start + i * gap - time.time()
        if wait > 0: print(f"(waiting {wait / 60:.1f} min: re-runs spread over {a.spread_minutes:g} min)", flush=True); time.sleep(wait)
        for c in CONFIGS:
            row, wall = one_run(*c, a.extra, folder)
            rows[c].append(row); walls[c].append(wall)
            half = (row.throughput_ci_high - row.throughput_ci_low) / 2
            print(f"{time.strftime('%H:%M')} re-run {i + 1}/{a.reruns} {c[0]} {c[1]}px: {row.throughput_mean:8.2f} ± {half:6.2f} img/s "
                  f"({half / row.throughput_mean:.1%}); re-run [{row.throughput_rerun_low:.1f}, {row.throughput_rerun_high:.1f}] "
                  f"drift {row.rerun_drift:.1%}{' provisional' if row.rerun_provisional else ''}; n={int(row.repeats)}, "
                  f"contended={bool(row.contended)}, ref {row.ref_gemm_gflops:.1f} GFLOP/s {row.ref_copy_gbs:.1f} GB/s, "
                  f"{wall:.1f} s command", flush=True)
    return rows, walls

def replay(rows, folder):
    """Each row's re-run interval as this checkout computes it from the record's earlier lines (a row's command added
    one line, in the order the commands ran): `{config: [(low, high, provisional)]}`."""
    rec = read_record(next(Path(folder).glob('*_drift.tsv')))
    order = [(c, i) for i in range(len(next(iter(rows.values())))) for c in rows]
    if len(rec) != len(order): return None
    out = {c: [] for c in rows}
    for j, (c, i) in enumerate(order):
        r, d = rows[c][i], machine_drift(rec[:j])
        out[c].append((*rerun_interval(r.throughput_mean, r.throughput_ci_low, r.throughput_ci_high, d.sigma, dof=d.dof),
                       d.provisional))
    return out

def report(rows, walls, folder):
    print(f"\n{'configuration':<30} {'median img/s':>12} {'cv':>6} {'cv/gemm':>8} {'cv/copy':>8} {'within':>7} {'re-run':>7} "
          f"{'re-run half':>12} {'command s':>10}")
    tot = {'within': [0, 0], 'rerun': [0, 0], 'measured': [0, 0], 'uncontended': [0, 0]}
    halves_in, halves_re, halves_meas = [], [], []
    for c, rs in rows.items():
        w = covers(rs, 'throughput_ci_within_low', 'throughput_ci_within_high')
        cw = covers(rs, 'throughput_ci_low', 'throughput_ci_high')
        re = covers(rs, 'throughput_rerun_low', 'throughput_rerun_high')
        me = covers(rs, 'throughput_rerun_low', 'throughput_rerun_high', keep=lambda r: not r.rerun_provisional)
        un = covers(rs, 'throughput_rerun_low', 'throughput_rerun_high', keep=lambda r: not r.contended)
        for k, v in (('within', cw), ('rerun', re), ('measured', me), ('uncontended', un)):
            tot[k][0] += v[0]; tot[k][1] += v[1]
        h_in = [(r.throughput_ci_high - r.throughput_ci_low) / 2 / r.throughput_mean for r in rs]
        h_re = [(r.throughput_rerun_high - r.throughput_rerun_low) / 2 / r.throughput_mean for r in rs]
        halves_in += h_in; halves_re += h_re
        halves_meas += [h for h, r in zip(h_re, rs) if not r.rerun_provisional]
        x = [r.throughput_mean for r in rs]
        print(f"{c[0] + f' {c[1]}px':<30} {np.median(x):12.2f} {spread(x):6.1%} "
              f"{spread([r.throughput_mean / r.ref_gemm_gflops for r in rs]):8.1%} "
              f"{spread([r.throughput_mean / r.ref_copy_gbs for r in rs]):8.1%} {f'{cw[0]}/{cw[1]}':>7} {f'{re[0]}/{re[1]}':>7} "
              f"{statistics.median(h_re):12.1%} {statistics.median(walls[c]):10.1f}")
    for k, label in (('within', 'within-run 95% CI'), ('rerun', 're-run interval, all rows'),
                     ('measured', 're-run interval, measured drift (not provisional)'),
                     ('uncontended', 're-run interval, rows not marked contended')):
        p, lo, hi = wilson(*tot[k])
        print(f"{label:<52} covers the median of the other re-runs in {tot[k][0]}/{tot[k][1]} = {p:.0%} [95% CI {lo:.0%}, {hi:.0%}]")
    print(f"median half-width: within-run {statistics.median(halves_in):.1%}; re-run {statistics.median(halves_re):.1%} "
          f"(measured drift only: {statistics.median(halves_meas) if halves_meas else float('nan'):.1%})")
    again = replay(rows, folder)
    if again:
        for label, keep in (('all rows', lambda p: True), ('measured drift', lambda p: not p)):
            k = n = 0
            for c, rs in rows.items():
                means = np.array([r.throughput_mean for r in rs])
                for j, (lo, hi, prov) in enumerate(again[c]):
                    if not keep(prov): continue
                    k += lo <= float(np.median(np.delete(means, j))) <= hi; n += 1
            p_, lo_, hi_ = wilson(k, n)
            print(f"re-run interval replayed by this checkout, {label}: {k}/{n} = {p_:.0%} [95% CI {lo_:.0%}, {hi_:.0%}]")
        halves = [(hi - lo) / 2 / r.throughput_mean for c, rs in rows.items() for r, (lo, hi, prov) in zip(rs, again[c])
                  if not prov]
        if halves: print(f"  its median half-width (measured drift): {statistics.median(halves):.1%}")
    rec = read_record(next(Path(folder).glob('*_drift.tsv')))
    s, dof, _ = config_drift(rec)
    print(f"drift record: {len(rec)} lines, {len({l['run'] for l in rec})} runs; configurations' drift "
          f"{s if s is not None else float('nan'):.1%} over {dof} re-runs")
    for col in ('ref_gemm_gflops', 'ref_copy_gbs'):
        by = reference_drift(rec, col)
        print(f"yardstick {col}: " + '; '.join(f"{k} {v[0]:.1%} ({v[1]} pairs)" if v[0] is not None else f"{k}: none"
                                               for k, v in by.items()))

def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument('--reruns', type=int, default=8)
    p.add_argument('--spread-minutes', type=float, default=70.0, help="the first and last re-runs start this far apart")
    p.add_argument('--results', help="results folder to use and keep (default: a temporary one)")
    p.add_argument('--report-only', action='store_true', help="measure nothing: report on the rows already in --results")
    p.add_argument('--extra', nargs=argparse.REMAINDER, default=[], help="more tbench flags, e.g. --wait-idle 60")
    a = p.parse_args()
    with tempfile.TemporaryDirectory() as d:
        folder = Path(a.results or d)
        rows, walls = stored(folder) if a.report_only else measure(a, folder)
        report(rows, walls, folder)

if __name__ == '__main__': main()
