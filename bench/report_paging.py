"""How much `tbench report` saves by drawing each page of a tall chart once.

A chart too tall for one page is split into halves of its models until each page fits (`analyse.charts.paged`). It
used to draw the whole chart, then each half, then each quarter...: every level drawn and thrown away. Now the first
drawing's height says how many halvings it would need were every model as tall; each of those parts is drawn once, and
two halves that fit one page together are drawn together (a model with many bars beside light ones: the same pages as
halving level by level). This script draws the report of the
seed tool's H100 file beside the committed CPU results (the charts that page: speedup, coverage) both ways, in
alternating rounds in one process, checks that the pages are pixel for pixel the same, and prints the CPU seconds of
each and their ratio.

    python bench/report_paging.py [--rounds 3]
"""
import argparse, tempfile, time
from pathlib import Path
import numpy as np
import matplotlib; matplotlib.use('Agg')
import matplotlib.pyplot as plt, matplotlib.image as mpimg
from throughput_bench.analyse import charts as C
from throughput_bench.analyse.store import read_results

ROOT = Path(__file__).resolve().parents[1]

def every_level(make, best, max_in=C.MAX_HEIGHT_IN, _fig=None):
    "The paging as it was: draw, and where too tall, halve and draw each half again (every level drawn)."
    fig = _fig if _fig is not None else make(best)
    if fig is None: return []
    by_speed = best.sort_values('throughput_mean', ascending=False, kind='stable') if 'label' in best else best
    labels = list(dict.fromkeys(by_speed.label)) if 'label' in best else []
    if fig.get_size_inches()[1] <= max_in or len(labels) < 2: return [fig]
    plt.close(fig)
    return [f for half in (labels[0::2], labels[1::2]) for f in every_level(make, best[best.label.isin(half)], max_in)]

def report(df, paging):
    "The report's paging charts drawn with `paging`: (CPU seconds, folder)."
    C.paged, out = paging, Path(tempfile.mkdtemp(prefix='tb_paging_'))
    t = time.process_time()
    C.write_report(df, out, gsd_m=30, formats=('png',), charts=['speedup', 'coverage'])
    return time.process_time() - t, out

if __name__ == '__main__':
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--rounds', type=int, default=3)
    a = ap.parse_args()
    df = read_results(ROOT / 'tests/fixtures/throughput-bench/nvidia_h100_nvl.csv', ROOT / 'results')
    once, secs = C.paged, {'every level': [], 'each page once': []}
    for r in range(a.rounds):
        for name, f in (('every level', every_level), ('each page once', once))[::1 if r % 2 == 0 else -1]:
            s, out = report(df, f); secs[name].append(s)
            if name == 'every level': old = out
            else: new = out
        pages = sorted(old.glob('*.png'))
        same = sum(np.array_equal(mpimg.imread(p), mpimg.imread(new / p.name)) for p in pages)
        print(f"round {r + 1}: every level {secs['every level'][-1]:.1f} s CPU, each page once "
              f"{secs['each page once'][-1]:.1f} s; {same} of {len(pages)} pages pixel-identical")
    C.paged = once
    med = {k: float(np.median(v)) for k, v in secs.items()}
    print(f"median CPU seconds: every level {med['every level']:.1f}, each page once {med['each page once']:.1f}: "
          f"{med['every level'] / med['each page once']:.2f}x less work")
