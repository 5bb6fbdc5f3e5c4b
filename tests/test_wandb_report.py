"W&B offline logging and read-back with the real SDK, the online fallback, and `tbench report`."
import os, json, time
from pathlib import Path
import pandas as pd
import pytest
from conftest import tbench, FAST, SHARED
from throughput_bench.analyse.store import read_results
from throughput_bench.analyse.tracking import load_results, offline_run_dirs

REF = Path(__file__).parent / 'fixtures' / 'throughput-bench' / 'nvidia_h100_nvl.csv'  # the seed tool's file (MIT), copied
OFFLINE = [a if a != 'disabled' else 'offline' for a in FAST]

@pytest.mark.slow
def test_offline_runs_read_back_as_the_csv_rows_and_report(work, cli):
    r = tbench('infer', '--models', 'resnet18', 'vit_tiny_patch16_224', *OFFLINE, cwd=work)
    assert r.returncode == 0, r.stderr
    assert len(offline_run_dirs(work / 'wandb')) == 2
    csv = read_results(work / 'results').sort_values('run_id').reset_index(drop=True)
    runs = load_results(work / 'wandb').sort_values('run_id').reset_index(drop=True)
    assert list(csv.run_id) == list(runs.run_id) and all(csv.run_id.str.len() > 0)
    for c in ('model_name', 'precision', 'batch_size', 'throughput_mean', 'latency_p95_ms', 'gflops_per_sample', 'iterations'):
        assert list(csv[c]) == list(runs[c]), c
    out = work / 'report'
    r = cli('report', work / 'wandb', '-o', out, cwd=work)  # in this process: the sweep was a process of its own
    assert r.returncode == 0, r.stderr
    names = {p.name for p in out.iterdir()}
    assert {'throughput_inference.png', 'throughput_inference.svg', 'coverage.png', 'mfu.png', 'summary.md'} <= names, names
    md = (out / 'summary.md').read_text()
    assert 'resnet18' in md and 'vit_tiny_patch16_224' in md

@pytest.mark.slow
def test_online_without_network_falls_back_to_offline_and_sync_stops_in_bounded_time(work):
    env_args = [a if a != 'disabled' else 'online' for a in FAST] + ['--wandb-init-timeout', '5']
    env = os.environ | {'WANDB_API_KEY': 'x' * 40, 'WANDB_BASE_URL': 'http://127.0.0.1:9', 'WANDB_MODE': ''}
    t0 = time.time()
    import subprocess, sys
    from conftest import BIN
    r = subprocess.run([str(BIN / 'tbench'), 'infer', '--models', 'resnet18', *env_args], cwd=work, capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stderr
    assert r.stderr.count('logging offline from now on') == 1, r.stderr
    assert len(read_results(work / 'results')) == 1 and len(offline_run_dirs(work / 'wandb')) == 1
    # the run it kept offline, synced without a network: the sync's own timeout ends it, saying what is left
    r = subprocess.run([str(BIN / 'tbench'), 'sync', 'wandb', '--timeout', '5'], cwd=work, capture_output=True, text=True,
                       env=env, timeout=120)
    assert r.returncode == 2 and r.stderr.count('\n') == 1 and '1 of 1 run(s) still to upload' in r.stderr, r.stderr

@pytest.mark.slow
def test_report_reads_the_seed_tools_file_beside_ours(work, cli):
    "The seed tool's H100 file beside this project's committed CPU results: one summary, and the two charts that page, no page over ~4,000 px."
    out = work / 'rep'
    ours = Path(__file__).resolve().parents[1] / 'results'
    r = cli('report', REF, ours, '-o', out, '--gsd', '30', '--formats', 'png', '--charts', 'overview', 'speedup', 'coverage', cwd=work)  # SVGs of 600 rows: minutes
    assert r.returncode == 0, r.stderr
    md = (out / 'summary.md').read_text()
    assert 'H100 NVL' in md and 'Xeon' in md  # both devices in one summary
    pages = sorted(out.glob('speedup*.png'))  # one file, or pages of one where a single chart would be too tall
    assert pages and all(p.stat().st_size > 1000 for p in pages) and list(out.glob('coverage*.png')) and not list(out.glob('*.svg'))
    import matplotlib.image as mpimg
    assert max(mpimg.imread(p).shape[0] for p in out.glob('*.png')) <= 4000  # no chart taller than ~4,000 px
    # the overview holds every model once per device it ran on, and summary.md opens with the same table
    from throughput_bench.analyse.charts import best_rows, native_rows, overview_rows
    ov = overview_rows(native_rows(best_rows(read_results(REF, ours))))
    assert not ov.duplicated(['label', 'device']).any() and set(ov.device) == {'H100 NVL', 'H200', 'Xeon', 'AMD EPYC'}
    assert len(ov) == sum(native_rows(best_rows(read_results(REF, ours))).query("mode == 'inference'").groupby('device').label.nunique())
    assert (out / 'overview.png').is_file() and md.index('## Best per model and device') < md.index('## Every configuration')
    table = md.split('## Best per model and device')[1].split('##')[0]
    assert sum(l.startswith('| ') for l in table.splitlines()) - 1 == ov.label.nunique()  # a line per model, after the header

def test_rows_without_a_throughput_give_a_summary_and_say_no_chart_was_drawn(work, cli):
    src = next((Path(__file__).resolve().parents[1] / 'results').glob('*.csv'))
    pd.read_csv(src).drop(columns=['throughput_mean']).to_csv(work / 'no_mean.csv', index=False)
    r = cli('report', work / 'no_mean.csv', '-o', work / 'rep', '--formats', 'png', cwd=work)
    assert r.returncode == 0, r.stderr
    assert r.stderr.count('\n') == 1 and r.stderr.startswith('warning: no chart was drawn'), r.stderr
    assert sorted(p.name for p in (work / 'rep').iterdir()) == ['summary.md']

def test_an_interval_that_runs_backwards_is_shown_as_none_and_said(work, cli):
    src = next((Path(__file__).resolve().parents[1] / 'results').glob('*.csv'))
    df = pd.read_csv(src)
    df = df[df.status.eq('ok') & df.throughput_ci_low.notna()].head(3).copy()
    lo, hi = df.throughput_ci_low.iloc[0], df.throughput_ci_high.iloc[0]
    df.loc[df.index[0], ['throughput_ci_low', 'throughput_ci_high']] = [hi, lo]  # swapped: low above high
    df.loc[df.index[1], 'throughput_mean'] = df.throughput_ci_high.iloc[1] * 1.05  # a figure above its own interval
    df.to_csv(work / 'backwards.csv', index=False)
    r = cli('report', work / 'backwards.csv', '-o', work / 'rep', '--formats', 'png', '--charts', 'overview_bars', cwd=work)
    assert r.returncode == 0, r.stderr
    assert r.stderr.count('\n') == 1 and 'runs backwards' in r.stderr and r.stderr.startswith('warning: 2 row(s)'), r.stderr
    md = (work / 'rep' / 'summary.md').read_text()
    assert f"{hi:.1f}–{lo:.1f}" not in md  # the summary printed it as it was ("32.3–24.9")

def test_a_name_the_font_cannot_draw_is_one_line_not_a_warning_per_glyph(work, cli):
    src = next((Path(__file__).resolve().parents[1] / 'results').glob('*.csv'))
    df = pd.read_csv(src)
    df = df[df.status.eq('ok')].head(2).copy()
    df.loc[df.index[0], 'model_name'] = 'resnet\u6a21\u578b'  # two CJK characters DejaVu Sans has no glyph for
    df.to_csv(work / 'cjk.csv', index=False)
    r = cli('report', work / 'cjk.csv', '-o', work / 'rep', '--formats', 'png', '--charts', 'overview_bars', cwd=work)
    assert r.returncode == 0, r.stderr
    assert r.stderr.count('\n') == 1 and r.stderr.startswith('warning: 2 character(s)') and '\u6a21' in r.stderr, r.stderr
    assert 'resnet\u6a21\u578b' in (work / 'rep' / 'summary.md').read_text()

def test_report_and_sync_errors(work, cli):
    r = cli('report', work / 'nothing', cwd=work)
    assert r.returncode == 2 and r.stderr.count('\n') == 1 and 'no such results file' in r.stderr
    r = cli('sync', work / 'wandb', cwd=work)
    assert r.returncode == 2 and r.stderr.count('\n') == 1 and 'no offline W&B runs' in r.stderr
    env = {k: v for k, v in os.environ.items() if k != 'WANDB_API_KEY'} | {'NETRC': str(work / 'none')}
    import subprocess
    from conftest import BIN
    r = subprocess.run([str(BIN / 'tbench'), 'report', '--wandb-project', 'someone/proj'], cwd=work, capture_output=True, text=True, env=env | {'HOME': str(work)})
    assert r.returncode == 2 and 'needs an API key' in r.stderr, r.stderr
