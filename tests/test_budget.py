"Issue 55, item 3: `--budget-minutes` plans before it starts, from what a worker process costs here, and says what it left out."
import dataclasses, shlex, types
import pytest
import torch
from conftest import FAST
from throughput_bench.scale import sweep as S
from throughput_bench.scale.launch import budget_fit, smallest_budget, fit_budget, SweepOptions
from throughput_bench.analyse.store import ResultStore
from throughput_bench.machine.hardware import device_slug

MODELS = ['resnet18', 'vit_tiny_patch16_224']

def specs(precisions=('fp32', 'bf16', 'fp16', 'amp')):
    return S.expand(MODELS, list(precisions), ['none'], [32], device='cpu')

def setup(tmp_path):
    return types.SimpleNamespace(repeats=S.Repeats(most=20, least=5, ci=0.03, seconds=30.0), store=ResultStore(tmp_path, 'cpu_t'))

def test_the_planner_keeps_what_fits_in_order_and_leaves_out_the_rest():
    "8 configurations × 3 processes: at 6 s a process 6 fit in 2 minutes; one too costly is left out and a cheaper one after it still runs."
    assert budget_fit([6.0] * 8, 3, 120) == ([0, 1, 2, 3, 4, 5], [6, 7])
    assert budget_fit([50.0, 10.0, 5.0], 3, 120) == ([1, 2], [0])
    assert budget_fit([15.0] * 8, 3, 120) == ([0, 1], [2, 3, 4, 5, 6, 7])   # first use's estimate: 90 s of the 108
    assert smallest_budget([15.0, 40.0], 3) == 0.9 and budget_fit([15.0], 3, 0.9 * 60)[0] == [0]
    assert budget_fit([15.0], 3, 0.8 * 60) == ([], [0])

def test_a_plan_under_budget_names_what_it_left_out_and_the_command_that_measures_it(tmp_path):
    "First use (no process measured here): the conservative estimate fits 2 of 8; measured costs fit more."
    su, o = setup(tmp_path), SweepOptions(models=MODELS, device='cpu', budget_minutes=2)
    todo = specs()
    p, left = fit_budget(S.Plan(todo=list(todo)), su, o)
    assert [s.short() for s in p.todo] == [s.short() for s in todo[:2]]
    assert left.startswith('budget: 2 of 8 configurations fit in 2 min (3 worker processes each at about 15 s a process, estimated); the first round\'s measured cost of a process may take some back in; left out 6: '), left
    cmd = shlex.split(left.split('Measure them: ')[1])
    assert cmd[:2] == ['tbench', 'infer'] and '--rerun' not in cmd and cmd[cmd.index('--device') + 1] == 'cpu'
    prec = cmd[cmd.index('--precisions') + 1:cmd.index('--device')]
    models = cmd[cmd.index('--models') + 1:cmd.index('--precisions')]
    assert {(m, x) for m in models for x in prec} >= {(s.model_name, s.precision) for s in todo[2:]}
    for s in todo: S.keep_cost(su.store, s, 6.0)   # measured: 6 s a process
    p, left = fit_budget(S.Plan(todo=list(todo)), su, o)
    assert len(p.todo) == 6 and 'fit in 2 min (3 worker processes each at about 6 s a process, measured); the first round\'s measured cost of a process may take some back in; left out 2' in left
    for s in todo: S.keep_cost(su.store, s, 4.0)
    assert fit_budget(S.Plan(todo=list(todo)), su, o) == (S.Plan(todo=list(todo)), '')   # all fit: nothing to say

def test_an_unmeasured_configuration_costs_as_much_as_its_model_or_the_first_use_estimate(tmp_path):
    st = ResultStore(tmp_path, 'cpu_t'); a, b, c, d = specs(('fp32', 'bf16'))
    S.keep_cost(st, a, 4.0); S.keep_cost(st, c, 40.0)
    k = S.read_costs(st)
    assert S.process_cost(a, k) == (4.0, 'measured') and S.process_cost(b, k) == (4.0, 'its model')
    other = dataclasses.replace(a, model_name='convnext_atto')   # a model never run here (no registry look-up: fast)
    assert S.process_cost(other, k) == S.process_cost(other, {}) == (S.PROCESS_GUESS, 'estimated')   # a model never run here
    compiled = dataclasses.replace(other, compile_mode='default')
    assert S.process_cost(compiled, k) == (S.PROCESS_GUESS * S.GUESS_SLOW, 'estimated')

@pytest.mark.parametrize('value, says', [('0', 'must be > 0, got 0'), ('-1', 'must be > 0, got -1'), ('nan', 'must be a finite number'),
                                         ('0.1', 'the smallest budget that measures anything is 0.9')])
def test_a_budget_that_measures_nothing_is_one_line_and_exit_2(cli, tmp_path, value, says):
    r = cli('infer', '--models', 'resnet18', '--device', 'cpu', '--precisions', 'fp32', '--budget-minutes', value,
            '--no-progress', '--wandb', 'disabled', cwd=tmp_path)
    assert r.returncode == 2 and says in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert len(r.stderr.strip()) < 200 and 'Traceback' not in r.stderr
    assert not (tmp_path / 'results').exists() or not list((tmp_path / 'results').glob('*.csv'))

@pytest.mark.slow  # three worker processes
def test_a_process_s_cost_is_kept_after_a_run_and_the_summary_names_what_the_budget_left_out(cli, tmp_path):
    """vit_tiny measured at 1000 s a process does not fit 1 minute: resnet18 runs (3 processes, its cost kept), vit_tiny is named with its
    command. mobilenetv3_small_050, never measured here, is left out at the first-use estimate (15 s a process) and taken back in once the
    first round has measured what a process costs."""
    st = ResultStore(tmp_path / 'results', device_slug(torch.device('cpu')))
    vit = S.expand(['vit_tiny_patch16_224'], ['fp32'], ['none'], [2], device='cpu')[0]
    S.keep_cost(st, vit, 1000.0)
    i = FAST.index('--repeats'); fast = FAST[:i] + FAST[i + 2:]   # a budget picks the count itself
    r = cli('infer', '--models', *MODELS, 'mobilenetv3_small_050', *fast, '--budget-minutes', '1', '--max-repeats', '3', cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    head, tail = r.stdout.split('results: ', 1)
    assert 'plan: 1 to run' in head and 'budget: 1 of 3 configurations fit in 1 min' in head and 'left out 2: ' in head, head
    assert '1 of the configurations left out fit what is left and are measured too: mobilenetv3_small_050 fp32' in r.stdout + r.stderr
    assert 'left out 1: vit_tiny_patch16_224 fp32' in tail and 'Measure them: tbench infer --models vit_tiny_patch16_224 --precisions fp32' in tail, tail
    costs = S.read_costs(st)
    mine = [v for k, v in costs.items() if k.split('|')[1] == 'resnet18']
    assert len(mine) == 1 and 0 < mine[0] < 1000
    import pandas as pd
    df = pd.read_csv(st.csv_path)
    assert sorted(df.model_name) == ['mobilenetv3_small_050', 'resnet18'] and list(df.repeats) == [3, 3]

def tiny(*batches):
    return S.expand(['resnet18'], ['fp32'], ['none'], list(batches), input_size=32, threads=1, device='cpu')

def test_a_process_past_the_fewest_is_not_started_where_it_would_end_after_the_deadline(tmp_path):
    "Past the 3 processes a row needs, another one starts only if it ends before the deadline, behind what others owe."
    import time
    from throughput_bench.measure.timing import TimingConfig
    a, b = tiny(2, 3)
    st = ResultStore(tmp_path, 'cpu_t')
    rep = S.Repeats(most=10, least=3, ci=0.01, seconds=600, deadline=time.monotonic() + 30, budget_s=60)
    run = S.SweepRun(S.Plan(todo=[a, b]), st, TimingConfig(), False, False, {}, None, rep, None, lambda m: None)
    run.per = 10.0
    run.parts[a.key()] = ['p'] * 3; run.parts[b.key()] = ['p'] * 1
    assert not run.too_late(b)                  # below its 3: it runs whatever the clock says
    assert run.too_late(a)                      # b still owes 2 processes (20 s): a 4th of a (10 s) would end past 30 s
    run.parts[b.key()] = ['p'] * 3
    assert not run.too_late(a)                  # nothing owed: 10 s fits the 30 s left
    run.per = 40.0
    assert run.too_late(a)

def test_a_sweep_that_another_holds_every_configuration_of_measures_what_its_budget_left_out(tmp_path):
    "Two sweeps at once: one whose plan another sweep already holds takes its left-out configurations instead of ending."
    import time
    from throughput_bench.measure.timing import TimingConfig
    st = ResultStore(tmp_path, 'cpu_t')
    (b,) = tiny(3)
    said = []
    rep = S.Repeats(most=2, least=2, ci=0.5, seconds=60, deadline=time.monotonic() + 600, budget_s=600)
    p = S.Plan(todo=[], spare=[b], seen=st.done())
    res = S.run_sweep(p, st, TimingConfig(warmup=1, warmup_seconds=0, timed_iters=3), isolate=False, progress=False,
                      repeats=rep, log=said.append)
    assert [r.batch_size for r in res] == [3] and p.spare == [] and 'another sweep holds' in said[0], said

def test_the_command_for_what_a_re_run_left_out_measures_it_again(tmp_path):
    "A budgeted --rerun leaves out configurations that are stored: the command it prints re-runs them (it dropped --rerun)."
    from throughput_bench.scale.launch import left_out
    cmd = left_out(tiny(2, 3), SweepOptions(models=['resnet18'], device='cpu', rerun=True)).split('Measure them: ')[1]
    assert '--rerun' in shlex.split(cmd)
    cmd = left_out(tiny(2), SweepOptions(models=['resnet18'], device='cpu', retry_failed=True)).split('Measure them: ')[1]
    assert '--retry-failed' in shlex.split(cmd) and '--rerun' not in shlex.split(cmd)
    cmd = left_out(tiny(2), SweepOptions(models=['resnet18'], device='cpu')).split('Measure them: ')[1]
    assert '--rerun' not in shlex.split(cmd) and '--retry-failed' not in shlex.split(cmd)

def test_a_recorded_cost_no_budget_fits_names_the_costs_file_and_no_budget_past_a_week(tmp_path):
    from throughput_bench.core import BenchError
    su, o = setup(tmp_path), SweepOptions(models=MODELS, device='cpu', budget_minutes=1)
    (a,) = specs(('fp32',))[:1]
    S.keep_cost(su.store, a, 600000.0)
    with pytest.raises(BenchError) as e: fit_budget(S.Plan(todo=[a]), su, o)
    msg = str(e.value)
    assert str(S.costs_path(su.store)) in msg and 'no budget up to a week (10080 min) measures it' in msg, msg
    assert len(msg.splitlines()) == 1

def test_the_plan_line_counts_only_the_re_runs_it_kept(tmp_path):
    su, o = setup(tmp_path), SweepOptions(models=MODELS, device='cpu', budget_minutes=2, rerun=True)
    todo = specs()
    p, _ = fit_budget(S.Plan(todo=list(todo), reruns=8, seen={s.key(): 'ok' for s in todo}), su, o)
    assert len(p.todo) == 2 and p.reruns == 2 and '(2 of those to run are re-runs)' in p.line()
