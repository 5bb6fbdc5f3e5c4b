"`tbench compare` and `tbench tune` end to end on CPU with a tiny model: paired rounds, stored studies, resuming, the winner's command."
import re
import shlex
import numpy as np, pandas as pd
import pytest
from throughput_bench.analyse.store import read_results
from throughput_bench.core import BenchSpec

pytestmark = pytest.mark.slow
TINY = ['--device', 'cpu', '--threads', '1', '--input-size', '32', '--timed-seconds', '0.3', '--warmup-seconds', '0', '--wait-idle', '0']

def only_csv(work):
    (f,) = sorted((work / 'results').glob('*.csv')); return f

def test_same_configuration_twice_shows_no_difference_and_a_batch_eight_times_larger_does(work, cli):
    # in this process: its fork server (torch and timm imported) serves the module's other in-process sweeps too
    r = cli('compare', 'resnet18', 'batch=1', 'batch=1', 'batch=8', *TINY, '--min-rounds', '3', '--max-rounds', '3', cwd=work)
    assert r.returncode == 0, r.stderr[-3000:]
    rows = read_results(only_csv(work))
    # every round measured each configuration once, in its own process, and stored it as a row of the study
    assert len(rows) == 9 and rows.status.eq('ok').all() and rows.study.nunique() == 1 and rows.study[0].startswith('cmp-')
    assert sorted(rows.stage) == sorted(f"round {n}, {x}" for n in (1, 2, 3) for x in 'ABC')
    assert (rows.repeats == 1).all() and (rows.batch_size.tolist().count(8) == 3)
    # the order rotates: A first in round 1, B in round 2, C in round 3
    firsts = rows.groupby(rows.stage.str.split(',').str[0], sort=True).head(1).stage.str[-1].tolist()
    assert firsts == ['A', 'B', 'C'], firsts
    out = r.stdout
    if rows.contended.any():  # a busy host (CI beside other work): a round with a contended member is not used, so no verdict is claimed
        assert out.count(': no verdict: ') == 2 and 'significant' not in out, out
    else:
        aa = next(l for l in out.splitlines() if l.startswith('B (batch=1) is'))
        big = next(l for l in out.splitlines() if l.startswith('C (batch=8) is'))
        assert 'faster than A (batch=1); significant' in big, big
        # A/A: the same configuration is never claimed to differ by more than the noise of one process here (its CI is the test)
        tp = rows.set_index('stage').throughput_mean
        ratios = [tp[f"round {n}, B"] / tp[f"round {n}, A"] for n in (1, 2, 3)]
        lo, hi = (float(x) for x in aa.split('[')[1].split(']')[0].split(','))
        gm = float(np.exp(np.mean(np.log(ratios))))
        assert abs(max(gm, 1 / gm) - float(aa.split(' is ')[1].split('×')[0])) < 0.006  # the printed ratio is the geometric mean of the rounds'
        assert 'not significant' in aa or (lo > 0.9 and hi < 1.1), aa
    # the same command again finds its rounds: nothing measured (in this process: the first showed the command's own)
    again = cli('compare', 'resnet18', 'batch=1', 'batch=1', 'batch=8', *TINY, '--min-rounds', '3', '--max-rounds', '3', cwd=work)
    assert again.returncode == 0 and len(read_results(only_csv(work))) == 9 and '(stored)' in again.stdout
    # the report draws the stored comparison (the ratios from the rows) and says it in words
    rep = cli('report', 'results', '--output', 'rep', '--formats', 'png', cwd=work)
    assert rep.returncode == 0 and (work / 'rep' / 'comparisons.png').is_file(), rep.stderr
    md = (work / 'rep' / 'summary.md').read_text()
    assert '## Comparisons' in md and 'C: fp32 threads=1 bs=8' in md and md.count('(study cmp-') == 2

def test_stored_results_compare_what_both_hold_and_name_the_rest(work, cli):
    for side, sizes in (('a', ['1', '2']), ('b', ['1'])):
        r = cli('infer', '--models', 'resnet18', '--batch-sizes', *sizes, '--precisions', 'fp32', *TINY, '--repeats', '2', '--no-progress',
                '--wandb', 'disabled', '--results-dir', side, cwd=work)
        assert r.returncode == 0, r.stderr[-2000:]
    r = cli('compare', 'a', 'b', cwd=work)
    assert r.returncode == 0, r.stderr
    assert 'not comparable (only in A, a): resnet18 fp32 bs=2 3x32px' in r.stdout
    assert 'geometric mean of B/A over the 1 configuration(s) both hold and rated' in r.stdout
    line = next(l for l in r.stdout.splitlines() if l.strip().startswith('resnet18'))
    assert '[' in line  # two processes a side: the ratio has an interval

@pytest.mark.parametrize('args,msg', [
    (['resnet18', 'batch=1'], 'two or more configurations'),
    (['resnet18', 'batch=1', 'batch=0'], 'at least 1'),
    (['resnet18', 'backend=openvino', 'backend=openvino streams=two'], 'streams takes a whole number'),
    (['resnet18', 'backend=pytorch', 'backend=pytorch hint=LATENCY'], "unknown setting 'hint'"),
    (['resnet18', 'backend=pytorch', 'compile=bogus'], "compile takes none, default, reduce-overhead, max-autotune, not 'bogus'"),  # it once ran B as compile none
    (['resnet18', 'backend=pytorch', 'backend=pytorch backend=openvino'], 'backend is set twice'),  # it once kept the last silently
    (['resnet18', 'batch=1', 'precision=fp61'], "did you mean fp16"),
    (['resnt18', 'batch=1', 'batch=2'], 'resnet18'),
    (['missing.csv', 'other.csv'], 'no such results file'),
])
def test_bad_input_is_one_line(work, cli, args, msg):
    r = cli('compare', *args, *TINY, cwd=work)
    assert r.returncode == 2 and msg in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr

def test_tune_space_screens_each_native_precision_or_the_ones_asked(work):
    """Without --precisions: each precision this CPU has units for; with it: those, emulated ones said so. Per
    precision: eager and NHWC, and OpenVINO's 2 hints where it runs that precision natively (fp32 always), and in fp32
    OpenVINO's int8 (PyTorch's is compiled: no compile under a 1-minute CPU budget). Nothing is measured."""
    import torch
    from throughput_bench.machine.devices import precision_support
    from throughput_bench.backends.ov import BACKEND as OV
    from throughput_bench.scale import launch as L
    from throughput_bench.studies.tune import tune_space
    su = L.setup(L.check(L.SweepOptions.of(models=['resnet18'], device='cpu', input_size=32, threads=1, quiet=True,
                                           progress=False, wandb='disabled', results_dir=str(work / 'results'))))
    native_here = [p for p in ('fp32', 'bf16', 'fp16') if precision_support(p, torch.device('cpu')) is None]
    for asked, precs in ((None, native_here), (['fp32'], ['fp32']), (['fp16', 'fp32'], ['fp16', 'fp32'])):
        specs, said = tune_space(su, ['pytorch', 'openvino'], [2], None, 1, asked)
        ov_native = [p for p in precs if p != 'fp32' and OV.UNITS[p] in OV.capabilities()]
        assert len(specs) == 2 * len(precs) + 2 * (1 + len(ov_native)) + 1, (asked, [s.short() for s in specs])
        assert sorted({s.precision for s in specs}) == sorted(precs)
        emulated = [p for p in precs if precision_support(p, torch.device('cpu')) is not None]
        assert ('emulated: no units here' in said) == bool(emulated), said

def test_tune_stores_its_screens_names_a_correct_winner_and_resumes(work, cli):
    args = ['tune', 'resnet18', '--device', 'cpu', '--budget-minutes', '1', '--batch-sizes', '2', '--backends', 'pytorch', 'openvino',
            '--input-size', '32', '--screen-seconds', '0.2', '--wait-idle', '0', '--no-progress', '--allocators', 'glibc', 'glibc-retain',
            '--threads', '1', '--precisions', 'fp32']  # each native precision's screens: test_tune_space_screens_...
    r = cli(*args, cwd=work)  # in this process: the module's fork server (torch and timm imported once) serves it
    assert r.returncode == 0, r.stderr[-3000:]
    rows = read_results(only_csv(work))
    # the allocators screened first, once per backend; each backend then searched with its fastest
    alloc = rows[rows.stage == 'allocators']
    assert sorted(zip(alloc.backend, alloc.allocator)) == sorted((b, a) for b in ('pytorch', 'openvino') for a in ('glibc', 'glibc-retain'))
    assert sum(l.startswith('allocators, ') for l in r.stdout.splitlines()) == 2, r.stdout[-2000:]
    study = rows[rows.study.str.startswith('tune-') & ~rows.study.str.endswith('-vs-eager')]
    screens = study[study.stage == 'screen']
    import torch
    from throughput_bench.machine.devices import precision_support
    precs = ['fp32']  # as asked (--precisions fp32)
    # 1 batch x 1 thread count (--threads 1: int8 is screened on every CPU now, so one thread count keeps the test short)
    # x (fp32: eager, NHWC, OpenVINO x 2 hints, OpenVINO int8; each other precision: eager, NHWC, and OpenVINO x 2 hints
    # where the CPU runs it natively): every one screened
    from throughput_bench.backends.ov import BACKEND as OV
    native = [p for p in precs[1:] if OV.UNITS[p] in OV.capabilities()]
    import importlib.util
    # PyTorch's int8 is compiled: under this 1-minute CPU budget tune screens no compile, so not it either, and says so
    # (the tune notebook checks that it is screened where compiles are)
    pt_int8 = 0
    assert "nor PyTorch's int8" in r.stdout, r.stdout[:2000]
    # OpenVINO int8 in fp32 on every CPU (VNNI, AMX or AVX2)
    assert len(screens) == 1 * 1 * (4 + 1 + 2 * (len(precs) - 1) + 2 * len(native)) + pt_int8, (len(screens), precs, native)
    assert screens.status.eq('ok').all()
    # the winner: the best throughput among the rows of the last stage, and it passed the correctness gate (or is the reference)
    cmd = next(l for l in r.stdout.splitlines() if l.startswith('measure the winner again: ')).split(': ', 1)[1]
    best = next(l for l in r.stdout.splitlines() if l.startswith('best throughput: '))
    words = shlex.split(cmd)
    backend = words[words.index('--backends') + 1]
    vs = rows[rows.study.str.endswith('-vs-eager')]
    if vs.contended.any(): assert 'no verdict' in r.stdout or backend == 'pytorch', r.stdout[-1500:]  # a busy host: no ratio claimed
    else: assert 'faster than fp32 eager' in r.stdout or 'slower than fp32 eager' in r.stdout or backend == 'pytorch'
    assert (work / 'results' / 'tune-resnet18-cpu_amd_epyc.png').exists() or list((work / 'results').glob('tune-resnet18-*.png'))
    # a second tune with the same arguments measures nothing new
    n = len(rows)
    again = cli(*args, cwd=work)
    assert again.returncode == 0, again.stderr[-2000:]
    after = read_results(only_csv(work))
    rounds = lambda df: df.study.fillna('').str.contains('-vs-')
    if 'no verdict' in r.stdout:  # rounds on a busy host gave none: the second tune tries those rounds again, only them
        assert (~rounds(after)).sum() == (~rounds(rows)).sum(), again.stdout[-2000:]
    else: assert len(after) == n, again.stdout[-2000:]
    assert again.stdout.split('measure the winner again: ')[1].splitlines()[0] == cmd
    # the printed command measures that configuration: a plain sweep row of the winner's configuration
    rr = cli(*words[1:], '--timed-seconds', '0.3', '--warmup-seconds', '0', '--repeats', '1', '--wait-idle', '0', '--no-progress', '--wandb', 'disabled', cwd=work)
    assert rr.returncode == 0, rr.stderr[-2000:]
    plain = read_results(only_csv(work))
    plain = plain[plain.study.eq('')].reset_index(drop=True)
    assert len(plain) == 1 and plain.status[0] == 'ok'
    from throughput_bench.studies.compare import parse_config
    said = parse_config(best.split(': ')[1].rsplit(':', 1)[0])  # the winner, in the words `tune` printed
    row = plain.iloc[0]
    assert row.backend == said['backend'] and row.batch_size == said['batch_size'] and row.threads == said['threads']
    assert row.backend_options == said.get('backend_options', '') and bool(row.channels_last) == said.get('channels_last', False)
    assert row.precision == said.get('precision', 'fp32') and row.input_size == 32 and row.allocator == said.get('allocator', 'glibc')
    won = study[(study.backend == row.backend) & (study.batch_size == row.batch_size) & (study.threads == row.threads) &
                (study.backend_options == row.backend_options) & (study.channels_last == row.channels_last)]
    assert len(won) and won.status.eq('ok').all() and (won.backend.eq('pytorch') | (won.max_rel_diff <= won.tolerance)).all()

def test_rounds_beside_other_work_give_no_verdict(work, cli):
    "A busy loop beside every round: the rounds are stored and counted, none is used, and the table says 'no verdict' instead of a ratio (it once printed 52x, significant)."
    import subprocess, sys, time
    busy = subprocess.Popen([sys.executable, '-c', 'import time\nt = time.time()\nwhile time.time() - t < 300: pass'])
    try:
        time.sleep(0.3)
        # in this process (the module's fork server): the busy loop is not in the sweep's own tree (its fork servers)
        r = cli('compare', 'resnet18', 'batch=1', 'batch=2', *TINY, '--min-rounds', '2', '--max-rounds', '2', cwd=work)
    finally: busy.kill(); busy.wait()
    assert r.returncode == 0 and 'Traceback' not in r.stderr, r.stderr[-2000:]
    rows = read_results(only_csv(work))
    assert len(rows) == 4 and rows.contended.all()  # kept in the store
    assert 'no verdict (busy host)' in r.stdout and 'significant' not in r.stdout and 'not used for the verdict' in r.stderr, r.stdout + r.stderr[-1500:]

R = dict(model='resnet18')
@pytest.mark.parametrize('kw,msg', [(R | dict(precisions=5), "unknown precision '5'"),  # one value: a list of one
                                    (R | dict(precisions=(p for p in ['fp32'])), '--precisions takes a list, got'),
                                    (R | dict(batch_sizes=['abc']), 'whole number'),
                                    (R | dict(batch_sizes=[[1]]), "--batch-sizes takes words or numbers, got '[1]' (list)"),
                                    (R | dict(batch_sizes=[1j]), "--batch-sizes takes words or numbers, got '1j' (complex)"),
                                    (dict(), 'no model given'),
                                    (dict(model=None), 'no model given')])
def test_tune_api_values_of_the_wrong_type_are_one_line(kw, msg):
    "From Python, a number or a generator for a list of words, or a non-number in a list of numbers: one line, no run."
    from throughput_bench.core import BenchError
    from throughput_bench.studies.tune import tune
    with pytest.raises(BenchError, match=re.escape(msg)): tune(device='cpu', results_dir='unused', **kw)

def test_stored_figures_no_device_makes_are_not_compared(tmp_path):
    "1e308 img/s overflowed the mean and crashed the ratio's log (and 1e-300 printed a 300-digit ratio): not rated."
    import pandas as pd
    from throughput_bench.result import BenchResult
    from throughput_bench.studies.compare import compare_results
    base = dict(model_name='resnet18', precision='fp32', batch_size=2, input_channels=3, input_size=32, status='ok',
                device='cpu', repeats=2)
    for side, v in (('a', 1e308), ('b', 10.0), ('c', 1e-300)):
        row = BenchResult(**base, throughput_mean=v, throughput_repeats=f"{v};{v}").to_row()
        pd.DataFrame([row]).to_csv(tmp_path / f"{side}.csv", index=False)
    for a, b in (('a', 'b'), ('b', 'a'), ('c', 'b')):
        t, _, _, geo = compare_results(tmp_path / f"{a}.csv", tmp_path / f"{b}.csv")
        assert len(t) == 1 and t.verdict[0].startswith('not compared: an img/s no device makes') and geo != geo

@pytest.mark.parametrize('kw,msg', [
    (dict(configs=5), 'configs must be a list'), (dict(configs={'threads=1', 'threads=2'}), '--configs takes a list'),
    (dict(configs=(w for w in ['threads=1', 'threads=2'])), '--configs takes a list'),
    (dict(results_dir=None), 'results_dir must be'), (dict(results_dir='res\x00'), 'NUL'),
    (dict(quiet='yes'), "--quiet takes True or False, got 'yes' (str)"), (dict(budget_minutes=1e7), 'more than 10080'),
    (dict(model=18), "--model takes text, got '18' (int)"), (dict(device=1), "--device takes text, got '1' (int)")])
def test_the_api_refuses_wrong_types_in_one_line(kw, msg):
    from throughput_bench.core import BenchError
    from throughput_bench.studies.compare import compare, compare_results
    with pytest.raises(BenchError, match=re.escape(msg)):
        compare(**dict(model='resnet18', configs=['threads=1', 'threads=2'], device='cpu') | kw)
    for a, b in ((None, None), (5, 6), (['a.csv'], 'a.csv'), ('', '')):
        with pytest.raises(BenchError, match='takes two results files or folders'): compare_results(a, b)
