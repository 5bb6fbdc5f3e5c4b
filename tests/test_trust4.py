"Issue 40 (trust 4): what a third fault probe broke in history, the drift record, submissions, the leaderboard, energy and the allocator record."
import math, re
import numpy as np
import pandas as pd
import pytest
from throughput_bench.stats import find_steps
from throughput_bench.analyse.store import latest, superseded, time_rank
from throughput_bench.analyse.timeline import find_changes, standing_regressions, histories
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

# ---- the drift record: damage never costs a measurement ----

from pathlib import Path
from conftest import FAST_API
from throughput_bench import infer
from throughput_bench.stats import rerun_interval
from throughput_bench.result import BenchResult
from throughput_bench.measure.drift import (DriftBook, MAX_REF_RUNS, append_record, machine_drift, read_record,
                                    record_line, record_path, reference_drift, scan_record)
from throughput_bench.analyse.store import ResultStore

def rline(run, key='a', mean=100.0, half=0.01, when='2026-11-25T10:00:00', ref=100.0):
    r = dict(status='ok', model_name=key, mode='inference', precision='fp32', batch_size=8, threads=2,
             throughput_mean=mean, throughput_ci_low=mean * (1 - half), throughput_ci_high=mean * (1 + half), repeats=5,
             ref_gemm_gflops=ref, timestamp=when, pytorch_version='2.14.1')
    # a figure no row can hold is damage written by something else (the writer leaves it out): put in by hand
    return record_line(dict(r, throughput_mean=100.0, throughput_ci_low=99.0, throughput_ci_high=101.0), run) | dict(
        throughput_mean=mean, within_rel=half, ref_gemm_gflops=ref)

def test_a_record_ending_in_nul_bytes_is_set_aside_and_the_run_measures(work, cli):
    "256 KB of NULs (what a crash leaves): infer stores its row (provisional, one warning); history reads; repair mends."
    res = work / 'results'
    infer(['resnet18'], **(FAST_API | dict(results_dir=res)))
    rec = next(res.glob('*_drift.tsv'))
    with open(rec, 'ab') as f: f.write(b'\0' * 256 * 1024)
    df = infer(['resnet18'], **(FAST_API | dict(results_dir=res, rerun=True, quiet=False)))
    new = df[df.measured.eq('now')]
    assert len(new) == 1 and new.status.iloc[0] == 'ok' and new.rerun_provisional.iloc[0]
    assert 'drift record was damaged' in new.rerun_basis.iloc[0]
    aside, = res.glob('*_drift.damaged-*.tsv')
    assert len(read_record(rec)) == 1  # a new record: this run's line
    r = cli('history', str(res), '--no-charts', cwd=work)
    assert r.returncode == 0, r.stderr
    r = cli('repair', str(aside), cwd=work)
    assert r.returncode == 0 and 'kept 1 rows; moved 1 unparseable line(s)' in r.stdout, r.stdout + r.stderr
    assert scan_record(aside).bad == [] and len(read_record(aside)) == 1

def test_figures_out_of_range_are_damage_never_an_overflow(tmp_path):
    "A line at 1e300 img/s, two at 1.5e308: the record is set aside, and the row is stamped with finite bounds."
    store = ResultStore(tmp_path, 'cpu'); store.ensure_writable()
    p = record_path(store)
    append_record(p, [rline('r1'), rline('r2', mean=1e300), rline('r3', mean=1.5e308), rline('r4', mean=1.5e308)])
    assert len(scan_record(p).bad) == 3
    said = []
    book = DriftBook(store, warn=said.append)
    r = book.stamp(BenchResult(model_name='a', throughput_mean=100.0, throughput_ci_low=99.0, throughput_ci_high=101.0,
                               repeats=5, threads=2))
    assert len(said) == 1 and 'set aside as cpu_drift.damaged-' in said[0] and r.rerun_provisional
    assert math.isfinite(r.throughput_rerun_low) and math.isfinite(r.throughput_rerun_high)
    assert r.throughput_rerun_low <= 99.0 and r.throughput_rerun_high >= 101.0

def test_a_damaged_record_is_set_aside_under_the_lock_appends_take(tmp_path):
    """A sweep that finds the record damaged renames it only while no other sweep appends: an append that held the lock
    first ends before the rename, and its line is in the record set aside (never in a new record without a header)."""
    import csv, threading
    from throughput_bench.measure.drift import record_lock, RECORD
    store = ResultStore(tmp_path, 'cpu'); store.ensure_writable()
    p = record_path(store)
    append_record(p, [rline('r1'), rline('r2', mean=1e300)])
    lock = record_lock(p); lock.acquire()  # another sweep appending
    book = []
    t = threading.Thread(target=lambda: book.append(DriftBook(store, warn=lambda m: None))); t.start()
    t.join(1.0)
    assert t.is_alive() and p.exists()  # waiting for the lock, the record still in place
    with open(p, 'a', newline='') as f:  # what the other sweep appends while it holds the lock
        csv.DictWriter(f, RECORD, extrasaction='ignore', lineterminator='\n', delimiter='\t').writerow(rline('r3'))
    lock.release(); t.join(60)
    aside, = tmp_path.glob('cpu_drift.damaged-*.tsv')
    assert not p.exists() and [l['run'] for l in read_record(aside)] == ['r1', 'r3']
    assert 'damaged' in book[0].drift.damaged

def test_a_stray_quote_hides_no_line_after_it(tmp_path):
    p = tmp_path / 'cpu_drift.tsv'
    append_record(p, [rline(f"r{i}") for i in range(3)])
    with open(p, 'a') as f: f.write('"2026-11-25T10:00:00\tbroken\n')
    append_record(p, [rline(f"s{i}") for i in range(3)])
    s = scan_record(p)
    assert len(s.lines) == 6 and len(s.bad) == 1

def test_the_yardstick_compares_a_bounded_number_of_runs():
    "8,000 runs: the pairs compared are those of the most recent MAX_REF_RUNS runs, not all 32 million."
    lines = [dict(run=str(i), when=60.0 * i, threads='2', ref_gemm_gflops=100.0 + i % 7, contended='False')
             for i in range(8000)]
    rd = reference_drift(lines)
    assert rd['all'][1] == MAX_REF_RUNS * (MAX_REF_RUNS - 1) // 2

def test_wide_runs_that_agree_are_not_a_measured_zero_drift(tmp_path):
    "Four runs with ±10% intervals that agree: the drift used is positive and the re-run interval holds the row's CI."
    p = tmp_path / 'cpu_drift.tsv'
    append_record(p, [rline(f"r{i}", mean=m, half=0.10) for i, m in enumerate((100.0, 101.0, 99.0, 100.5))])
    d = machine_drift(read_record(p))
    assert d.reruns == 3 and d.dof == 9 and d.config_sigma == 0.0 and d.sigma > 0.01, d
    lo, hi = rerun_interval(100.0, 90.0, 110.0, d.sigma, dof=d.dof)
    assert lo <= 90.0 and hi >= 110.0

def test_the_drift_keeps_coverage_with_three_reruns():
    """Four runs (three re-runs) of a configuration drifting 5%: a later re-run lands within the interval from the prior
    and the re-runs (Student t, 9 dof) at least 95% of the time; the re-runs' bare estimate alone covered about 75%."""
    rng = np.random.default_rng(0)
    hit = hit_pt = 0
    for k in range(600):
        x = 100 * np.exp(rng.normal(0, 0.05, 6))
        lines = [dict(rline(f"r{i}", mean=v, half=0.0), when=float(i)) for i, v in enumerate(x[:4])]
        d = machine_drift(lines)
        assert d.reruns == 3 and d.dof == 9
        a, b = x[4], x[5]  # the row, and a re-run of it
        lo, hi = rerun_interval(a, a, a, d.sigma, dof=d.dof)
        hit += lo <= b <= hi
        hit_pt += rerun_interval(a, a, a, d.config_sigma)[0] <= b <= rerun_interval(a, a, a, d.config_sigma)[1]
    assert hit / 600 >= 0.95 and hit_pt / 600 < 0.85, (hit, hit_pt)

# ---- energy: out of the counter's range is left empty with the reason; a failing counter costs the cells only ----

import time
from throughput_bench.machine.energy import Counter, Meter, MAX_WATTS

def meter_of(values:list, wraps:tuple=(), step_s:float=0.001)->Meter:
    "A meter over a counter that reads `values` in turn (an exception in the list is raised)."
    it = iter(values)
    def read():
        v = next(it)
        if isinstance(v, Exception): raise v
        return v
    return Meter(Counter('rapl', 'test zone', read, step_s, wraps))

def phase(m:Meter, seconds:float=0.05, images:int=100)->dict:
    m.start(); time.sleep(seconds); return m.stop(images)

def test_energy_outside_what_a_device_draws_is_not_stored():
    "A counter that says 10 kW, or runs backwards (read as a wrap of its 262 kJ range), gives no figure and says why."
    for vals, wraps in (([[0.0], [10_000 * 0.05 * 1.2]], ()), ([[1000.0], [900.0]], (262_143.0,))):
        got = phase(meter_of(vals, wraps))
        assert 'joules_per_image' not in got and 'watts_mean' not in got, got
        assert f"outside what one device draws (0-{MAX_WATTS:g} W)" in got['energy_note'], got
    ok = phase(meter_of([[0.0], [2.0]]))  # 2 J in 50 ms: 40 W, a figure
    assert ok['watts_mean'] > 0 and ok['energy_note'] == ''

def test_a_zone_that_wraps_faster_than_it_can_be_counted_says_so():
    "A range of 0.012 J: it wraps 50 times a second at 0.6 W; how often it wrapped in a phase cannot be told."
    got = phase(meter_of([[0.001], [0.004]], wraps=(0.012,)))
    assert 'joules_per_image' not in got and 'how often it wrapped cannot be told' in got['energy_note'], got

def test_a_counter_that_vanishes_costs_the_energy_cells_not_the_row():
    got = phase(meter_of([[0.0], FileNotFoundError(2, 'No such file or directory')]))
    assert got == dict(energy_counter='rapl', energy_note=got['energy_note']) and 'FileNotFoundError' in got['energy_note']
    got = phase(meter_of([PermissionError(13, 'Permission denied')]))
    assert 'joules_per_image' not in got and 'PermissionError' in got['energy_note'], got

# ---- the allocator record: what the process ran with is on the row and the hardware record ----

import ctypes.util, json, os
from conftest import tbench, FAST

def test_a_preload_and_an_arena_limit_are_on_the_row_and_the_hardware_record(work):
    "LD_PRELOAD of another library and MALLOC_ARENA_MAX: the row named allocator=glibc and said nothing of them."
    lib = next((p for p in ('/usr/lib/x86_64-linux-gnu/libm.so.6', '/lib/x86_64-linux-gnu/libm.so.6',
                            '/usr/lib/aarch64-linux-gnu/libm.so.6', '/lib64/libm.so.6') if Path(p).is_file()), None)
    if lib is None: pytest.skip('no libm.so.6 to preload')
    env = {'LD_PRELOAD': lib, 'MALLOC_ARENA_MAX': '2'}
    r = tbench('infer', '--models', 'resnet18', *FAST, cwd=work, env=env)
    assert r.returncode == 0, r.stderr
    row = pd.read_csv(next((work / 'results').glob('*.csv'))).iloc[0]
    assert row.status == 'ok' and f"LD_PRELOAD={lib}" in row.process_env and 'MALLOC_ARENA_MAX=2' in row.process_env
    hw = json.loads(next((work / 'results').glob('*_hardware.json')).read_text())
    assert f"LD_PRELOAD={lib}" in hw['process_env'] and 'MALLOC_ARENA_MAX=2' in hw['process_env']

# ---- tbench submit --check (rules v2): what the rows themselves contradict, files, manifests, names ----

import csv as _csv, hashlib, shutil
from test_submit import results
from throughput_bench.analyse.submit import check_folder, leaderboard, RULES_VERSION

def packed(cli, tmp_path, **kw)->Path:
    "A passing submission folder, packed by `tbench submit`."
    results(tmp_path / 'results', **kw)
    r = cli('submit', '--no-audit', 'results', '-o', 'subs', '--by', 'tester', cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    return tmp_path / 'subs' / 'cpu_t'

def forge(folder:Path, edit, hw_edit=None, manifest_edit=None):
    "Edit the CSV rows (and the hardware record, the manifest), then re-seal every checksum as a forger would."
    p = folder / 'cpu_t.csv'
    with open(p, newline='') as f: rows = list(_csv.DictReader(f))
    for r in rows: edit(r)
    with open(p, 'w', newline='') as f:
        w = _csv.DictWriter(f, list(rows[0])); w.writeheader(); w.writerows(rows)
    if hw_edit:
        h = folder / 'cpu_t_hardware.json'; d = json.loads(h.read_text()); hw_edit(d); h.write_text(json.dumps(d))
    m = json.loads((folder / 'manifest.json').read_text())
    for name in m['files']: m['files'][name]['sha256'] = hashlib.sha256((folder / name).read_bytes()).hexdigest()
    if manifest_edit: manifest_edit(m)
    (folder / 'manifest.json').write_text(json.dumps(m))

def said(folder:Path)->str: return '\n'.join(check_folder(folder))

def set_(**kv):
    def edit(r):
        for k, v in kv.items(): r[k] = v(r) if callable(v) else v
    return edit

FORGERIES = {
    'a narrowed interval': (set_(throughput_ci_low=lambda r: float(r['throughput_mean']) * 0.999,
                                 throughput_ci_high=lambda r: float(r['throughput_mean']) * 1.001), 'recomputed'),
    'every figure x3': (set_(**{c: (lambda c: lambda r: float(r[c]) * 3)(c) for c in
                               ('throughput_mean', 'throughput_ci_low', 'throughput_ci_high')}), 'recomputed'),
    'ten repeats beside five figures': (set_(repeats='10'), 'recomputed'),
    'a negative rate': (set_(throughput_mean='-100', throughput_ci_low='-110', throughput_ci_high='-90'), 'plausible'),
    '1e12 img/s': (set_(throughput_mean='1e12', throughput_ci_low='0.9e12', throughput_ci_high='1.1e12',
                        throughput_repeats='1e12;1e12;1e12;1e12;1e12'), 'plausible'),
    'an interval beside its mean': (set_(throughput_ci_low=lambda r: 2 * float(r['throughput_mean']),
                                         throughput_ci_high=lambda r: 2 * float(r['throughput_mean'])), 'plausible'),
    'GPU rows': (set_(device_type='cuda', gpu_name='NVIDIA H100'), 'device'),
    'torch 99.0': (set_(pytorch_version='99.0'), 'exist'),
    'a Cyrillic e': (set_(model_name=lambda r: r['model_name'].replace('e', '\u0435')), 'identity'),
}

@pytest.mark.parametrize('what', sorted(FORGERIES))
def test_a_forgery_with_resealed_checksums_fails_the_check(cli, tmp_path, what):
    folder = packed(cli, tmp_path)
    edit, rule = FORGERIES[what]
    forge(folder, edit)
    lines = check_folder(folder)
    assert any(f": {rule}: " in l for l in lines), lines
    r = cli('submit', '--check', folder, cwd=tmp_path)
    assert r.returncode == 1 and f'pass rules v{RULES_VERSION}' not in r.stdout

def test_files_are_regular_files_inside_the_folder(cli, tmp_path):
    folder = packed(cli, tmp_path)
    outside = tmp_path / 'elsewhere.csv'; shutil.move(folder / 'cpu_t.csv', outside)
    (folder / 'cpu_t.csv').symlink_to(outside)
    assert 'not a regular file inside the folder' in said(folder)

def test_a_deep_or_huge_manifest_is_one_line_and_the_board_leaves_the_folder_off(cli, tmp_path):
    good = packed(cli, tmp_path)
    bad = good.with_name('cpu_deep'); shutil.copytree(good, bad)
    (bad / 'manifest.json').write_text('[' * 200_000 + ']' * 200_000)
    lines = check_folder(bad)
    assert len(lines) == 1 and 'manifest.json' in lines[0], lines
    page = leaderboard(good, bad, output=tmp_path / 'board').read_text()
    assert 'cpu_deep' in page and 'Left off' in page and '1 submission(s) checked' in page
    m = json.loads((good / 'manifest.json').read_text()); m['submitted_by'] = 'x' * 100_000
    (bad / 'manifest.json').write_text(json.dumps(m))
    assert 'submitted_by' in said(bad) and 'over 200 characters' in said(bad)

def test_names_are_printed_escaped_never_raw(cli, tmp_path):
    folder = packed(cli, tmp_path)
    (folder / 'evil\nF7: 0 problems, all good').write_text('x')
    (folder / 'x\x1b[2J').write_text('x')
    r = cli('submit', '--check', folder, cwd=tmp_path)
    assert r.returncode == 1 and '\x1b' not in r.stdout
    assert not any(l.startswith('F7: 0 problems') for l in r.stdout.splitlines()), r.stdout
    assert 'evil\\nF7' in r.stdout and 'x\\x1b[2J' in r.stdout

def test_a_folder_named_as_a_script_url_is_refused_and_links_never_carry_a_scheme(cli, tmp_path):
    good = packed(cli, tmp_path)
    evil = tmp_path / 'javascript:alert(document.domain)'; shutil.copytree(good, evil)
    assert 'not a device slug' in said(evil)
    page = leaderboard(good, evil, output=tmp_path).read_text()  # the page beside the folders: relpath has no ../
    hrefs = re.findall(r'href="([^"]*)"', page)
    assert hrefs and not any(h.lower().lstrip().startswith('javascript') for h in hrefs), hrefs
    assert all(h.startswith(('./', '../', '#', 'data:')) for h in hrefs), hrefs

def test_repair_refuses_a_file_that_is_not_a_drift_record(cli, tmp_path):
    p = tmp_path / 'notes_drift.tsv'; p.write_bytes(b'x\ty\n\0\0')
    r = cli('repair', str(p), cwd=tmp_path)
    assert r.returncode == 2 and 'not a drift record' in r.stderr and len(r.stderr.strip().splitlines()) == 1
    assert p.read_bytes() == b'x\ty\n\0\0' and not (tmp_path / 'notes_drift.tsv.rejected').exists()
