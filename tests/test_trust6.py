"""Records beside the results that a careless or hostile hand changed: the costs record `--budget-minutes` plans from,
the drift record, the hardware record and the claims, each replaced by deep JSON, a device or a pipe; and a budget too
large to count in seconds. None of them may cost a traceback, a hang or the sweep's rows."""
import json, os, threading
from pathlib import Path
import pytest
import torch
from conftest import FAST
from throughput_bench.scale import sweep as S
from throughput_bench.scale.launch import SweepOptions, check_together
from throughput_bench.analyse.store import ResultStore, UnreadableFile
from throughput_bench.measure import drift as D
from throughput_bench.machine.hardware import device_slug
from throughput_bench.core import BenchError

DEEP = '[' * 100_000 + ']' * 100_000   # valid-looking JSON nested past the parser's recursion limit

def spec(): return S.expand(['resnet18'], ['fp32'], ['none'], [32], device='cpu')[0]

def test_a_deeply_nested_costs_record_is_measured_again(tmp_path):
    st = ResultStore(tmp_path, 'cpu_t'); S.costs_path(st).write_text(DEEP)
    assert S.read_costs(st) == {}
    S.keep_cost(st, spec(), 5.0)   # rebuilt: the record holds the new cost
    assert S.read_costs(st) == {S.cost_key(spec()): 5.0}

@pytest.mark.parametrize('kind', ['device', 'pipe'])
def test_a_costs_record_that_is_a_device_or_a_pipe_is_not_read(tmp_path, kind):
    "A symlink to /dev/zero was read until memory ran out, a pipe until someone wrote to it: both are no record."
    st = ResultStore(tmp_path, 'cpu_t'); p = S.costs_path(st)
    if kind == 'device': p.symlink_to('/dev/zero')
    else: os.mkfifo(p)
    assert S.read_costs(st) == {}
    S.keep_cost(st, spec(), 5.0)
    assert p.is_file() and S.read_costs(st) == {S.cost_key(spec()): 5.0}

@pytest.mark.parametrize('kind', ['device', 'pipe'])
def test_a_drift_record_that_is_a_device_or_a_pipe_is_set_aside_with_one_warning(tmp_path, kind):
    st = ResultStore(tmp_path, 'cpu_t'); p = D.record_path(st)
    if kind == 'device': p.symlink_to('/dev/zero')
    else: os.mkfifo(p)
    said = []
    book = D.DriftBook(st, warn=said.append)
    assert len(said) == 1 and 'not a regular file' in said[0] and '\n' not in said[0], said
    assert not p.exists() and not p.is_symlink()   # set aside: the next line starts a new record
    assert book.drift.provisional and 'not a regular file' in book.drift.damaged
    assert 'not a regular file' in D.drift_summary(next(tmp_path.glob('cpu_t_drift.damaged-*')))

def test_appending_to_a_drift_record_that_is_a_pipe_does_not_wait_for_a_reader(tmp_path):
    p = tmp_path / 'cpu_t_drift.tsv'; os.mkfifo(p)
    line = dict(timestamp='2026-11-27T04:28:04', run='r1', key='k', versions='v', throughput_mean=100.0, repeats=1)
    got = []
    def append():
        try: D.append_record(p, [line])
        except OSError as e: got.append(e)
    t = threading.Thread(target=append, daemon=True); t.start(); t.join(30)
    alive = t.is_alive()
    if alive:   # free the blocked writer before failing
        with open(p, 'rb') as f: f.read()
    assert not alive, 'append_record waited for a reader of a pipe'
    assert len(got) == 1 and 'not a regular file' in str(got[0])   # DriftBook.record keeps the row and goes on

def test_deeply_nested_hardware_record_and_claims_are_one_line_errors(tmp_path):
    st = ResultStore(tmp_path, 'cpu_t')
    st.hw_path.write_text(DEEP)
    with pytest.raises(UnreadableFile, match='not valid JSON'): st.read_hardware()
    st.claims_path.write_text(DEEP)
    with pytest.raises(UnreadableFile, match='not valid JSON'): st.claim([('a',)])

def test_infer_over_a_deeply_nested_hardware_record_is_one_line_and_exit_2(cli, tmp_path):
    res = tmp_path / 'results'; res.mkdir()
    (res / f"{device_slug(torch.device('cpu'))}_hardware.json").write_text(DEEP)
    r = cli('infer', '--models', 'resnet18', *FAST, cwd=tmp_path)
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and 'Traceback' not in r.stderr, r.stderr
    assert r.stderr.startswith('tbench infer: error: ') and 'not valid JSON' in r.stderr, r.stderr
    assert (res / f"{device_slug(torch.device('cpu'))}_hardware.json").read_text() == DEEP   # not changed

@pytest.mark.parametrize('minutes', [1e308, 1e7])
def test_a_budget_too_large_to_count_is_refused_before_measuring(minutes):
    "1e308 minutes is infinite seconds: the sweep measured its first round, then failed formatting the budget."
    with pytest.raises(BenchError, match='--budget-minutes must be at most'):
        check_together(SweepOptions(models=['resnet18'], device='cpu', budget_minutes=minutes))
    check_together(SweepOptions(models=['resnet18'], device='cpu', budget_minutes=600))   # ten hours: fine

def test_a_budget_too_large_to_count_is_one_line_and_exit_2(cli, tmp_path):
    i = FAST.index('--repeats'); fast = FAST[:i] + FAST[i + 2:]
    r = cli('infer', '--models', 'resnet18', *fast, '--budget-minutes', '1e308', cwd=tmp_path)
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and 'Traceback' not in r.stderr, r.stderr
    assert r.stderr.startswith('tbench infer: error: --budget-minutes must be at most'), r.stderr
    assert not list(tmp_path.glob('results/*.csv'))

def test_a_figure_no_device_makes_is_left_out_of_history_with_one_warning(cli, tmp_path):
    "A hand-edited 1e20 img/s (or inf) on one row was a -100% regression that failed the CI gate, with numpy's warnings."
    import csv
    src = Path(__file__).resolve().parents[1] / 'submissions' / 'cpu_amd_epyc' / 'cpu_amd_epyc.csv'
    with open(src, newline='') as f: rows = list(csv.DictReader(f))
    ok = [r for r in rows if r['status'] == 'ok']
    ok[0]['throughput_mean'], ok[1]['throughput_mean'] = '1e20', 'inf'
    (tmp_path / 'results').mkdir()
    with open(tmp_path / 'results' / src.name, 'w', newline='') as f:
        w = csv.DictWriter(f, list(rows[0])); w.writeheader(); w.writerows(rows)
    before = (tmp_path / 'results' / src.name).read_bytes()
    r = cli('history', '--no-charts', '--fail-on-regression', '10', cwd=tmp_path)
    assert r.returncode == 0 and 'regression' not in r.stderr and '-100%' not in r.stdout, (r.stdout, r.stderr)
    err = r.stderr.strip().splitlines()
    assert len(err) == 1 and err[0].startswith('warning: 2 row(s)') and 'left out' in err[0], r.stderr
    assert (tmp_path / 'results' / src.name).read_bytes() == before   # the rows are kept as they are

@pytest.mark.parametrize('seconds', [1e308, 1e9])
def test_a_cost_no_process_takes_is_not_planned_from(tmp_path, seconds):
    "1e308 s a process overflowed the smallest-budget sum (a traceback); 1e9 s suggested a budget of 5.6e7 minutes."
    import types
    from throughput_bench.scale.launch import fit_budget
    st = ResultStore(tmp_path, 'cpu_t'); s = spec()
    S.costs_path(st).write_text(json.dumps({S.cost_key(s): seconds, 'x|resnet18|y': seconds}))
    assert S.read_costs(st) == {}
    su = types.SimpleNamespace(repeats=S.Repeats(most=20, least=5, ci=0.03, seconds=30.0), store=st)
    p, left = fit_budget(S.Plan(todo=[s]), su, SweepOptions(models=['resnet18'], device='cpu', budget_minutes=2))
    assert p.todo == [s] and left == ''   # planned from the first-use estimate

def _results(tmp_path):
    import shutil
    src = Path(__file__).resolve().parents[1] / 'submissions' / 'cpu_amd_epyc'
    shutil.copytree(src, tmp_path / 'results', ignore=shutil.ignore_patterns('manifest.json'))

@pytest.mark.parametrize('by', ['a\nb', '\x1b[31mme', '<script>x</script>', 'x' * 300])
def test_submit_refuses_a_name_its_own_check_refuses(cli, tmp_path, by):
    "The folder was packed (exit 0, the git steps printed), then `submit --check` refused its manifest."
    _results(tmp_path)
    r = cli('submit', '--no-audit', 'results', '--by', by, '-o', 'subs', cwd=tmp_path)
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and '\x1b' not in r.stderr, r.stderr
    assert r.stderr.startswith('tbench submit: error: --by ') and not (tmp_path / 'subs').exists(), r.stderr

@pytest.mark.parametrize('share', ['1.5', '1e308'])
def test_submit_refuses_a_contended_share_above_one(cli, tmp_path, share):
    _results(tmp_path)
    r = cli('submit', '--no-audit', 'results', '--allow-contended', share, '-o', 'subs', cwd=tmp_path)
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and '--allow-contended' in r.stderr, r.stderr
    assert not (tmp_path / 'subs').exists()

@pytest.mark.parametrize('gsd', ['1e308', '1e-308'])
def test_report_with_a_ground_sample_distance_no_sensor_has_is_one_line(cli, tmp_path, gsd):
    "--gsd 1e308 made the km²/s axis infinite: a matplotlib traceback."
    _results(tmp_path)
    r = cli('report', '--gsd', gsd, '--formats', 'svg', cwd=tmp_path)
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and '--gsd' in r.stderr, r.stderr

def test_compare_does_not_rate_a_row_whose_mean_its_processes_contradict(cli, tmp_path):
    "B's img/s doubled by hand (its per-process figures not): the table said 24.4 vs 48.8 img/s, B/A 1.00×, not significant."
    import csv
    src = Path(__file__).resolve().parents[1] / 'submissions' / 'cpu_amd_epyc' / 'cpu_amd_epyc.csv'
    with open(src, newline='') as f: rows = list(csv.DictReader(f))
    for side, k in (('a', 1), ('b', 2)):
        (tmp_path / side).mkdir()
        with open(tmp_path / side / src.name, 'w', newline='') as f:
            w = csv.DictWriter(f, list(rows[0])); w.writeheader()
            w.writerows([{**r, 'throughput_mean': str(float(r['throughput_mean']) * k)} if r['throughput_mean'] else r
                         for r in rows])
    r = cli('compare', tmp_path / 'a', tmp_path / 'b', cwd=tmp_path)
    assert r.returncode == 0 and 'Traceback' not in r.stderr, r.stderr
    assert 'not significant' not in r.stdout and '1.00×' not in r.stdout, r.stdout
    assert 'not the mean of its per-process figures' in r.stdout, r.stdout
