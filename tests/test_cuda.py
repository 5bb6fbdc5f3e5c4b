"""The CUDA paths, end to end: the same commands as the CPU tests, on the GPU, with a tiny model.

Skipped without a CUDA device (CI has none); run them where one is: `pytest tests/test_cuda.py`."""
import json
import numpy as np, pytest
from conftest import tbench, BIN
from throughput_bench.analyse.store import read_results

torch = pytest.importorskip('torch')
pytestmark = [pytest.mark.slow, pytest.mark.skipif(not torch.cuda.is_available(), reason='no CUDA device')]

GPU = ['--device', 'cuda', '--input-size', '64', '--batch-sizes', '8', '--timed-seconds', '0.5', '--warmup', '3', '--warmup-seconds', '0',
       '--repeats', '1', '--wait-idle', '0', '--no-progress', '--wandb', 'disabled']

def only_csv(work):
    (f,) = sorted((work / 'results').glob('*.csv')); return f

def consistent(df):
    "Measured rows agree with themselves (as on CPU): throughput is images / seconds timed, percentiles ordered, memory is the GPU's."
    assert (df.status == 'ok').all(), df[['precision', 'compile_mode', 'status', 'error']]
    assert np.allclose(df.throughput_mean, df.iterations * df.batch_size / df.seconds_measured, rtol=1e-5)
    assert (df.latency_p50_ms <= df.latency_p95_ms).all() and (df.latency_p50_ms > 0).all()
    total_mb = torch.cuda.get_device_properties(0).total_memory / 2**20
    assert ((df.peak_memory_mb > 0) & (df.peak_memory_mb < total_mb)).all()  # torch.cuda's peak, not the host's RSS
    assert (df.gpu_name == torch.cuda.get_device_name(0)).all()

def test_inference_in_every_precision_eager_compiled_and_channels_last(work):
    r = tbench('infer', '--models', 'resnet18', *GPU, '--precisions', 'fp32', 'fp16', 'bf16', 'amp', '--compile-modes', 'none', 'default', cwd=work)
    assert r.returncode == 0, r.stderr[-3000:]
    r = tbench('infer', '--models', 'resnet18', *GPU, '--precisions', 'fp16', '--compile-modes', 'none', '--channels-last', cwd=work)
    assert r.returncode == 0, r.stderr[-3000:]
    df = read_results(only_csv(work))
    assert len(df) == 9
    consistent(df)
    # every configuration but fp32 eager passed the correctness gate against fp32 eager, at its precision's tolerance
    checked = df[~((df.precision == 'fp32') & (df.compile_mode == 'none'))]
    assert (checked.max_rel_diff <= checked.tolerance).all() and checked.max_rel_diff.notna().all()
    # TF32 is recorded: on for fp32 rows where the GPU has it (Ampere and newer), never claimed for the half-precision rows
    tf32 = torch.cuda.get_device_capability(0) >= (8, 0)
    assert (df[df.precision == 'fp32'].tf32_enabled == tf32).all() and not df[df.precision != 'fp32'].tf32_enabled.any()
    assert (df[df.compile_mode == 'default'].compile_seconds > 0).all() and df.channels_last.sum() == 1
    # the gate held fp32 to TF32's tolerance where TF32 ran, and MFU divides by the peak of what ran (TF32's, on such a GPU)
    fp32 = df[(df.precision == 'fp32') & (df.compile_mode != 'none')]
    assert (fp32.tolerance == (1e-2 if tf32 else 1e-3)).all()
    from throughput_bench.measure.flops import gpu_peak_tflops
    peak = gpu_peak_tflops(torch.cuda.get_device_name(0), 'tf32' if tf32 else 'fp32')
    if peak: assert np.allclose(df[df.precision == 'fp32'].mfu * peak, df[df.precision == 'fp32'].tflops_achieved, rtol=1e-3, atol=5.1e-7 * peak)  # mfu is stored to 6 decimals

def test_training_mfu_against_the_datasheet_and_the_measured_ceiling(work):
    r = tbench('train', '--models', 'resnet18', *GPU, '--precisions', 'fp32', 'bf16', '--breakdown', cwd=work)
    assert r.returncode == 0, r.stderr[-3000:]
    df = read_results(only_csv(work))
    consistent(df)
    assert np.allclose(df.tflops_achieved, df.throughput_mean * df.gflops_per_sample / 1e3, rtol=1e-5)
    assert ((df.mfu_measured > 0) & (df.mfu_measured <= 1)).all()
    from throughput_bench.measure.flops import gpu_peak_tflops
    if gpu_peak_tflops(torch.cuda.get_device_name(0), 'bf16'):  # a GPU of the datasheet table: MFU is achieved / its peak
        assert ((df.mfu > 0) & (df.mfu <= 1)).all()
    hw = json.loads(next((work / 'results').glob('*_hardware.json')).read_text())
    assert hw['ceilings']['gemm_tflops']['bf16'] > hw['ceilings']['gemm_tflops']['fp32'] > 0

def test_onnxruntime_on_cuda_runs_or_says_which_package_it_needs(work):
    ort = pytest.importorskip('onnxruntime'); pytest.importorskip('onnxscript')
    r = tbench('infer', '--models', 'resnet18', *GPU, '--precisions', 'fp32', '--compile-modes', 'none', '--backends', 'onnxruntime', cwd=work)
    assert r.returncode == 0, r.stderr[-3000:]
    (row,) = read_results(only_csv(work)).itertuples()
    if 'CUDAExecutionProvider' in ort.get_available_providers():
        assert row.status == 'ok' and 'provider=CUDAExecutionProvider' in row.backend_settings and row.max_rel_diff <= row.tolerance
    else: assert row.status == 'skipped' and 'onnxruntime-gpu' in row.error, row.error

def test_a_served_model_on_the_gpu_answers_and_its_latency_rows_say_so(work):
    pytest.importorskip('litserve'); pytest.importorskip('mlperf_loadgen')
    from throughput_bench.serve.serving import ServerProcess
    with ServerProcess('--model', 'resnet18', '--input-size', '64', '--device', 'cuda', '--max-batch-size', '4', '--batch-timeout-ms', '5',
                       ready_timeout=240) as s:
        r = tbench('latency', s.url, '--runs', '1', '--burn-in', '2', '--trials', '20', '--min-duration', '0.5', '--max-duration', '20',
                   '--wandb', 'disabled', '--no-progress', cwd=work)
    assert r.returncode == 0, r.stderr[-3000:]
    (row,) = read_results(only_csv(work)).itertuples()
    assert row.status == 'ok' and row.request_errors == 0 and json.loads(row.server_metadata)['device'].startswith('cuda')
