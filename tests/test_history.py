"Issue 31: a yardstick and a re-run interval on every row, the machine's drift record, and each configuration's history."
import math
from pathlib import Path
import numpy as np
import pandas as pd
import pytest
from conftest import tbench, FAST_API
from throughput_bench import infer, report
from throughput_bench.stats import PRIOR_DOF, PRIOR_DRIFT, STEP_ALPHA, find_steps, rerun_interval
from throughput_bench.result import BenchResult
from throughput_bench.measure.drift import (DriftBook, append_record, machine_drift, read_record, record_line,
                                    record_path)
from throughput_bench.analyse.store import ResultStore, read_results
from throughput_bench.analyse.timeline import find_changes, standing_regressions, history_table

DRIFT = 0.05  # a run-to-run drift (relative SD) like this machine's between re-runs (bench/ci_coverage.py)

def history(before, after, step, seed, drift=DRIFT):
    "A synthetic history: `before` runs at 100 img/s, `after` runs at 100 x (1 + step), each moved by `drift`."
    rng = np.random.default_rng(seed)
    level = np.r_[np.full(before, 100.0), np.full(after, 100.0 * (1 + step))]
    return level * np.exp(rng.normal(0, drift, before + after))

# ---- the detector ----

# how often a step of this size, with this many runs on each side, is found within 2 runs of its place (20 histories
# each); how sharply a step can be placed is set by its size over the drift, not by the detector: at a 5% drift, a 5%
# step is placed within 2 runs 70% of the time with 40 runs a side, a 20% step always
@pytest.mark.parametrize('step,runs,least', [(-0.05, 40, 0.6), (0.05, 40, 0.6), (-0.10, 20, 0.8), (0.10, 20, 0.8),
                                             (-0.20, 10, 0.95), (0.20, 10, 0.95)])
def test_a_known_step_is_found_at_its_place_with_its_size(step, runs, least):
    "Steps of 5, 10 and 20% against this machine's drift: found, near where they are, with an interval that holds them."
    placed = covered = 0
    for seed in range(20):
        found = find_steps(history(runs, runs, step, seed), np.full(2 * runs, DRIFT**2))
        near = [s for s in found if abs(s.at - runs) <= 2]
        placed += bool(near)
        covered += any(s.ratio.low < 1 + step < s.ratio.high and (s.ratio.ratio < 1) == (step < 0) for s in near)
    assert placed >= least * 20 and covered >= least * 20 * 0.9, (placed, covered)

def test_pure_drift_raises_false_alarms_at_most_at_the_stated_rate():
    """Histories of 20 runs with no step report one in at most `STEP_ALPHA` of cases. 1,000 of them, not 50: 50 cannot
    tell a 5% rate from a 10% one (at a true 2.7%, 3 or more alarms in 50 happen one time in six)."""
    alarms = sum(bool(find_steps(history(20, 0, 0.0, seed), np.full(20, DRIFT**2))) for seed in range(1000))
    assert alarms <= STEP_ALPHA * 1000, alarms

def test_a_history_shorter_than_two_runs_has_no_step():
    assert find_steps([100.0], [DRIFT**2]) == [] and find_steps([], []) == []

# ---- the re-run interval and the drift record ----

def line(run, key, mean, half=0.0, when='2026-11-25T10:00:00', ref=100.0, contended=False):
    r = dict(status='ok', model_name=key, mode='inference', precision='fp32', batch_size=8, threads=2,
             throughput_mean=mean, throughput_ci_low=mean * (1 - half), throughput_ci_high=mean * (1 + half), repeats=5,
             ref_gemm_gflops=ref, timestamp=when, contended=contended, pytorch_version='2.14.1')
    return record_line(r, run)

def test_rerun_interval_from_a_fixed_record_by_hand(tmp_path):
    """Three configurations in two runs, no within-run error: the re-runs' drift is the pooled SD of their log run means,
    and the drift used is the prior's and theirs pooled by what each is worth (the prior 6 re-runs, they 3)."""
    p = tmp_path / 'cpu_drift.tsv'
    append_record(p, [line('r1', k, m) for k, m in (('a', 100.0), ('b', 50.0), ('c', 20.0))])
    append_record(p, [line('r2', k, m) for k, m in (('a', 110.0), ('b', 45.0), ('c', 20.0))])
    d = machine_drift(read_record(p))
    # each pair's sample variance is (log ratio)^2 / 2; pooled over 3 pairs of 1 degree of freedom each
    sd = math.sqrt((math.log(1.1) ** 2 / 2 + math.log(0.9) ** 2 / 2 + 0) / 3)
    assert d.reruns == 3 and d.provisional and math.isclose(d.config_sigma, sd, rel_tol=1e-9)  # 3 < 6: the prior leads
    # what the interval uses: s^2 = (6 * 0.08^2 + 3 * sd^2) / 9, with Student's t at 9 dof (2.262157)
    s = math.sqrt((6 * 0.08**2 + 3 * sd**2) / 9)
    assert math.isclose(d.sigma, s, rel_tol=1e-9) and d.dof == 9 == PRIOR_DOF + 3
    lo, hi = rerun_interval(80.0, 78.0, 82.0, d.sigma, dof=d.dof)  # as a sweep stamps a row
    H = math.sqrt((2 / 80) ** 2 + (2.262157 * s) ** 2)
    assert math.isclose(lo, 80 * math.exp(-H), rel_tol=1e-5) and math.isclose(hi, 80 * math.exp(H), rel_tol=1e-5)

def test_little_history_is_provisional_and_never_narrow(tmp_path):
    """One re-run of one configuration agreeing to 0.1%: provisional, and it moves the drift off the prior by its share
    (one seventh), not to 0.1%."""
    p = tmp_path / 'cpu_drift.tsv'
    append_record(p, [line('r1', 'a', 100.0), line('r2', 'a', 100.1)])
    d = machine_drift(read_record(p))
    assert d.provisional and 'provisional' in d.basis() and d.dof == PRIOR_DOF + 1
    assert math.isclose(d.sigma, math.sqrt((6 * PRIOR_DRIFT**2 + math.log(1.001) ** 2 / 2) / 7), rel_tol=1e-9)
    assert d.sigma > 0.9 * PRIOR_DRIFT

def test_contended_rows_are_not_drift(tmp_path):
    p = tmp_path / 'cpu_drift.tsv'
    for k in 'abc': append_record(p, [line('r1', k, 100.0), line('r2', k, 101.0), line('r3', k, 30.0, contended=True)])
    d = machine_drift(read_record(p))
    assert d.reruns == 3 and d.config_sigma < 0.01  # the 30 img/s runs were not counted (they would give ~70%)

def test_a_sweep_stamps_each_row_and_records_it(tmp_path):
    "Rows of earlier runs judge a later one; the row says how (its basis) and the record grows a line per row."
    store = ResultStore(tmp_path, 'cpu'); store.ensure_writable()
    rows = []
    for i, m in enumerate((100.0, 104.0, 97.0, 101.0, 99.0)):
        book = DriftBook(store)
        r = book.stamp(BenchResult(model_name='resnet18', throughput_mean=m, throughput_ci_low=m - 1, throughput_ci_high=m + 1,
                                   repeats=5, threads=2, timestamp=f"2026-11-25T1{i}:00:00"))
        store.append(r); book.record(r); rows.append(r)
    assert [r.rerun_provisional for r in rows] == [True] * 5  # 3 re-runs: the prior (worth 6) still leads
    assert all(r.throughput_rerun_low < r.throughput_mean < r.throughput_rerun_high for r in rows)
    assert rows[-1].rerun_basis.startswith('provisional: drift ') and 'and 3 re-runs in 4 runs' in rows[-1].rerun_basis
    assert 'Student t, 9 dof' in rows[-1].rerun_basis and 'worth 6 re-runs' in rows[-1].rerun_basis
    assert PRIOR_DRIFT > rows[-1].rerun_drift > 0.6 * PRIOR_DRIFT  # runs 2-4% apart pull it down, by their share
    back = read_results(tmp_path)  # the record is not a results file: a folder still reads
    assert len(back) == 5 and back.rerun_provisional.tolist() == [True] * 5
    assert np.allclose(back.throughput_rerun_high, [r.throughput_rerun_high for r in rows])
    assert len(read_record(record_path(store))) == 5

# ---- histories ----

def rows_of(vals, versions=None, start=1, **kw):
    n = len(vals)
    d = pd.DataFrame(dict(status='ok', mode='inference', model_name='resnet18', precision='fp32', batch_size=8,
                          throughput_mean=vals, throughput_ci_low=np.asarray(vals) * 0.99,
                          throughput_ci_high=np.asarray(vals) * 1.01, gpu_name='cpu', device='cpu',
                          timestamp=[f"2026-11-{start + i:02d}T10:00:00" for i in range(n)],
                          throughput_rerun_low=np.asarray(vals) / math.exp(1.96 * DRIFT),
                          throughput_rerun_high=np.asarray(vals) * math.exp(1.96 * DRIFT)) | kw)
    if versions is not None: d['pytorch_version'] = versions
    return d

def test_a_change_names_what_changed_and_old_rows_are_unknown_not_a_change():
    x = history(5, 4, -0.2, seed=3)
    v = [''] * 2 + ['2.13.0'] * 3 + ['2.14.1'] * 4  # the two oldest rows were written before versions were recorded
    ch = find_changes(rows_of(x, v))
    assert len(ch) == 1 and ch[0].step.at == 5
    text = ch[0].line()
    assert text.startswith('resnet18 fp32 bs=8: -2') and 'between torch 2.13.0 (5 runs' in text and 'and 2.14.1 (4 runs' in text
    same = find_changes(rows_of(history(4, 4, 0.0, seed=4), [''] * 4 + ['2.14.1'] * 4))
    assert same == []  # unknown -> known is no change, and no step was there

def test_a_step_without_a_version_change_says_so():
    ch = find_changes(rows_of(history(5, 5, 0.3, seed=5), ['2.14.1'] * 10))
    assert len(ch) == 1 and 'no recorded version changed' in ch[0].line() and ch[0].pct > 0

def test_only_a_standing_regression_fails():
    down = rows_of(history(6, 6, -0.2, seed=6))
    back = rows_of(np.r_[history(6, 6, -0.2, seed=7), np.full(6, 100.0)])
    assert len(standing_regressions(find_changes(down), 10)) == 1
    assert len(find_changes(back)) == 2 and standing_regressions(find_changes(back), 10) == []
    assert standing_regressions(find_changes(down), 30) == []  # a 20% regression is not beyond 30%

def test_history_cli_exit_codes_and_charts(work, cli):
    "`tbench history --fail-on-regression` exits 1 on a standing regression, with a chart per changed configuration."
    store = ResultStore(work / 'results', 'cpu'); store.ensure_writable()
    d = rows_of(history(6, 6, -0.25, seed=8), ['2.13.0'] * 6 + ['2.14.1'] * 6)
    for r in d.to_dict('records'): store.append(BenchResult(**{k: v for k, v in r.items() if k in BenchResult.__dataclass_fields__}))
    r = tbench('history', '--fail-on-regression', '10', cwd=work)
    assert r.returncode == 1, r.stderr
    assert 'between torch 2.13.0 (6 runs' in r.stdout and 'regression beyond 10%' in r.stderr
    assert (work / 'history' / 'history_01.png').stat().st_size > 0
    # a real process's exit code is checked above; the next two commands' codes in this process (no interpreter start)
    r = cli('history', '--fail-on-regression', '40', '--no-charts', cwd=work)
    assert r.returncode == 0 and 'step(s) beyond their drift' in r.stdout, r.stderr
    r = cli('history', '--models', 'resnet_18', cwd=work)
    assert r.returncode == 2 and r.stderr.strip().endswith('did you mean resnet18?') and len(r.stderr.splitlines()) == 1

def test_rows_from_a_rerun_carry_yardstick_versions_and_rerun_interval_and_a_history(work):
    "Two real runs of one configuration into one folder (worker processes, as a command runs them): both rows stand alone."
    for _ in range(2): infer(['resnet18'], **(FAST_API | dict(results_dir=work / 'results', rerun=True)))
    df = read_results(work / 'results')
    assert len(df) == 2 and (df.ref_gemm_gflops > 0).all() and (df.ref_copy_gbs > 0).all()
    assert (df.throughput_rerun_low < df.throughput_mean).all() and (df.throughput_rerun_high > df.throughput_mean).all()
    assert df.rerun_provisional.all() and df.tbench_version.str.len().gt(0).all()
    assert len(read_record(next((work / 'results').glob('*_drift.tsv')))) == 2
    t = history_table(df)
    assert len(t) == 1 and t.runs.iloc[0] == 2
    report([work / 'results'], work / 'report', formats=('png',))
    assert '## History' in (work / 'report' / 'summary.md').read_text()
