"""Issue 51, the accuracy check: its interval of a drop holds the true drop at least 93% of the time (7); its cached
fp32 answers follow the images' contents (2); every image mode Pillow opens is read at its true range or refused by
name (5); bad --images/--weights stop a sweep before it starts, naming what is wrong (12); a folder too small to check
says so (16)."""
import sys, numpy as np, pytest
from pathlib import Path
from throughput_bench.measure.inference import paired_drop, drop_interval

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / 'bench'))
import accuracy_interval as sim

# ---- 7: the drop's interval ----
# cells of (fp32 accuracy, drop in points, agreement, images): the first three are where Newcombe's method 10 held the
# true drop 78-88% of the time (2,000 trials); the last is the adjusted Wald interval's own weakest kind of cell (every
# disagreement a loss, a few hundred images)
CELLS = [(0.6, 1, 0.99, 40), (0.6, 1, 0.99, 200), (0.6, 2, 0.95, 40), (0.95, 2, 0.98, 300), (0.8, 3, 0.9, 500)]

@pytest.mark.parametrize('acc,drop,agreement,n', CELLS)
def test_the_drop_interval_holds_the_true_drop_at_least_93_percent_of_the_time(acc, drop, agreement, n):
    assert sim.coverage(acc, drop, agreement, n, reps=4000) >= 0.93

def test_the_interval_of_paired_answers_is_that_of_their_counts_and_holds_the_estimate():
    rng = np.random.default_rng(0)
    for n in (1, 7, 40, 300):
        ref, cfg = rng.random(n) < 0.7, rng.random(n) < 0.6
        d, lo, hi = paired_drop(ref, cfg)
        lost, won = (ref & ~cfg).sum(), (~ref & cfg).sum()
        assert d == pytest.approx(100 * (ref.mean() - cfg.mean()))
        assert (lo, hi) == pytest.approx(tuple(100 * np.array(drop_interval(lost, won, n))))
        assert -100 <= lo <= d <= hi <= 100
    same = paired_drop(np.ones(40, bool), np.ones(40, bool))  # 40 images, none changed: a few points are not ruled out
    assert same[0] == 0 and same[1] < -3 and same[2] > 3
