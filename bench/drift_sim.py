"""Issue 56: does the re-run interval hold, and how wide is it, at every count of re-runs on record?

Histories drawn like this project's 2-core VM: a configuration whose runs drift by a relative SD `sigma_d` (3-15%) about
its centre, each run measured to a within-run 95% half-width `w` (1-10%, over 5 worker processes, each run reporting its
own estimate of it), with 0-50 re-runs of it on record. Each history's row (one more run) gets its re-run interval from
the prior of a CPU and the re-runs (`drift.posterior_drift`, `stats.rerun_interval`'s formula, vectorised); the interval
is then checked against what came after: the configuration's centre, the median of 5 later re-runs (what
`bench/ci_coverage.py` and the issue check: the median of the other re-runs) and a single later re-run. The half-width
(log scale) is compared with the provisional one (no re-runs) and with the interval the true drift would give.

Then the issue's six runs (means 171.2 ... 185.5 img/s, 150 s apart) are replayed through the real code: each row's
interval from `machine_drift` on records of the rows before it.

    python bench/drift_sim.py                  # 20,000 histories per count, a few seconds
    python bench/drift_sim.py --histories 2000 --within 0.03
"""
import argparse, datetime, math, platform, statistics, sys
from pathlib import Path
import numpy as np
from scipy import stats
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from throughput_bench.stats import prior_drift, rerun_interval
from throughput_bench.measure.drift import machine_drift, posterior_drift, record_line

COUNTS = (0, 1, 2, 3, 5, 10, 20, 50)
SIX = (171.2, 197.5, 186.4, 213.0, 187.4, 185.5)  # the six runs of resnet18 64 px bs 8, img/s, in order
REPEATS = 5  # worker processes behind a CPU row's within-run interval

def histories(reruns:int, # re-runs on record (runs of the configuration on record minus one)
              n:int, # how many histories
              rng, # a numpy Generator
              drift=(0.03, 0.15), # the range the true drift (relative SD) is drawn from
              within=(0.01, 0.10), # the range the within-run 95% half-width is drawn from
              device:str='cpu', later:int=5)->dict:
    """`n` histories with `reruns` re-runs on record: each one's re-run half-width `H` (log scale) as the code gives it,
    the one its true drift would give (`oracle`), and whether the interval holds the centre, the median of `later`
    later re-runs, and one later re-run."""
    sd, w = rng.uniform(*drift, n), rng.uniform(*within, n)
    t = stats.t.ppf(0.975, REPEATS - 1); m = reruns + 2 + later  # on record, the row, the later re-runs
    x = rng.normal(0, 1, (n, m)) * sd[:, None] + rng.normal(0, 1, (n, m)) * (w / t)[:, None]
    said = w[:, None] * np.sqrt(rng.chisquare(REPEATS - 1, (n, m)) / (REPEATS - 1))  # each run's own half-width
    rec, row, after = x[:, :reruns + 1], x[:, reruns + 1], x[:, reruns + 2:]
    ss = reruns * (rec.var(axis=1, ddof=1) - ((said[:, :reruns + 1] / t) ** 2).mean(axis=1)) if reruns else np.zeros(n)
    prior, nu0, _ = prior_drift(device)
    s, nu = posterior_drift(prior, nu0, ss, reruns)
    h = said[:, reruns + 1]
    H = np.sqrt(h**2 + (stats.t.ppf(0.975, nu) * s) ** 2)  # stats.rerun_interval, on the log scale
    return dict(H=H, oracle=np.sqrt(h**2 + (stats.norm.ppf(0.975) * sd) ** 2), centre=np.abs(row) <= H,
                median=np.abs(np.median(after, axis=1) - row) <= H, one=np.abs(after[:, 0] - row) <= H)

def grid(n:int=20000, seed:int=0, counts=COUNTS, **kw)->list:
    "`[(reruns, coverage of centre, of the median of later re-runs, of one, median H, median |H/oracle - 1|)]`."
    rng = np.random.default_rng(seed); out = []
    for k in counts:
        h = histories(k, n, rng, **kw)
        out.append((k, h['centre'].mean(), h['median'].mean(), h['one'].mean(), float(np.median(h['H'])),
                    float(np.median(np.abs(h['H'] / h['oracle'] - 1)))))
    return out

def six_runs(means=SIX, within:float=0.03, device:str='cpu')->list:
    """The issue's runs replayed through the real code: `[(mean, low, high, covers the median of the others, basis)]`,
    each row's interval from `machine_drift` on the rows before it (within-run ±`within`, no yardstick on record)."""
    out, lines = [], []
    for i, m in enumerate(means):
        d = machine_drift(lines, device)
        lo, hi = rerun_interval(m, m * (1 - within), m * (1 + within), d.sigma, dof=d.dof)
        others = statistics.median(means[:i] + means[i + 1:])
        out.append((m, lo, hi, lo <= others <= hi, d.basis()))
        r = dict(status='ok', model_name='resnet18', mode='inference', precision='fp32', batch_size=8, threads=2,
                 input_size=64, throughput_mean=m, throughput_ci_low=m * (1 - within), repeats=REPEATS,
                 throughput_ci_high=m * (1 + within), timestamp=f"2026-11-26T10:{i * 150 // 60:02d}:{i * 150 % 60:02d}")
        lines.append(dict(record_line(r, f"run{i}"), when=float(i * 150)))
    return out

def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--histories', type=int, default=20000, help='histories per count of re-runs')
    ap.add_argument('--seed', type=int, default=0)
    ap.add_argument('--within', type=float, default=0.03,
                    help="the six runs' within-run half-width (a CPU sweep stops at ±3%%)")
    a = ap.parse_args(argv)
    prior, nu0, _ = prior_drift('cpu')
    print(f"{datetime.date.today()} on {platform.node() or '?'} ({platform.processor() or platform.machine()}): "
          f"{a.histories} histories per count, drift SD 3-15%, within-run half-width 1-10%, the CPU prior {prior:.0%} "
          f"worth {nu0} re-runs")
    rows = grid(a.histories, a.seed)
    print(f"\n{'re-runs':>7} {'holds centre':>12} {'median of 5 later':>17} {'one later':>9} {'median half':>11} "
          f"{'x provisional':>13} {'|H/true - 1|':>12}")
    p = rows[0][4]
    for k, c, m5, one, H, err in rows:
        print(f"{k:7d} {c:12.1%} {m5:17.1%} {one:9.1%} {H:11.1%} {H / p:13.2f} {err:12.1%}")
    print(f"max median half-width / provisional: {max(r[4] for r in rows) / p:.2f}")
    print(f"\nthe issue's six runs (within-run ±{a.within:.0%}), each from the rows before it:")
    six = six_runs(within=a.within)
    for m, lo, hi, ok, basis in six:
        print(f"  {m:6.1f} img/s  [{lo:6.1f}, {hi:6.1f}]  ±{(hi - lo) / 2 / m:5.1%}  {'holds' if ok else 'MISSES'} "
              f"the median of the other five; {basis}")
    halves = [(hi - lo) / 2 / m for m, lo, hi, _, _ in six]
    print(f"  {sum(r[3] for r in six)}/6 covered; half-width median ±{statistics.median(halves):.1%}, most "
          f"±{max(halves):.1%}")

if __name__ == '__main__': main()
