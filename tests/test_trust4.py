"Issue 40 (trust 4): what a third fault probe broke in history, the drift record, submissions, the leaderboard, energy and the allocator record."
import math
import numpy as np
import pandas as pd
import pytest
from throughput_bench.core import find_steps
from throughput_bench.store import latest, superseded, time_rank
from throughput_bench.timeline import find_changes, standing_regressions, histories
from test_history import rows_of

# ---- history: each step sized between its own neighbours ----

def levels(means, runs, sd, seed):
    rng = np.random.default_rng(seed)
    return np.repeat(np.asarray(means, float), runs) * np.exp(rng.normal(0, sd, len(means) * runs))

def test_four_levels_each_step_sized_between_its_neighbours():
    "231 / 161 / 230 / 160 img/s, 50 runs each: three steps of -30%, +43%, -30%, each interval holding the true step."
    x = levels([231, 161, 230, 160], 50, 0.03, seed=1)
    steps = find_steps(x, np.full(len(x), 0.03**2))
    assert [s.at for s in steps] == [50, 100, 150]
    for s, true in zip(steps, [161 / 231, 230 / 161, 160 / 230]):
        assert s.ratio.low < true < s.ratio.high and abs(s.ratio.ratio / true - 1) < 0.02, (s, true)

def test_the_last_of_four_levels_fails_a_25_percent_gate():
    "The standing regression is -30%: `--fail-on-regression 25` stops on it (it printed -22% and passed)."
    d = rows_of(levels([231, 161, 230, 160], 50, 0.03, seed=2), ['2.12'] * 50 + ['2.13'] * 50 + ['2.14'] * 50 + ['2.15'] * 50)
    d['timestamp'] = pd.date_range('2026-01-01', periods=len(d), freq='h').strftime('%Y-%m-%dT%H:%M:%S')
    ch = find_changes(d)
    assert len(ch) == 3 and all(abs(c.pct - t) < 3 for c, t in zip(ch, (-30.3, 42.9, -30.4))), [c.pct for c in ch]
    r = ch[-1].step.ratio
    assert r.low < 160 / 230 < r.high
    assert len(standing_regressions(ch, 25)) == 1 and 'between torch 2.14 (50 runs' in ch[-1].line()

def test_narrow_intervals_and_one_big_step_give_one_step_where_it_is():
    "±2% re-run intervals, 400 runs, one 30% drop at run 200: one step there (a p-value that underflowed gave four)."
    sd = 0.02 / 1.96
    for seed in range(5):
        x = levels([100, 70], 200, sd, seed)
        steps = find_steps(x, np.full(len(x), sd**2))
        assert [s.at for s in steps] == [200], [s.at for s in steps]
        assert steps[0].ratio.low < 0.7 < steps[0].ratio.high

def test_a_zero_width_rerun_interval_is_no_division_by_zero():
    d = rows_of([100.0, 100.0, 80.0, 80.0])
    d['throughput_rerun_low'] = d['throughput_rerun_high'] = d.throughput_mean  # zero width: the prior stands in
    ch = find_changes(d)
    assert all(math.isfinite(c.pct) for c in ch)
    assert find_steps([100.0, 100.0, 80.0], [0.0, 0.0, 0.0])[0].at == 2  # a zero variance is floored, never divided by

def test_one_rule_for_newest_a_row_stamped_early_is_old_everywhere():
    "The last line of the file is stamped a year early: `latest` and `tbench history` both take the other as newest."
    d = rows_of([100.0, 120.0])
    d.loc[1, 'timestamp'] = '2025-11-02T10:00:00'
    assert latest(d).tolist() == [True, False] and time_rank(d).tolist() == [1, 0]
    (_, _, rows), = histories(d)
    assert rows.throughput_mean.tolist() == [120.0, 100.0]
    d2 = d.assign(status=['error', 'ok'])  # the error is newer than the ok row: not superseded
    assert superseded(d2).tolist() == [False, False]
    d3 = d.assign(status=['ok', 'error'])  # the error is older than the ok row: superseded
    assert superseded(d3).tolist() == [False, True]
