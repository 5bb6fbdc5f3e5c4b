"Charts never merge two configurations into one bar: rows that differ in one field of the configuration's key alone are both drawn, labelled apart, or the faster is."
from pathlib import Path
import numpy as np, pandas as pd, pytest
import matplotlib; matplotlib.use('Agg')
import matplotlib.pyplot as plt
from throughput_bench.core import BenchSpec, config_words
from throughput_bench.analyse.charts import best_rows, chart_throughput, chart_coverage, chart_speedup, chart_mfu, speedups

BASE = dict(gpu_name='Intel(R) Xeon(R) Processor', mode='inference', model_name='resnet18', precision='fp32', compile_mode='none',
            channels_last=False, input_channels=3, input_size=224, data_mode='synthetic', optimizer='none', status='ok', batch_size=8,
            threads=1, backend='pytorch', backend_options='', timesteps=1, num_classes=np.nan, world_size=np.nan, study='', stage='',
            map_options='', allocator='glibc', quant='none')
# each field of the key, and a second value for it (the mode and the model have charts and panels of their own; the batch: the best is drawn)
OTHER = {'precision': 'bf16', 'compile_mode': 'default', 'channels_last': True, 'input_channels': 4, 'input_size': 64, 'data_mode': 'dataloader',
         'threads': 2, 'optimizer': 'adamw', 'timesteps': 4, 'num_classes': 10, 'world_size': 2, 'backend': 'openvino',
         'backend_options': 'hint=LATENCY', 'batch_size': 32, 'allocator': 'tcmalloc', 'quant': 'int8',
         'weights': 'pretrained'}

def test_every_key_field_is_covered():
    assert set(OTHER) | {'mode', 'model_name', 'study', 'stage', 'map_options'} == set(BenchSpec.KEY)

def _widths(fig)->set:
    return {round(float(p.get_width()), 6) for ax in fig.axes for p in ax.patches if hasattr(p, 'get_width')}

@pytest.mark.parametrize('field', list(OTHER))
def test_rows_that_differ_in_one_field_are_never_one_bar(field):
    mode = 'training' if field in ('optimizer', 'world_size') else 'inference'
    first = BASE | dict(mode=mode, optimizer='sgd' if mode == 'training' else 'none')
    if field == 'backend_options': first['backend'] = 'openvino'
    slow = first | dict(throughput_mean=100.0, throughput_ci_low=95.0, throughput_ci_high=105.0, mfu_measured=0.10, mfu=np.nan)
    fast = first | {field: OTHER[field]} | dict(throughput_mean=180.0, throughput_ci_low=170.0, throughput_ci_high=190.0, mfu_measured=0.18, mfu=np.nan)
    for order in ([slow, fast], [fast, slow]):  # the first row read used to win a bar
        best = best_rows(pd.DataFrame(order))
        assert 180.0 in _widths(chart_throughput(best, mode)), (field, best[['label', 'variant']].to_dict('records'))
        if field != 'batch_size':  # two configurations: both on the chart, told apart by their label and their variant
            assert len(best) == 2 and len(set(zip(best.label, best.variant))) == 2, best[['label', 'variant']]
        assert 18.0 in _widths(chart_mfu(best))
        if mode == 'inference':
            cov = chart_coverage(best)
            km2 = 180.0 * (best.loc[best.throughput_mean.idxmax(), 'input_size'] * 10) ** 2 / 1e6  # the faster row's km²/s at 10 m
            assert round(km2, 6) in _widths(cov), field
        if field in ('precision', 'compile_mode', 'backend', 'allocator', 'quant'):  # a variant of fp32 eager PyTorch: its speed-up is drawn
            assert 1.8 in _widths(chart_speedup(best)), field
        plt.close('all')

def test_a_speed_up_is_over_the_eager_row_of_the_same_threads():
    rows = [BASE | dict(threads=t, precision=p, throughput_mean=v, throughput_ci_low=v, throughput_ci_high=v)
            for t, p, v in [(1, 'fp32', 100.0), (2, 'fp32', 200.0), (1, 'bf16', 150.0), (2, 'bf16', 250.0)]]
    s = speedups(best_rows(pd.DataFrame(rows)))
    assert sorted(s.speedup.round(3)) == [1.25, 1.5]  # not 150/200 or 250/100: each against its own threads
    assert sorted(s.variant) == ['bf16 threads=1', 'bf16 threads=2']

def test_words_say_every_field_that_is_not_its_usual_value():
    s = BenchSpec('resnet18', precision='bf16', compile_mode='default', channels_last=True, batch_size=8, input_channels=3, input_size=64,
                  threads=2, timesteps=4, num_classes=10, backend='openvino', backend_options='hint=LATENCY', data_mode='dataloader')
    assert config_words(s) == 'resnet18 bf16 openvino hint=LATENCY compile=default NHWC threads=2 10 classes data=dataloader bs=8 3x64px 4 frames'
    assert config_words(BenchSpec('resnet18', batch_size=8, input_channels=3, input_size=224)) == 'resnet18 fp32 bs=8 3x224px'

def test_an_int8_figure_says_the_units_it_ran_on():
    "Issue 52: int8 on AVX2 and int8 on AMX are not one figure: charts and the leaderboard say the units (`int8_units`)."
    rows = [BASE | dict(gpu_name=g, quant='int8', backend='openvino', int8_units=u, throughput_mean=v, throughput_ci_low=v,
                        throughput_ci_high=v) for g, u, v in [('AMD EPYC', 'avx2 (no int8 dot product)', 50.0),
                                                              ('Intel Xeon 8480', 'amx_int8', 400.0), ('old', np.nan, 9.0)]]
    best = best_rows(pd.DataFrame(rows))
    said = dict(zip(best.gpu_name, best.variant))
    assert 'int8 on avx2' in said['AMD EPYC'] and 'int8 on amx_int8' in said['Intel Xeon 8480'], said
    assert said['old'].split().count('int8') == 1 and ' on ' not in said['old']  # a row that did not record them: int8
    assert 'int8' not in best_rows(pd.DataFrame([BASE | dict(throughput_mean=1.0, throughput_ci_low=1.0, throughput_ci_high=1.0,
                                                             int8_units='amx_int8')])).variant[0]
    from throughput_bench.analyse.submit import _board_row
    r = pd.Series(dict(throughput_mean=50.0, throughput_ci_low=45.0, throughput_ci_high=55.0, backend='openvino', compile_mode='none',
                       batch_size=16, input_size=224, folder='/x/amd', older='', checked=True, unknown=False, reproduced=False,
                       contradicted='', device='AMD EPYC', by='me', when='2026-11-27', pytorch_version='2.14', timm_version='1.0',
                       tbench_version='0.1.0', quant='int8', int8_units='avx2 (no int8 dot product)'))
    from pathlib import Path
    assert 'openvino · eager · int8 on avx2 · batch 16' in _board_row(r, Path('/tmp/board'), 10.0, True)

def test_paging_draws_each_part_once_and_gives_the_pages_of_halving_level_by_level():
    "A model far taller than the others (many bars) among light ones: the pages halving gives, every model once."
    import matplotlib.pyplot as plt
    from throughput_bench.analyse.charts import paged
    tall = {'m00': 30.0}  # inches of bars: one heavy model, 39 light ones (0.4 in each)
    height = lambda labels: 1 + sum(tall.get(l, 0.4) for l in labels)
    best = pd.DataFrame(dict(label=[f"m{i:02d}" for i in range(40)], throughput_mean=np.linspace(100, 1, 40)))
    draws = []
    def make(b):
        draws.append(len(b)); fig = plt.figure(figsize=(4, height(b.label))); fig.labels = sorted(b.label)
        return fig
    def level_by_level(b):  # the old paging: draw, and where too tall halve, drawing every level
        labels = list(b.sort_values('throughput_mean', ascending=False, kind='stable').label)
        if height(labels) <= 38 or len(labels) < 2: return [sorted(labels)]
        return [p for half in (labels[0::2], labels[1::2]) for p in level_by_level(b[b.label.isin(half)])]
    figs = paged(make, best, 38.0)
    assert [f.labels for f in figs] == level_by_level(best)  # 20, 10, 5 and 5 models: not 8 pages of 5
    assert all(f.get_size_inches()[1] <= 38 for f in figs) and sorted(sum((f.labels for f in figs), [])) == list(best.label)
    for f in figs: plt.close(f)
    # models alike: each page drawn once, after the first drawing
    draws.clear(); tall.clear()
    figs = paged(make, best.assign(label=[f"n{i:03d}" for i in range(40)]), 5.0)
    assert len(draws) == 1 + len(figs) and all(f.get_size_inches()[1] <= 5 for f in figs)
    for f in figs: plt.close(f)

def test_a_report_leaves_out_an_img_s_no_measurement_makes_and_says_so(tmp_path, cli):
    "Rows edited to 0, below 0, infinite or 1e300 img/s: one warning line, the rest charted, no traceback."
    src = Path(__file__).resolve().parents[1] / 'results' / 'cpu_amd_epyc.csv'
    df = pd.read_csv(src, dtype=str, keep_default_na=False)
    ok = df.index[df.status.eq('ok')][:4]
    df.loc[ok, 'throughput_mean'] = ['0', '-5', 'inf', '1e300']
    df.to_csv(tmp_path / 'edited.csv', index=False)
    r = cli('report', tmp_path / 'edited.csv', '-o', tmp_path / 'rep', '--formats', 'png', '--charts', 'overview',
            'speedup', cwd=tmp_path)
    assert r.returncode == 0 and 'Traceback' not in r.stderr, r.stderr[-2000:]
    said = [l for l in r.stderr.splitlines() if 'no measurement makes' in l]
    assert len(said) == 1 and said[0].startswith('warning: 4 row(s)'), r.stderr
    assert (tmp_path / 'rep' / 'overview.png').stat().st_size > 1000
