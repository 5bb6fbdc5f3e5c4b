"The runtimes behind the backend seam, on CPU with a tiny model: a row per backend, the export cache, old files, a failed export, and the correctness gate."
import sys, subprocess, dataclasses
import numpy as np, pandas as pd
import pytest
from conftest import FAST_API
from throughput_bench import api
from throughput_bench.core import BenchSpec, BenchError
from throughput_bench.analyse.store import read_results, ResultStore
from throughput_bench.backends import base, export
from throughput_bench.backends.pytorch import PyTorch

pytest.importorskip('onnxruntime'); pytest.importorskip('openvino'); pytest.importorskip('onnxscript')
RUNTIMES = ['pytorch', 'onnxruntime', 'openvino']
IN_PROCESS = FAST_API | dict(isolate=False, repeats=None)  # in this process: one repeat, the export made once for the module

@pytest.fixture(scope='module')
def sweep_dir(tmp_path_factory):
    "One sweep of resnet18 on the three backends at batch 1 and 2, shared by the tests that read it."
    d = tmp_path_factory.mktemp('runtimes')
    df = api.infer(['resnet18'], backends=RUNTIMES, results_dir=str(d / 'results'), **IN_PROCESS | dict(batch_sizes=[1, 2]))
    return d, df

def test_a_row_per_backend_each_checked_against_fp32_eager(sweep_dir):
    d, df = sweep_dir
    rows = read_results(d / 'results')
    assert sorted(zip(rows.backend, rows.batch_size)) == sorted((b, n) for b in RUNTIMES for n in (1, 2))
    assert rows.status.eq('ok').all(), rows[['backend', 'status', 'error']]
    run = rows[rows.backend != 'pytorch']
    # every runtime row passed the gate: fp32, so within 1e-3 of eager's outputs (relative to their scale), and says so
    assert (run.tolerance == 1e-3).all() and (run.max_rel_diff < 1e-3).all() and (run.max_abs_diff >= 0).all()
    assert rows[rows.backend == 'pytorch'].max_rel_diff.isna().all()  # fp32 eager PyTorch is the reference, not checked against itself
    # throughput is what the timer saw: images per step (OpenVINO's throughput mode runs several requests a step) x steps / seconds
    per_step = rows.throughput_mean * rows.seconds_measured / rows.iterations
    assert np.allclose(per_step / rows.batch_size, np.round(per_step / rows.batch_size), atol=1e-3) and (per_step >= rows.batch_size - 1e-3).all()
    ort, ov = rows[rows.backend == 'onnxruntime'], rows[rows.backend == 'openvino']
    assert ort.backend_settings.str.contains('provider=CPUExecutionProvider').all() and ort.backend_settings.str.contains('intra_threads=1').all()
    assert set(ov.set_index('batch_size').backend_settings.str.extract(r'hint=(\w+)')[0]) == {'LATENCY', 'THROUGHPUT'}
    assert ov[ov.batch_size == 1].backend_settings.str.contains('requests=1').all()
    assert (run.compile_seconds > 0).all() and (run.peak_memory_mb > 0).all() and run.backend_version.ne('').all()
    # one export for both runtimes and both batches: the first row that needed it made it, the others found it
    assert run.export_cached.sum() == len(run) - 1 and run.export_seconds.notna().sum() == 1
    import json
    hw = json.loads(next((d / 'results').glob('*_hardware.json')).read_text())
    assert {'onnxruntime', 'openvino', 'onnx'} <= set(hw['runtimes'])  # the runtimes' versions in the hardware record

def test_the_cache_is_reused_by_a_new_sweep(sweep_dir, tmp_path):
    d, _ = sweep_dir
    entries = [p for p in (d / 'results' / 'exported').iterdir() if p.is_dir()]
    assert len(entries) == 1 and (entries[0] / 'model.onnx').is_file()
    df = api.infer(['resnet18'], backends=['onnxruntime'], results_dir=str(d / 'results'), rerun=True, **IN_PROCESS)
    assert df.export_cached.tolist() == [True] and df.status.tolist() == ['ok']
    assert len([p for p in (d / 'results' / 'exported').iterdir() if p.is_dir()]) == 1

def exported(sweep_dir, to):
    "The module sweep's resnet18 export, copied into the cache folder `to`: a test not about exporting finds it."
    import shutil
    src = next(p for p in (sweep_dir[0] / 'results' / 'exported').iterdir() if p.is_dir())
    shutil.copytree(src, to / src.name)

def test_rows_written_before_the_backend_column_resume_as_pytorch(tmp_path, sweep_dir):
    res = tmp_path / 'results'
    exported(sweep_dir, res / 'exported')  # ONNX Runtime's row finds its graph, as a second sweep would
    api.infer(['resnet18'], results_dir=str(res), **IN_PROCESS)
    f = next(res.glob('*.csv'))
    old = pd.read_csv(f, dtype=str, keep_default_na=False).drop(columns=['backend', 'backend_settings', 'backend_version'])
    old.to_csv(f, index=False)  # a file from before the runtimes
    assert read_results(f).backend.tolist() == ['pytorch']
    df = api.infer(['resnet18'], backends=['pytorch', 'onnxruntime'], results_dir=str(res), **IN_PROCESS)
    assert df.measured.tolist() == ['stored', 'now'] and df.backend.tolist() == ['pytorch', 'onnxruntime']
    assert len(read_results(f)) == 2  # the old row was not measured again

def test_a_model_that_does_not_export_is_one_row_and_the_sweep_goes_on(tmp_path, monkeypatch, sweep_dir):
    exported(sweep_dir, tmp_path / 'r' / 'exported')  # resnet18's graph made already: only the failing export runs
    real = export._export
    def fails_for_vit(model, spec, path):
        if spec.model_name.startswith('vit'): raise RuntimeError("Unsupported operator: aten::made_up\nand a long traceback")
        return real(model, spec, path)
    monkeypatch.setattr(export, '_export', fails_for_vit)
    df = api.infer(['vit_tiny_patch16_224', 'resnet18'], backends=['onnxruntime'], results_dir=str(tmp_path / 'r'), **IN_PROCESS)
    assert df.status.tolist() == ['error', 'ok']
    assert df.error.iloc[0] == "RuntimeError: Unsupported operator: aten::made_up"  # one line
    assert not [p for p in (tmp_path / 'r' / 'exported').iterdir() if p.name.endswith('.partial')]  # no half entry

class Wrong(PyTorch):
    "Test only: PyTorch with every output off by 10% (a wrong kernel), to prove the gate."
    name = 'wrong-test'
    def prepare(self, model, spec, device):
        p = super().prepare(model, spec, device)
        out = p.output
        return dataclasses.replace(p, output=lambda x: out(x) * 1.1)

def test_the_gate_marks_a_wrong_backend_wrong_and_the_report_never_ranks_it(tmp_path):
    base.register(Wrong())
    try:
        df = api.infer(['resnet18'], backends=['pytorch', 'wrong-test'], results_dir=str(tmp_path / 'r'), **IN_PROCESS)
    finally: base.BACKENDS.pop('wrong-test'); base._instances.pop('wrong-test')
    ok, wrong = df.iloc[0], df.iloc[1]
    assert (ok.status, wrong.status, wrong.backend) == ('ok', 'wrong', 'wrong-test')
    assert wrong.max_rel_diff == pytest.approx(0.1, rel=1e-3) and wrong.tolerance == 1e-3
    assert wrong.error.startswith('outputs differ from fp32 eager: max relative difference 0.1 > tolerance 0.001')
    from throughput_bench.analyse.charts import best_rows, summary_markdown
    rows = read_results(tmp_path / 'r')
    best = best_rows(rows)
    assert best.backend.tolist() == ['pytorch']  # never ranked
    md = summary_markdown(rows, best)
    assert '1 wrong' in md and '| resnet18 | inference | fp32 | wrong |' in md

def test_asking_for_an_unknown_or_missing_runtime_is_one_line(cli, tmp_path, monkeypatch):
    r = cli('infer', '--models', 'resnet18', '--device', 'cpu', '--backends', 'onnxrt', cwd=tmp_path)
    assert r.returncode == 2 and r.stderr.strip().count('\n') == 0 and 'did you mean onnxruntime' in r.stderr
    monkeypatch.setattr(base.get_backend('openvino'), 'package', 'openvino_not_installed_here')
    r = cli('infer', '--models', 'resnet18', '--device', 'cpu', '--backends', 'openvino', cwd=tmp_path)
    assert r.returncode == 2 and "pip install 'throughput_bench[runtimes]'" in r.stderr and r.stderr.strip().count('\n') == 0
    r = cli('train', '--models', 'resnet18', '--device', 'cpu', '--backends', 'onnxruntime', cwd=tmp_path)
    assert r.returncode == 2  # training has no runtimes: the flag is not there

@pytest.mark.slow
def test_a_served_runtime_answers_what_the_measured_model_computes(tmp_path, sweep_dir):
    "`tbench serve --backend onnxruntime`: the server's answer is the fp32 eager model's output (the same seeded weights, the same graph `tbench infer` measures)."
    exported(sweep_dir, tmp_path / 'exported')  # the very graph the module's sweep exported and measured
    import io, httpx, torch
    from throughput_bench.serve.serving import ServerProcess, npy_bytes
    from throughput_bench.backends.model import build_model
    x = np.random.default_rng(1).standard_normal((2, 3, 32, 32)).astype(np.float32)
    with ServerProcess('--model', 'resnet18', '--input-size', '32', '--device', 'cpu', '--backend', 'onnxruntime',
                       '--cache-dir', str(tmp_path / 'exported'), ready_timeout=240) as s:
        r = httpx.post(f"{s.url}/v1/infer", files={'input_array': ('input_array', npy_bytes(x))}, timeout=60)
        meta = httpx.get(f"{s.url}/v1/metadata", timeout=10).json()
    assert r.status_code == 200, r.text
    assert meta['backend'] == 'onnxruntime'
    _, _, m = build_model(BenchSpec('resnet18', input_channels=3, input_size=32, device='cpu'))
    with torch.inference_mode(): ref = m.eval()(torch.from_numpy(x)).numpy()
    got = np.load(io.BytesIO(r.content))
    assert got.shape == ref.shape and np.abs(got - ref).max() <= 1e-3 * np.abs(ref).max()

def test_a_runtime_runs_once_whatever_compile_modes_and_layouts_pytorch_was_asked_for():
    "`--compile-modes default --channels-last --backends pytorch onnxruntime`: PyTorch compiled in NHWC, and ONNX Runtime once, as itself (no silent empty plan)."
    specs = [BenchSpec('resnet18', compile_mode=c, channels_last=True, input_channels=3, input_size=32) for c in ('default', 'max-autotune')]
    out = api.with_backends(specs, ['pytorch', 'onnxruntime'], cache_dir='x')
    assert [(s.backend, s.compile_mode, s.channels_last) for s in out] == [
        ('pytorch', 'default', True), ('pytorch', 'max-autotune', True), ('onnxruntime', 'none', False)]

def test_the_speedup_chart_sets_each_runtime_against_fp32_eager_pytorch(sweep_dir):
    from throughput_bench.analyse.charts import best_rows, speedups
    d, _ = sweep_dir
    sp = speedups(best_rows(read_results(d / 'results')))
    assert sorted(sp.backend.unique()) == ['onnxruntime', 'openvino'] and (sp.speedup > 0).all()  # eager PyTorch is the base, never a bar
