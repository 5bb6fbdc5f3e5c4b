"""Issue 51 (trust 5), the store's findings: every number a row holds reads back (3); the drift record and a results CSV
lose no line to a repair beside a writer (1) and keep good lines byte for byte (15); history orders what it can and
says what it cannot (4); a re-run keeps the accuracy check and an unchecked row never hides a checked one (9)."""
import dataclasses, math, threading, time
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from throughput_bench.core import plain_text
from throughput_bench.result import BenchResult
from throughput_bench.analyse.store import ResultStore, UnreadableFile, read_results, repair, scan_csv
from throughput_bench.measure.drift import (RECORD, append_record, parse_line, read_record, record_line, repair_record,
                                            scan_record)

# ---- 3: numbers of numpy's types are written as figures, not as `np.float64(0.0)` ----
NUMERIC = [f for f in dataclasses.fields(BenchResult) if f.type in ('Optional[float]', 'Optional[int]')]
finite = st.floats(-1e9, 1e9, allow_nan=False, width=64)

def numpy_row():
    "A row of numpy scalars (float64, float32, int64) in every numeric column of `BenchResult`."
    ints = st.builds(np.int64, st.integers(-2**40, 2**40))
    floats = st.one_of(st.builds(np.float64, finite), st.builds(np.float32, finite))
    return st.fixed_dictionaries({f.name: ints if f.type == 'Optional[int]' else floats for f in NUMERIC})

@settings(max_examples=5, deadline=None)
@given(st.lists(numpy_row(), min_size=1, max_size=6))
def test_every_numeric_column_reads_back_from_numpy_scalars(tmp_path_factory, rows):
    "Each numeric column of `BenchResult`, given a numpy scalar, reads back as its value (rounded to 6 decimals)."
    store = ResultStore(tmp_path_factory.mktemp('s'), 'cpu_x')
    store.append(*[BenchResult(model_name='resnet18', **r) for r in rows])
    got = read_results(store.csv_path)
    for i, row in enumerate(rows):
        for k, v in row.items():
            assert math.isclose(got[k].iloc[i], round(float(v), 6), rel_tol=1e-12, abs_tol=1e-9), (k, got[k].iloc[i], v)

def test_top1_drop_of_numpy_type_is_not_stored_as_its_repr(tmp_path):
    "The probe's case: an accuracy row's drop and its interval, numpy floats, are figures in the file."
    store = ResultStore(tmp_path, 'cpu_x')
    store.append(BenchResult(model_name='resnet18', throughput_mean=1.0, top1_drop=np.float64(0.0),
                           top1_drop_ci_low=np.float64(-1.25), top1_drop_ci_high=np.float32(2.5)))
    assert 'np.float' not in store.csv_path.read_text()
    got = read_results(store.csv_path).iloc[0]
    assert (got.top1_drop, got.top1_drop_ci_low, got.top1_drop_ci_high) == (0.0, -1.25, 2.5)

# ---- 1: a repair beside a running writer loses no line ----

ROW = dict(status='ok', model_name='resnet18', mode='inference', precision='fp32', batch_size=8, throughput_mean=100.0,
           throughput_ci_low=97.0, throughput_ci_high=103.0, repeats=5, threads=2, ref_gemm_gflops=80.0,
           timestamp='2026-11-25T10:00:00', pytorch_version='2.14.1')

def beside(write, n:int, mend, most:int=2000):
    "Run `write(i)` for i < n in a thread while `mend()` runs in a loop (at most `most` times); the repairs done."
    done, errors, mends = threading.Event(), [], [0]
    def writer():
        try:
            for i in range(n):
                write(i)
                if i in (n // 3, 2 * n // 3):  # a third of the appends in: wait for the next repair (a busy host's
                    seen, t0 = mends[0], time.monotonic()  # scheduler may otherwise run every append first)
                    while mends[0] == seen and mends[0] < most and time.monotonic() - t0 < 60: time.sleep(0.001)
        except BaseException as e: errors.append(e)
        finally: done.set()
    t = threading.Thread(target=writer); t.start()
    k = 0
    while not done.is_set() and k < most: mend(); k += 1; mends[0] = k; time.sleep(0.005)  # let the writer take the lock
    t.join()
    assert not errors, errors
    return k

def test_drift_repair_beside_appends_keeps_every_line(tmp_path):
    "`echo garbage >> X_drift.tsv; tbench repair X_drift.tsv` in a loop beside a sweep's appends: every line is kept."
    p = tmp_path / 'cpu_x_drift.tsv'
    append_record(p, [record_line(ROW, 'first')])
    def mend():
        with open(p, 'ab') as f: f.write(b'garbage\n')  # as `echo` would: no lock
        repair_record(p)
    n = 60
    k = beside(lambda i: append_record(p, [record_line(dict(ROW, throughput_mean=float(i + 1)), 'r')]), n, mend)
    assert k > 1
    kept = [l['throughput_mean'] for l in read_record(p) if l['run'] == 'r']
    assert sorted(kept) == [float(i + 1) for i in range(n)]

def test_csv_repairs_beside_appends_keep_every_row(tmp_path):
    "Two repairs of a results CSV beside a writer (refused while a bad line is there, so it retries): no row is lost."
    store = ResultStore(tmp_path, 'cpu_x'); store.append(BenchResult(model_name='first', throughput_mean=1.0))
    def write(i):
        while True:
            try: return ResultStore(tmp_path, 'cpu_x').append(BenchResult(model_name=f'm{i}', throughput_mean=1.0))
            except UnreadableFile: pass  # a bad line is there: the store refuses to add to it until it is repaired
    stop = threading.Event()
    def other():
        while not stop.is_set(): repair(store.csv_path)
    t = threading.Thread(target=other); t.start()
    def mend():
        with open(store.csv_path, 'ab') as f: f.write(b'"garbage\n')
        repair(store.csv_path)
    try: beside(write, 60, mend)
    finally: stop.set(); t.join()
    repair(store.csv_path)
    assert sorted(read_results(store.csv_path).model_name) == sorted(['first'] + [f'm{i}' for i in range(60)])

# ---- 15: a record with a byte order mark or CR LF lines is read, and repaired byte for byte ----
HEAD = '\t'.join(RECORD).encode()

def _lines_of(n:int)->list:
    import csv, io
    buf = io.StringIO(); w = csv.DictWriter(buf, RECORD, lineterminator='\n', delimiter='\t')
    w.writerows(record_line(dict(ROW, throughput_mean=float(i + 1)), 'r') for i in range(n))
    return buf.getvalue().encode().splitlines()

@pytest.mark.parametrize('bom,eol', [(b'\xef\xbb\xbf', b'\n'), (b'', b'\r\n'), (b'\xef\xbb\xbf', b'\r\n')])
def test_bom_and_crlf_records_are_repaired_byte_for_byte(tmp_path, bom, eol):
    a, b = _lines_of(2)
    p = tmp_path / 'cpu_x_drift.tsv'
    p.write_bytes(bom + HEAD + eol + a + eol + b'garbage' + eol + b + eol)
    s = scan_record(p)
    assert len(s.lines) == 2 and s.bad == [b'garbage' + eol.rstrip(b'\n')]  # the header is no damage, a BOM or not
    assert repair_record(p)[:2] == (2, 1)
    assert p.read_bytes() == bom + HEAD + eol + a + eol + b + eol  # the good lines (and the header) as they were
    assert (tmp_path / 'cpu_x_drift.tsv.rejected').read_bytes() == b'garbage' + eol
    assert repair_record(p)[:2] == (2, 0)

@pytest.mark.parametrize('bom,eol', [(b'\xef\xbb\xbf', b'\n'), (b'', b'\r\n')])
def test_a_results_csv_is_repaired_byte_for_byte(tmp_path, bom, eol):
    "A results CSV saved with a BOM or CR LF lines: a repair keeps its header and good rows as they were."
    store = ResultStore(tmp_path, 'cpu_x')
    store.append(BenchResult(model_name='a', throughput_mean=1.0), BenchResult(model_name='b', throughput_mean=2.0))
    head, a, b = store.csv_path.read_bytes().splitlines()
    store.csv_path.write_bytes(bom + head + eol + a + eol + b'"garbage' + eol + b + eol)
    assert repair(store.csv_path)[:2] == (2, 1)
    assert store.csv_path.read_bytes() == bom + head + eol + a + eol + b + eol
    assert [r['model_name'] for r in store.rows()] == ['a', 'b']

# ---- the parsers a file feeds: generated lines round-trip or are refused as damage, never crash ----

line_bytes = st.one_of(st.binary(max_size=80), st.text(max_size=80).map(lambda t: t.encode('utf-8')),
                       st.lists(st.sampled_from(['2026-11-25T10:00:00', 'r', '', '1e300', 'nan', '"', '5', 'x\r',
                                                 'False', '\x00', '\ufeff']), min_size=12, max_size=12
                                ).map(lambda f: '\t'.join(f).encode()))

@settings(max_examples=50, deadline=None)
@given(st.lists(line_bytes, max_size=6))
def test_drift_lines_parse_or_are_damage(tmp_path_factory, extra):
    "Any bytes after a good record: each line is good or damage, and a repair keeps the good ones byte for byte."
    p = tmp_path_factory.mktemp('d') / 'cpu_x_drift.tsv'
    a = _lines_of(1)[0]
    p.write_bytes(HEAD + b'\n' + a + b'\n' + b'\n'.join(extra) + b'\n')
    s = scan_record(p)
    lines = [b for b in (a + b'\n' + b'\n'.join(extra)).split(b'\n') if b.strip()]
    assert len(s.lines) + len(s.bad) == len(lines) and s.raw[0] == a
    assert s.raw == [b for b in lines if parse_line(b.rstrip(b'\r')) is not None]
    repair_record(p)
    again = scan_record(p)
    assert again.bad == [] and again.raw == s.raw

finite_pos = lambda lo, hi: st.floats(lo, hi, allow_nan=False, exclude_max=True)

@settings(max_examples=50, deadline=None)
@given(finite_pos(1e-3, 1e8), finite_pos(1.0, 1e4), st.integers(1, 1000),
       st.text(st.characters(blacklist_categories=('Cs', 'Cc')), min_size=1, max_size=20))
def test_drift_line_round_trips(m, ref, repeats, run):
    "A line `record_line` writes reads back with its figures and its run."
    import csv, io
    buf = io.StringIO()
    csv.DictWriter(buf, RECORD, lineterminator='\n', delimiter='\t').writerow(
        record_line(dict(ROW, throughput_mean=m, throughput_ci_low=m * 0.9, throughput_ci_high=m * 1.1,
                         repeats=repeats, ref_gemm_gflops=ref), run))
    d = parse_line(buf.getvalue().rstrip('\n').encode())
    assert d is not None and d['run'] == run
    assert (d['throughput_mean'], d['repeats'], d['ref_gemm_gflops']) == (m, repeats, ref)

anything = st.one_of(st.none(), st.booleans(), st.floats(), st.integers(-10**9, 10**12), st.text(max_size=40),
                     st.binary(max_size=8), st.sampled_from(['2026-01-01T10:00:00', '0001-01-01T00:00:00', 'yesterday',
                                                             '"' + 'a' * 140_000, 'res\udcffnet', 'a\x00b', 'a\nb']))

@settings(max_examples=150, deadline=None)
@given(st.floats(), st.floats(), st.floats(), anything, anything, anything, anything, anything, anything, anything)
def test_what_record_line_writes_is_never_damage(tmp_path_factory, m, lo, hi, ref, repeats, when, name, run_id, run,
                                                  threads):
    """The writer never writes a line its reader sets aside, whatever a row holds (a hostile probe found odd times,
    booleans, line breaks, NULs, lone surrogates and a 140,000-character quoted name): a ConvNeXt-T process of two timed
    steps had a half-width 36.8x its mean, above the reader's old limit of 10, and the next sweep set the whole record
    aside as damaged."""
    line = record_line(dict(ROW, throughput_mean=m, throughput_ci_low=lo, throughput_ci_high=hi, repeats=repeats,
                            ref_gemm_gflops=ref, timestamp=when, model_name=name, run_id=run_id, threads=threads), run)
    if line is None: return  # no figure (or one no row can hold): no line
    p = tmp_path_factory.mktemp('d') / 'x_drift.tsv'
    append_record(p, [line])
    got = scan_record(p)
    assert got.bad == [] and len(got.lines) == 1, (line, got.bad)

def test_a_wide_interval_of_one_process_is_a_figure_not_damage(tmp_path):
    "The line that set a real record aside (within_rel 36.8) now reads back as written, and the record stays in use."
    p = tmp_path / 'x_drift.tsv'
    append_record(p, [record_line(dict(ROW, throughput_mean=9.7116, throughput_ci_low=-347.9, throughput_ci_high=367.3,
                                       repeats=1), 'r')])
    s = scan_record(p)
    assert s.bad == [] and s.lines[0]['within_rel'] == pytest.approx(36.83, abs=0.01)

@settings(max_examples=50, deadline=None)
@given(st.lists(st.text(max_size=30), min_size=1, max_size=4))
def test_csv_text_cells_round_trip(tmp_path_factory, texts):
    "Any text in a row's cells (quotes, commas, line breaks, control characters) reads back as its plain text."
    store = ResultStore(tmp_path_factory.mktemp('c'), 'cpu_x')
    store.append(*[BenchResult(model_name='m' + t, error=t, run_id=t[::-1]) for t in texts])
    rows = store.rows()
    assert [(r['model_name'], r['error'], r['run_id']) for r in rows] == [
        tuple(plain_text(' '.join(v.splitlines())) for v in ('m' + t, t, t[::-1])) for t in texts]

@settings(max_examples=50, deadline=None)
@given(st.lists(line_bytes, max_size=6))
def test_csv_lines_parse_or_are_damage(tmp_path_factory, extra):
    "Any bytes after a good results file: each line is a row, blank or damage; a repair keeps every row it read."
    store = ResultStore(tmp_path_factory.mktemp('c'), 'cpu_x')
    store.append(BenchResult(model_name='resnet18', throughput_mean=1.0))
    with open(store.csv_path, 'ab') as f: f.write(b'\n'.join(extra) + b'\n')
    try: s = scan_csv(store.csv_path)
    except UnreadableFile: return  # refused whole, the file unchanged
    n = sum(1 for b in store.csv_path.read_bytes().split(b'\n')[1:] if b.strip(b' \t\r'))
    assert s.rows + len(s.bad) <= n and s.rows >= 1
    rows = list(s.dicts())
    repair(store.csv_path)
    assert scan_csv(store.csv_path).bad == [] and store.rows() == rows

# ---- 9: a re-run keeps what made the row; an unchecked row never hides a checked one ----
def test_rerun_command_of_a_checked_row_gives_its_images_and_gate(tmp_path):
    "The printed re-run command names --images and --accuracy-gate as the sweep had them, and parses back to them."
    import shlex
    from throughput_bench.scale.launch import SweepOptions, rerun_command
    from throughput_bench.cli import main_parser
    imgs = tmp_path / 'my images'; imgs.mkdir()
    o = SweepOptions.of(models=['resnet18'], precisions=['bf16'], device='cpu', images=str(imgs), accuracy_gate=2.5,
                        tf32=False, budget_minutes=3)
    cmd = rerun_command([BenchResult(model_name='resnet18', precision='bf16', accuracy_check='top-1 agrees 99%')], o)
    argv = shlex.split(cmd)[1:]
    a = vars(main_parser(argv).parse_args(argv))
    assert (a['images'], a['accuracy_gate'], a['tf32'], a['precisions']) == (str(imgs), 2.5, False, ['bf16']), cmd
    assert 'budget_minutes' not in a  # how long it measures is the re-run's own
    o = SweepOptions.of(mode='training', models=['resnet18'], device='cpu', dataloader=True, nproc=2, lr=0.1, repeats=1)
    argv = shlex.split(rerun_command([BenchResult(model_name='resnet18', mode='training', world_size=2)], o))[1:]
    a = vars(main_parser(argv).parse_args(argv))
    assert (argv[0], a['dataloader'], a['nproc'], a['lr'], 'repeats' in a) == ('train', True, 2, 0.1, False), argv

def _rows(store, checks):
    "Rows of one configuration, oldest first, each with its accuracy words and figure."
    for i, c in enumerate(checks):
        store.append(BenchResult(model_name='resnet18', precision='bf16', batch_size=2, status='ok', device_type='cpu',
                                 throughput_mean=10.0 + i, accuracy_check=c, timestamp=f'2026-11-0{i + 1}T10:00:00'))

def test_a_newer_unchecked_row_never_supersedes_a_checked_one(tmp_path):
    "Checked, then a re-run without --images: the checked row is the figure shown (charts, report, the sweep's summary)."
    from throughput_bench.analyse.store import latest
    from throughput_bench.scale.launch import rows_for
    from throughput_bench.core import BenchSpec
    store = ResultStore(tmp_path, 'cpu_x')
    _rows(store, ['top-1 agrees with fp32 eager on 99% of 40 images', 'accuracy unchecked: no --images'])
    df = read_results(store.csv_path)
    assert df[latest(df)].throughput_mean.tolist() == [10.0]
    spec = BenchSpec('resnet18', precision='bf16', batch_size=2)
    assert rows_for(store, [spec]).throughput_mean.tolist() == [10.0]
    _rows(ResultStore(tmp_path, 'cpu_y'), ['accuracy unchecked: no --images', 'top-1 agrees 99%', 'top-1 agrees 98%'])
    df = read_results(tmp_path / 'cpu_y.csv')  # checked rows replace each other, and an unchecked one, as before
    assert df[latest(df)].throughput_mean.tolist() == [12.0]

# ---- 4: rows history cannot place in time are said, put before the dated ones, and fail the gate ----
def _history(folder, figures, stamps):
    "A results folder with one configuration's rows, in file order, each with its figure and stamp ('' none)."
    store = ResultStore(folder, 'cpu'); store.ensure_writable()
    for m, t in zip(figures, stamps):
        store.append(BenchResult(model_name='resnet18', precision='fp32', batch_size=8, status='ok', mode='inference',
                                 device='cpu', device_type='cpu', gpu_name='cpu', throughput_mean=m,
                                 throughput_ci_low=m * 0.99, throughput_ci_high=m * 1.01, throughput_rerun_low=m / 1.03,
                                 throughput_rerun_high=m * 1.03, timestamp=t))

def _noisy(level, n, seed): return [float(x) for x in level * np.exp(np.random.default_rng(seed).normal(0, 0.01, n))]
DAYS = [f"2026-11-{d:02d}T10:00:00" for d in range(1, 29)]

def test_old_rows_stamped_2099_do_not_turn_a_regression_into_a_gain(cli, tmp_path):
    "Six old rows stamped 2099, then six dated rows 30% slower: the -30% stands and the gate fails; the 2099 rows are named."
    _history(tmp_path / 'results', _noisy(100, 6, 1) + _noisy(70, 6, 2), ['2099-01-01T00:00:00'] * 6 + DAYS[:6])
    r = cli('history', 'results', '--fail-on-regression', '10', '--no-charts', cwd=tmp_path)
    assert r.returncode == 1, (r.stdout, r.stderr)
    assert 'regression beyond 10%' in r.stderr and ': -30%' in r.stderr and '+4' not in r.stdout
    note = [l for l in r.stderr.splitlines() if 'cannot be placed in time' in l]
    assert len(note) == 1 and "6 stamped in the future ('2099-01-01T00:00:00')" in note[0] and len(note[0]) < 200

def test_the_newest_rows_without_a_timestamp_are_said_and_fail_the_gate(cli, tmp_path):
    "Six dated rows, then the newest 20 without a timestamp, 30% slower: none dropped, one line names them, the gate fails."
    _history(tmp_path / 'results', _noisy(100, 6, 3) + _noisy(70, 20, 4), DAYS[:6] + [''] * 20)
    r = cli('history', 'results', '--fail-on-regression', '10', '--no-charts', cwd=tmp_path)
    assert r.returncode == 1, (r.stdout, r.stderr)
    assert '26 ' in r.stdout.split('resnet18 fp32 bs=8')[-1].split('\n')[0]  # the table counts every run
    note = [l for l in r.stderr.splitlines() if 'cannot be placed in time' in l]
    assert len(note) == 1 and '20 without a timestamp' in note[0] and len(note[0]) < 200
    assert 'cannot be ordered' in r.stderr
    r = cli('history', 'results', '--no-charts', cwd=tmp_path)  # no gate: said, and exit 0
    assert r.returncode == 0 and 'cannot be placed in time' in r.stderr
