"""How often does the accuracy check's "95%" interval of a top-1 drop hold the true drop? A simulation over a grid of
fp32 accuracies, drops, agreements (the share of images whose answer is unchanged) and image counts: each trial draws
`n` paired answers (fp32 eager right or wrong, the configuration right or wrong) and asks `paired_drop`, the package's
own function, for its interval; the coverage of a cell is the share of its trials whose interval holds the true drop.

    python bench/accuracy_interval.py                     # the full grid, 4,000 trials a cell (a few minutes)
    python bench/accuracy_interval.py --reps 1000 --sizes 40 100   # a quicker look
"""
import argparse, itertools
import numpy as np
from throughput_bench.measure.inference import paired_drop

ACCURACIES = [0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99]
DROPS = [0, 0.5, 1, 2, 3, 5]  # points
SIZES = [40, 100, 200, 500, 1000]
AGREEMENTS = [0.9, 0.95, 0.98, 0.99, 1.0]

def cell(acc:float, drop:float, agreement:float)->np.ndarray:
    """The chances of the four kinds of image `(both right, only fp32 right, only the configuration right, both
    wrong)` for fp32 accuracy `acc`, a drop of `drop` points and `agreement`; None where they cannot go together."""
    d = drop / 100
    lost, won = (1 - agreement + d) / 2, (1 - agreement - d) / 2
    both = acc - lost
    p = np.array([both, lost, won, agreement - both])
    return None if (p < -1e-12).any() else np.clip(p, 0, None) / np.clip(p, 0, None).sum()

def table_answers(k)->tuple:
    "`(ref_ok, cfg_ok)`: boolean answers of images making the table `k` (both right, only fp32, only cfg, neither)."
    ref = np.repeat([True, True, False, False], k); cfg = np.repeat([True, False, True, False], k)
    return ref, cfg

def coverage(acc:float, drop:float, agreement:float, n:int, reps:int=4000, seed:int=0)->float:
    "The share of `reps` simulated checks of `n` images whose `paired_drop` interval holds the true drop (in a cell)."
    p = cell(acc, drop, agreement)
    tables = np.random.default_rng(seed).multinomial(n, p, size=reps)
    seen, counts = np.unique(tables, axis=0, return_counts=True)  # each table asked once
    held = [lo - 1e-9 <= drop <= hi + 1e-9 for lo, hi in (paired_drop(*table_answers(k))[1:] for k in seen)]
    return float(np.dot(held, counts) / reps)

def grid(accuracies=ACCURACIES, drops=DROPS, sizes=SIZES, agreements=AGREEMENTS)->list:
    "The cells `(accuracy, drop, agreement, n)` of the grid whose chances can go together."
    return [(a, d, g, n) for a, d, g, n in itertools.product(accuracies, drops, agreements, sizes)
            if cell(a, d, g) is not None]

def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--reps', type=int, default=4000)
    ap.add_argument('--sizes', nargs='+', type=int, default=SIZES)
    o = ap.parse_args(argv)
    rows = []
    print(f"{'accuracy':>8} {'drop':>5} {'agree':>6} {'images':>6} {'coverage':>8}")
    for a, d, g, n in grid(sizes=o.sizes):
        c = coverage(a, d, g, n, o.reps); rows.append((c, a, d, g, n))
        print(f"{a:8.2f} {d:5.1f} {g:6.2f} {n:6d} {100 * c:7.1f}%", flush=True)
    c, a, d, g, n = min(rows)
    se = 100 * np.sqrt(0.95 * 0.05 / o.reps)
    print(f"{len(rows)} cells, {o.reps} trials each (a cell's coverage +/- {se:.1f} points, one SE): lowest "
          f"{100 * c:.1f}% at accuracy {a:.2f}, drop {d:g} points, agreement {g:.2f}, {n} images; mean "
          f"{100 * np.mean([r[0] for r in rows]):.1f}%")

if __name__ == '__main__': main()
