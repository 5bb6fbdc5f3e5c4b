"The results store: rows read back equal, the seed tool's real file reads back, atomic appends."
import math, threading
from pathlib import Path
import pandas as pd
import pytest
from conftest import SHARED
from throughput_bench.core import BenchSpec
from throughput_bench.result import BenchResult, COLUMNS, SEED_COLUMNS
from throughput_bench.machine.devices import result_from_spec
from throughput_bench.analyse.store import ResultStore, read_results

REF = Path(__file__).parent / 'fixtures' / 'throughput-bench'  # the seed tool's files (MIT), copied: see its NOTICE.md

def test_row_reads_back_equal(tmp_path):
    st = ResultStore(tmp_path, 'cpu_x')
    r = result_from_spec(BenchSpec('resnet18', input_channels=3, input_size=32, batch_size=8, threads=2),
                         throughput_mean=123.456789, throughput_ci_low=120.0, throughput_ci_high=127.5,
                         latency_p50_ms=64.8, iterations=17, seconds_measured=1.1, channels_last=True, batch_size=4)
    st.append(r)
    df = read_results(st.csv_path)
    row = df.iloc[0]
    for k, v in r.to_row().items():
        got = row[k]
        if v is None: assert pd.isna(got) or got == '', k
        elif isinstance(v, float): assert math.isclose(got, round(v, 6)), k
        else: assert got == v, (k, got, v)

def test_concurrent_appends_lose_nothing(tmp_path):
    st = ResultStore(tmp_path, 'cpu_x')
    def add(i): ResultStore(tmp_path, 'cpu_x').append(BenchResult(model_name=f'm{i}', throughput_mean=float(i)))
    ts = [threading.Thread(target=add, args=(i,)) for i in range(20)]
    for t in ts: t.start()
    for t in ts: t.join()
    assert sorted(read_results(st.csv_path).model_name) == sorted(f'm{i}' for i in range(20))

def test_seed_tool_file_reads_back(tmp_path):
    raw = pd.read_csv(REF / 'nvidia_h100_nvl.csv')
    df = read_results(REF / 'nvidia_h100_nvl.csv')
    assert len(df) == len(raw) and list(df.columns[:25]) == SEED_COLUMNS
    assert (df.throughput_mean == raw.throughput_mean).all()
    assert set(df['mode']) == {'inference'} and set(df.status) == {'ok'} and set(df.device_type) == {'cuda'}
    assert (df.gflops_per_sample == raw.macs_G).all() and df.compiled.dtype == bool
    # mixed with a file of ours: one tidy frame
    st = ResultStore(tmp_path, 'cpu_x'); st.append(BenchResult(model_name='resnet18', throughput_mean=1.0, device_type='cpu'))
    both = read_results(REF / 'nvidia_h100_nvl.csv', tmp_path)
    assert len(both) == len(raw) + 1 and set(both.source) == {'nvidia_h100_nvl.csv', 'cpu_x.csv'}

def test_append_to_seed_format_file_keeps_its_rows(tmp_path):
    f = tmp_path / 'nvidia_h100_nvl.csv'
    f.write_text((REF / 'nvidia_h100_nvl.csv').read_text())
    n = len(pd.read_csv(f))
    ResultStore(tmp_path, 'nvidia_h100_nvl').append(BenchResult(model_name='resnet18', throughput_mean=2.0))
    df = read_results(f)
    assert len(df) == n + 1 and list(df.columns[:len(COLUMNS)]) == COLUMNS

def test_rows_from_before_timesteps_still_resume(tmp_path):
    "A file written before the `timesteps` column existed: its rows are one-frame rows, done for resume, and keep their place."
    st = ResultStore(tmp_path, 'cpu_x')
    spec = BenchSpec('resnet18', input_channels=3, input_size=32, batch_size=2, threads=1)
    st.append(result_from_spec(spec, throughput_mean=10.0))
    df = pd.read_csv(st.csv_path, dtype=str, keep_default_na=False).drop(columns=['timesteps'])
    df.to_csv(st.csv_path, index=False)
    assert spec.key() in st.done()
    assert spec.key() != BenchSpec('resnet18', input_channels=3, input_size=32, batch_size=2, threads=1, timesteps=2).key()
    st.append(result_from_spec(BenchSpec('olmoearth_nano', input_channels=12, input_size=16, batch_size=2, threads=1, timesteps=2)))
    back = read_results(st.csv_path)
    assert list(back.timesteps) == [1, 2] and list(back.model_name) == ['resnet18', 'olmoearth_nano']

def test_the_seed_tools_oom_rows_read_back_as_oom(tmp_path):
    lines = (REF / 'nvidia_h100_nvl.csv').read_text().splitlines()
    header = lines[0].split(',')
    i = header.index('throughput_mean')
    cells = lines[1].split(','); cells[i] = 'OOM'  # as that tool writes a configuration that ran out of memory
    f = tmp_path / 'nvidia_h100_nvl.csv'
    f.write_text('\n'.join([lines[0], ','.join(cells)] + lines[2:]) + '\n')
    df = read_results(f)
    assert df.status[0] == 'oom' and pd.isna(df.throughput_mean[0]) and 'OOM' in df.error[0]
    assert (df.status[1:] == 'ok').all()
    store = ResultStore(tmp_path, 'nvidia_h100_nvl')
    assert sorted(set(store.done().values())) == ['ok', 'oom']  # --retry-failed measures it again

def test_the_seed_tools_file_resumes_whatever_the_batch_and_threads(tmp_path):
    "Every configuration the seed tool's H100 file holds is done for this tool's planner: its key leaves out batch and threads."
    import shutil
    from throughput_bench.scale.sweep import plan, expand
    shutil.copy(REF / 'nvidia_h100_nvl.csv', tmp_path / 'nvidia_h100_nvl.csv')
    store = ResultStore(tmp_path, 'nvidia_h100_nvl')
    ref = pd.read_csv(REF / 'nvidia_h100_nvl.csv')
    rows = ref[ref.model_name.isin(['resnet50', 'vit_base_patch16_224', 'convnext_tiny'])].drop_duplicates(
        ['model_name', 'precision', 'compile_mode', 'input_channels', 'input_size'])
    specs = [BenchSpec(r.model_name, precision=r.precision, compile_mode=r.compile_mode, batch_size=bs, threads=th, device='cpu', explicit_precision=True,
                       input_channels=int(r.input_channels), input_size=int(r.input_size))
             for r in rows.itertuples() for bs, th in ((512, 16), (64, 8))]  # device is not in the key; cpu with named precisions: nothing is skipped here
    p = plan(specs, store)
    assert len(specs) >= 24 and p.done == len(specs) and not p.todo, p.line()
    # a configuration it does not hold is still to run
    other = BenchSpec('resnet50', precision='fp32', compile_mode='none', input_channels=3, input_size=100, device='cpu')
    assert plan([other], store).todo == [other]
