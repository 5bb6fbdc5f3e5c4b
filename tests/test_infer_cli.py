"End-to-end tests of `tbench infer` in a subprocess, on CPU."
import os, csv, json, signal, subprocess, time, sys
from pathlib import Path
import pandas as pd
import pytest
from conftest import tbench, FAST, BIN
from throughput_bench.analyse.store import read_results, ResultStore, row_key

def csv_of(work): 
    files = sorted((work / 'results').glob('*.csv'))
    assert len(files) == 1, files
    return files[0]

def check_rows_consistent(df, min_seconds=0.3, iterations=None):
    "Measured rows agree with themselves; the timed phase lasted `min_seconds` (or exactly `iterations`)."
    ok = df[df.status == 'ok']
    assert len(ok) and (ok.throughput_mean > 0).all()
    # throughput is exactly iterations x batch / seconds measured, up to the 6 decimals stored (5e-7 of each of the two numbers)
    expect = ok.iterations * ok.batch_size / ok.seconds_measured
    assert ((ok.throughput_mean - expect).abs() / expect < 1e-6 + 5.1e-7 / ok.seconds_measured + 5.1e-7 / ok.throughput_mean).all()
    assert (ok.throughput_ci_low <= ok.throughput_mean).all() and (ok.throughput_mean <= ok.throughput_ci_high).all()
    assert (ok.latency_p50_ms <= ok.latency_p90_ms).all() and (ok.latency_p90_ms <= ok.latency_p95_ms).all()
    assert (ok.latency_p95_ms <= ok.latency_p99_ms).all()
    assert (ok.seconds_measured >= min_seconds).all()
    if iterations is not None: assert (ok.iterations == iterations).all()
    assert ((ok.pixels_per_sec - ok.throughput_mean * ok.input_size ** 2).abs() <= 1e-3 * ok.pixels_per_sec).all()
    assert (ok.gflops_per_sample > 0).all() and (ok.macs_G == ok.gflops_per_sample).all()

@pytest.mark.slow
def test_two_model_sweep_then_resume(work, cli):
    r = tbench('infer', '--models', 'resnet18', 'vit_tiny_patch16_224', *FAST, cwd=work)
    assert r.returncode == 0, r.stderr
    assert 'plan: 2 to run, 0 done, 0 skipped' in r.stdout
    assert 'img/s' in r.stdout and 'resnet18' in r.stdout  # the summary table
    df = read_results(csv_of(work))
    assert list(df.model_name) == ['resnet18', 'vit_tiny_patch16_224']
    assert list(df.input_size) == [32, 32] and list(df.batch_size) == [2, 2]
    check_rows_consistent(df)
    hw = json.loads(next((work / 'results').glob('*_hardware.json')).read_text())
    assert hw['cpu_count'] >= 1 and hw['pytorch_version']
    idx = json.loads((work / 'results' / 'index.json').read_text())
    assert idx == [dict(csv=csv_of(work).name, hardware=csv_of(work).stem + '_hardware.json', label=hw['gpu_name'])]
    # second run: nothing to do, nothing appended
    before = csv_of(work).read_text()
    r2 = cli('infer', '--models', 'resnet18', 'vit_tiny_patch16_224', *FAST, cwd=work)  # in this process: the first was a process of its own
    assert r2.returncode == 0, r2.stderr
    assert 'plan: 0 to run, 2 done, 0 skipped' in r2.stdout
    assert csv_of(work).read_text() == before
    # a new batch size is a new configuration
    r3 = cli('infer', '--models', 'resnet18', *[a if a != '2' else '4' for a in FAST], cwd=work)
    assert 'plan: 1 to run, 0 done' in r3.stdout
    assert len(read_results(csv_of(work))) == 3

@pytest.mark.slow
def test_throughput_bench_alias_accepts_underscores(work, cli):
    args = ['--' + a[2:].replace('-', '_') if a.startswith('--') else a for a in FAST]
    assert '--timed_seconds' in args and '--batch_sizes' in args
    # in this process (what is checked is the flags' spelling; the console script runs in a process of its own below)
    r = cli('--models', 'resnet18', *args, cwd=work, cmd='throughput-bench')
    assert r.returncode == 0, r.stderr
    check_rows_consistent(read_results(csv_of(work)))

@pytest.mark.slow
def test_throughput_bench_output_is_a_csv_path_and_no_dataloader_is_accepted(work, cli):
    r = tbench('--models', 'resnet18', *FAST, '--output', 'out/h100.csv', '--no-dataloader', cwd=work, cmd='throughput-bench')
    assert r.returncode == 0, r.stderr
    df = read_results(work / 'out' / 'h100.csv')
    assert len(df) == 1 and df.data_mode[0] == 'synthetic' and (work / 'out' / 'h100_hardware.json').exists()
    # the seed tool's choices: a 10-class head (so the parameter count is its file's), `task` in its meaning, `mode` ours
    seed = pd.read_csv(Path(__file__).parent / 'fixtures' / 'throughput-bench' / 'nvidia_h100_nvl.csv').drop_duplicates('model_name').set_index('model_name')
    assert df.num_classes[0] == 10 and round(df.params_M[0], 2) == seed.params_M['resnet18'], (df.params_M[0], seed.params_M['resnet18'])
    assert (df.task[0], df['mode'][0]) == ('classification', 'inference')
    assert not (work / 'results').exists()
    r = cli('--models', 'resnet18', *FAST, '--output', 'out/h100.csv', cwd=work, cmd='throughput-bench')  # in this process
    assert r.returncode == 0 and '0 to run, 1 done' in r.stdout, r.stdout  # it resumes from the named file
    r = cli('--models', 'resnet18', *FAST, '--output', 'out', cwd=work, cmd='throughput-bench')
    assert r.returncode == 2 and 'give a .csv file path' in r.stderr and r.stderr.count('\n') == 1

@pytest.mark.slow
def test_skipped_precision_is_a_row(work, monkeypatch, cli):
    "A precision this CPU has no native units for is a skipped row with the reason (unless named)."
    from throughput_bench.machine import devices
    import torch
    if devices.precision_support('bf16', torch.device('cpu')) is None:
        pytest.skip('this CPU has native bf16: nothing is skipped by default')
    # in this process: the row is measured in a worker process, as from the console
    r = cli('infer', '--models', 'resnet18', *[a for a in FAST if a not in ('--precisions', 'fp32')], cwd=work)
    df = read_results(csv_of(work))
    assert 'skipped' in set(df.status) and df[df.status == 'skipped'].error.str.contains('native').all()

@pytest.mark.slow
def test_dataloader_mode(work, cli):
    # in this process: the row is measured in a worker process, its loader's worker a process of that one
    r = cli('infer', '--models', 'resnet18', *FAST, '--dataloader', '--workers', '1', cwd=work)
    assert r.returncode == 0, r.stderr
    df = read_results(csv_of(work))
    assert df.data_mode[0] == 'dataloader' and df.status[0] == 'ok'

BAD = [
    (['--models', 'resnt18'], "unknown model 'resnt18'; did you mean resnet18"),
    (['--models', 'resnet18', '--precisions', 'fp8'], "invalid choice: 'fp8'"),
    (['--models', 'resnet18', '--compile-modes', 'turbo'], "invalid choice: 'turbo'"),
    (['--models', 'resnet18', '--batch-sizes', '0'], 'must be > 0'),
    (['--models', 'resnet18', '--batch-sizes', '-4'], 'must be > 0'),
    (['--models', 'resnet18', '--timed-seconds', '2', '--target-ci', '0.01'], 'cannot be combined'),
    (['--models', 'resnet18', '--rerun', '--retry-failed'], '--rerun already'),
    (['--models', 'resnet18', '--device', 'cpu', '--gpu-id', '1'], '--gpu-id 1 given'),
    (['--models', 'resnet18', '--device', 'cuda:0'] if not __import__('torch').cuda.is_available() else ['--device', 'tpu'], 'not available'),
    (['--models', 'resnet18', '--min-seconds', '9', '--max-seconds', '3'], 'more than --max-seconds'),
]

@pytest.mark.parametrize('args,msg', BAD)
def test_bad_input_one_line_exit_2_nothing_written(work, args, msg, cli):
    r = cli('infer', *args, cwd=work)
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert r.stderr.count('\n') == 1 and msg in r.stderr, r.stderr
    assert 'Traceback' not in r.stderr
    assert not (work / 'results').exists()

def test_unwritable_results_dir(work, cli):
    (work / 'afile').write_text('x')
    r = cli('infer', '--models', 'resnet18', '--device', 'cpu', '--results-dir', work / 'afile' / 'sub', cwd=work)
    assert r.returncode == 2 and r.stderr.count('\n') == 1 and 'cannot create results folder' in r.stderr, r.stderr

def _wait_rows(path, n, proc, limit=240):
    t0 = time.time()
    while time.time() - t0 < limit:
        if path.exists() and len(path.read_text().splitlines()) - 1 >= n: return
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.2)
    raise TimeoutError

SWEEP = ['infer', '--models', 'resnet18', '--device', 'cpu', '--input-size', '32',
         '--batch-sizes', '1', '2', '3', '--precisions', 'fp32', '--timed-seconds', '0.5', '--warmup', '1',
         '--warmup-seconds', '0', '--threads', '1', '--no-progress', '--wandb', 'disabled', '--repeats', '1', '--wait-idle', '0']
N_SWEEP = 3  # 3 batch sizes: killed after two rows, one is left to resume

@pytest.mark.slow
@pytest.mark.parametrize('sig', [signal.SIGKILL, signal.SIGINT])
def test_killed_sweep_leaves_valid_file_and_resumes(work, sig, cli):
    out = work / 'results'
    # a new session, with SIGINT at its default (a background shell would have it ignored): Ctrl-C in a
    # terminal signals the whole foreground process group, so SIGINT goes to the group; SIGKILL to the sweep alone
    proc = subprocess.Popen([str(BIN / 'tbench'), *SWEEP], cwd=work, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    # wait for the results file to hold two rows, then kill the sweep mid-run
    t0 = time.time()
    while not list(out.glob('*.csv')) and time.time() - t0 < 120: time.sleep(0.1)
    f = list(out.glob('*.csv'))[0]
    _wait_rows(f, 2, proc)
    import psutil
    ours = [c.pid for c in psutil.Process(proc.pid).children(recursive=True)]  # the fork server and the worker in flight
    assert ours
    if sig == signal.SIGINT: os.killpg(proc.pid, sig)
    else: proc.send_signal(sig)
    _, err = proc.communicate(timeout=60)
    if sig == signal.SIGINT:
        assert proc.returncode == 130 and 'run the same command again to resume' in err, err
    df = pd.read_csv(f)  # parseable
    n_killed = len(df)
    assert 2 <= n_killed < N_SWEEP and df.throughput_mean.notna().all()
    # none of the sweep's own processes outlives it (they die with their parent; allow them a moment to be reaped)
    for _ in range(100):
        left = [p for p in ours if psutil.pid_exists(p) and psutil.Process(p).status() != psutil.STATUS_ZOMBIE]
        if not left: break
        time.sleep(0.1)
    assert not left, left
    assert not [d for d in Path(os.environ.get('TMPDIR', '/tmp')).glob('tbench_*') if d.stat().st_mtime > t0]  # no temp folders left
    r = cli(*SWEEP, cwd=work)  # the resume, in this process: the kill above was of a process of its own
    assert r.returncode == 0, r.stderr
    assert f'plan: {N_SWEEP - n_killed} to run, {n_killed} done' in r.stdout
    df = read_results(f)
    assert len(df) == N_SWEEP and len({row_key(r) for r in ResultStore(out, f.stem).rows()}) == N_SWEEP
    check_rows_consistent(df)

@pytest.mark.slow
def test_closed_pipe_ends_quietly(work):
    "`tbench models | head -0`: the reader is gone before anything is printed; no traceback, exit 141."
    p = subprocess.Popen([str(BIN / 'tbench'), 'models'], cwd=work, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    p.stdout.close()
    err = p.stderr.read(); p.wait(timeout=120)
    assert p.returncode == 141 and 'Traceback' not in err, (p.returncode, err)

def test_every_option_has_help_with_its_default_and_every_command_a_description():
    import argparse
    from throughput_bench.cli import main_parser, infer_parser, rsg_parser
    top = main_parser()
    subs = next(a.choices for a in top._actions if isinstance(a, argparse._SubParsersAction))
    parsers = dict(subs) | {'throughput-bench': infer_parser('throughput-bench'), 'ready-steady-go': rsg_parser()}
    missing = []
    for name, p in parsers.items():
        if not p.description: missing.append(f"{name}: no description")
        p.format_help()  # a flag's text is read when help is shown
        for a in p._actions:
            if '--help' in a.option_strings or a.help == argparse.SUPPRESS: continue  # an underscore alias, hidden: the flag is listed once
            flag = a.nargs == 0  # store_true / store_false: on or off, nothing to default
            if not a.help: missing.append(f"{name} {a.option_strings or a.dest}: no help")
            elif a.option_strings and not flag and not a.required and 'default' not in a.help:
                missing.append(f"{name} {a.option_strings[0]}: the help does not say the default")
    assert not missing, '\n'.join(missing)
    helptext = parsers['infer'].format_help()
    assert '--batch-sizes' in helptext and '--batch_sizes' not in helptext and 'examples:' in helptext  # each flag once, examples at the end
    assert parsers['infer'].parse_args(['--batch_sizes', '4', '--max_step_seconds', '1']).batch_sizes == [4]  # the underscore spelling still works

def test_summary_keeps_each_rows_measured_with_it_when_it_puts_measured_rows_first():
    "`tbench infer` printed 'not measured' beside the two rows it had just measured: the table sorted ok rows first, then pasted `measured` in the old order."
    from throughput_bench.scale.sweep import summary_table
    base = dict(precision='fp32', compile_mode='none', batch_size=8, input_channels=3, input_size=64, throughput_mean=None, latency_p95_ms=None, peak_memory_mb=None)
    rows = [dict(base, model_name='a', status='skipped', error='fp16: no native units', measured='not measured'),
            dict(base, model_name='b', status='ok', throughput_mean=10.0, measured='now'),
            dict(base, model_name='c', status='ok', throughput_mean=20.0, measured='stored')]
    t = summary_table(rows)
    assert list(t.model) == ['b', 'c', 'a'] and list(t.measured) == ['now', 'stored', 'not measured']
    assert list(t.columns)[-2:] == ['measured', 'status']

def test_help_is_grouped_with_a_one_line_usage_and_the_rest_behind_help_all(capsys):
    "`tbench infer --help` was 205 lines, 37 of them usage: now a one-line usage, the main groups, and a count of the rest."
    import argparse
    from throughput_bench.cli import infer_parser, tbench
    p = infer_parser()
    short, every = p.format_help(), None
    with pytest.raises(SystemExit) as e: p.parse_args(['--help-all'])
    every = capsys.readouterr().out
    assert e.value.code == 0 and short.splitlines()[0] == 'usage: tbench infer [flags]'
    titles = [g.title for g in p._action_groups]
    assert titles.index('what to measure') < titles.index('where it runs') < titles.index('where results go')
    hidden = [a for g in p.more for a in g._group_actions if a.help != argparse.SUPPRESS]
    assert '--slurm' not in short and '--slurm' in every and '--warmup' in every and '--models' in short
    assert f"{len(hidden)} more flags" in short and len(every.splitlines()) > len(short.splitlines())
    for a in hidden: assert a.option_strings[0] in every  # every flag is somewhere
    # a command's positional arguments stay in its short usage
    with pytest.raises(SystemExit): tbench(['compare', '--help'])
    assert capsys.readouterr().out.startswith('usage: tbench compare MODEL|A CONFIG|B')

def test_tbench_builds_only_the_command_it_is_given_and_parses_it_as_the_full_parser_does():
    "`tbench --help` built every command's flags (reading each options class's docments): 0.35-0.5 s, over issue 42's 0.3 s."
    import argparse
    from throughput_bench.cli import main_parser
    subs = lambda p: next(a.choices for a in p._actions if isinstance(a, argparse._SubParsersAction))
    lazy = main_parser(['map', '--synthetic'])
    own = lambda s: [a for a in s._actions if not {'-h', '--help-all'} & set(a.option_strings)]  # beyond the helps
    flagged = {n for n, s in subs(lazy).items() if own(s)}
    assert flagged == {'map'} and len(subs(lazy)) == len(subs(main_parser()))
    argv = ['map', '--synthetic', '--model', 'resnet18', '--weights', 'w.safetensors', '--threads', '2']
    assert vars(main_parser(argv).parse_args(argv)) == vars(main_parser().parse_args(argv))
    assert {n for n, s in subs(main_parser(['--help'])).items() if own(s)} == set()
