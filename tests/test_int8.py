"""Issues 43 and 52: int8 through the field table. ONNX Runtime (static QDQ) and OpenVINO (NNCF) quantize the exported
graph on the same calibration images, cached; the correctness gate catches a quantization that failed; int8 runs on every
x86 CPU (on AVX2 where it has no VNNI or AMX: 1.7-2.6x fp32 on this project's AMD EPYC) and its row says on which units;
a runtime that cannot run it says why in a `skipped` row; `quant` is a configuration word, a flag and a CSV column."""
import numpy as np, pytest
from throughput_bench.core import BenchSpec, config_key, QUANTS
from throughput_bench.machine.host import AVX2_INT8

for pkg in ('onnxruntime', 'openvino', 'nncf'): pytest.importorskip(pkg)

def spec(backend, tmp_path):
    return BenchSpec('resnet18', input_channels=3, input_size=32, batch_size=4, backend=backend, quant='int8',
                     cache_dir=str(tmp_path / 'exported'), threads=1, probe_batch=False)

def run(s):
    from throughput_bench.measure.inference import run_inference
    from throughput_bench.measure.timing import TimingConfig
    return run_inference(s, TimingConfig(warmup=1, warmup_seconds=0, min_seconds=0.2, max_seconds=0.5))

@pytest.mark.parametrize('backend', ['onnxruntime', 'openvino'])
def test_an_int8_row_is_measured_gated_and_its_quantization_cached(backend, tmp_path):
    r = run(spec(backend, tmp_path))
    assert r.status == 'ok', r.error
    assert r.quant == 'int8' and r.throughput_mean > 0 and r.iterations > 0
    assert r.throughput_mean == pytest.approx(r.iterations * r.batch_size / r.seconds_measured, rel=0.05)
    assert 0 < r.max_rel_diff <= r.tolerance  # not fp32's outputs bit for bit, and within the int8 gate
    assert r.quantize_seconds > 0 and r.quant_calibration == 'synthetic, 300 images'
    assert r.accuracy_check == 'accuracy unchecked: random weights'
    again = run(spec(backend, tmp_path))  # another row of the same model: the quantized graph from the cache
    assert again.status == 'ok' and again.quantize_seconds is None and again.quant_calibration == r.quant_calibration

@pytest.mark.parametrize('backend', ['onnxruntime', 'openvino'])
def test_the_gate_catches_a_quantization_calibrated_on_constant_images(backend, tmp_path, monkeypatch):
    import throughput_bench.backends.export as ex, throughput_bench.backends.ov as ov
    broken = lambda s, n=300: (np.zeros((16, s.in_chans, s.input_size, s.input_size), np.float32), 'constant, 16 images')
    monkeypatch.setattr(ex, 'calibration_images', broken); monkeypatch.setattr(ov, 'calibration_images', broken)
    r = run(spec(backend, tmp_path))
    assert r.status == 'wrong' and r.max_rel_diff > r.tolerance, (r.status, r.error)
    assert 'differ from fp32 eager' in r.error

NO_VNNI = {'avx', 'avx2', 'fma'}  # AMD Zen 2/3, Intel before Cascade Lake: no AVX-512, VNNI or AMX

def test_int8_runs_on_a_cpu_without_int8_dot_product_units_and_says_its_units(monkeypatch, tmp_path):
    "Flags without VNNI or AMX (faked): the plan skips nothing, tune screens int8, the real quantizer runs, the row says AVX2."
    import throughput_bench.machine.devices as D
    from throughput_bench.scale.sweep import skip_reason
    from throughput_bench.backends.base import get_backend
    monkeypatch.setattr(D, 'cpu_features', lambda: NO_VNNI)
    assert skip_reason(spec('onnxruntime', tmp_path)) is None and skip_reason(spec('openvino', tmp_path)) is None
    assert all('quant=int8' in get_backend(b).tune_words(1, 2, 'fp32', 'cpu') for b in ('onnxruntime', 'openvino'))
    r = run(spec('onnxruntime', tmp_path))
    assert r.status == 'ok' and r.int8_units == AVX2_INT8, (r.status, r.error, r.int8_units)
    assert 0 < r.max_rel_diff <= r.tolerance and r.quant_calibration == 'synthetic, 300 images'

def test_a_runtime_that_cannot_run_int8_is_a_skipped_row_in_its_own_words(monkeypatch, tmp_path):
    "The reason is what the runtime said (here ONNX Runtime's missing-kernel error), never a guess from the CPU's flags."
    import throughput_bench.backends.ort as ort
    said = ("[ONNXRuntimeError] : 9 : NOT_IMPLEMENTED : Could not find an implementation for ConvInteger(10) node with "
            "name 'conv1_quant'\nstack trace follows")
    def refuse(*a, **k): raise RuntimeError(said)
    monkeypatch.setattr(ort, 'quantized_onnx', refuse)
    r = run(spec('onnxruntime', tmp_path))
    assert r.status == 'skipped' and 'NOT_IMPLEMENTED : Could not find an implementation for ConvInteger' in r.error
    assert '\n' not in r.error and len(r.error) < 200 and r.error.startswith("onnxruntime cannot run 'resnet18' in int8")

def test_the_mfu_of_an_int8_row_uses_the_peak_of_its_units():
    "AVX2: 2x the fp32 FMA rate (an upper bound); 256- or 512-bit VNNI: 4x; AMX: its tiles. An MFU over 1 is never stored."
    from throughput_bench.measure.flops import cpu_flops_per_cycle, annotate_mfu
    from throughput_bench.result import BenchResult
    zen2 = dict(vendor='AuthenticAMD', family=0x17, model=0x31)
    assert cpu_flops_per_cycle(NO_VNNI, 'int8', **zen2) == 2 * cpu_flops_per_cycle(NO_VNNI, 'fp32', **zen2) == 64
    assert cpu_flops_per_cycle(NO_VNNI | {'avx_vnni'}, 'int8') == 4 * 32
    hw = dict(cpu_vector_units='avx2 fma', cpu_max_mhz=2000, cpu_count=2, cpu_vendor='AuthenticAMD', cpu_family=0x17,
              cpu_model_number=0x31)  # peak int8: 2 cores x 2 GHz x 64 = 256 GFLOP/s
    row = lambda tput: BenchResult(status='ok', device='cpu', precision='fp32', quant='int8', threads=2,
                                   gflops_per_sample=1.0, throughput_mean=tput)
    assert annotate_mfu(row(128.0), hw).mfu == pytest.approx(0.5)
    over = annotate_mfu(row(300.0), hw)
    assert over.mfu is None and 'above the theoretical int8 peak' in over.error

def test_the_hardware_record_lists_the_int8_units(monkeypatch):
    import throughput_bench.machine.hardware as H
    monkeypatch.setattr(H, 'cpu_features', lambda: NO_VNNI)
    assert H.cpu_info()['cpu_int8_units'] == AVX2_INT8
    monkeypatch.setattr(H, 'cpu_features', lambda: NO_VNNI | {'avx512f', 'avx512_vnni', 'amx_int8', 'amx_tile'})
    assert H.cpu_info()['cpu_int8_units'] == 'amx_int8'

def test_eager_pytorch_int8_says_it_runs_compiled_and_how():
    from throughput_bench.scale.sweep import skip_reason
    why = skip_reason(BenchSpec('resnet18', input_channels=3, input_size=32, quant='int8'))  # eager PyTorch
    assert why.startswith('pytorch runs int8 compiled') and '--compile-modes default' in why
    why = skip_reason(BenchSpec('resnet18', input_channels=3, input_size=32, quant='int8', compile_mode='default',
                                precision='bf16', explicit_precision=True))
    assert why == 'pytorch int8 keeps the rest of the model in fp32, not bf16'

def test_quant_is_a_word_a_flag_and_a_column_that_reads_back(tmp_path):
    from throughput_bench.studies.compare import parse_config
    from throughput_bench.core import BenchError
    from throughput_bench.cli import infer_parser
    assert parse_config('backend=openvino quant=int8') == {'backend': 'openvino', 'quant': 'int8'}
    with pytest.raises(BenchError, match='quant takes none, int8'): parse_config('quant=int4')
    assert vars(infer_parser().parse_args(['--quant', 'none', 'int8']))['quantizations'] == list(QUANTS)
    # a row of a file written before `quant` existed is the same configuration as an unquantized spec
    s = BenchSpec('resnet18', input_channels=3, input_size=32, batch_size=4)
    old = {k: str(getattr(s, k)) for k in BenchSpec.KEY if k != 'quant'}
    assert config_key(old) == s.key() != BenchSpec('resnet18', input_channels=3, input_size=32, batch_size=4,
                                                    quant='int8').key()

def test_onnxruntime_quantizes_a_transformer_dynamically_unless_told_otherwise(tmp_path):
    """A ViT's matrix products outnumber its convolutions: dynamic int8 (2.3x fp32 for vit_small here, static 1.4x).
    timm's test_vit: a ViT of a few blocks (exporting and quantizing it twice: 19 s for vit_tiny, 11 s for it)."""
    s = BenchSpec('test_vit', input_channels=3, input_size=32, batch_size=4, backend='onnxruntime',
                  quant='int8', cache_dir=str(tmp_path / 'exported'), threads=1, probe_batch=False)
    r = run(s)
    assert r.status == 'ok' and r.backend_settings.endswith('int8=dynamic'), (r.status, r.error, r.backend_settings)
    assert r.quant_calibration.startswith('none: dynamic') and 0 < r.max_rel_diff <= r.tolerance
    import dataclasses
    r = run(dataclasses.replace(s, backend_options='int8=static'))
    assert r.status == 'ok' and r.backend_settings.endswith('int8=static') and r.quant_calibration.startswith('synthetic')

def test_the_summary_says_which_units_the_int8_rows_ran_on():
    from throughput_bench.scale.sweep import compact_summary
    from throughput_bench.result import BenchResult
    row = lambda **k: BenchResult(model_name='resnet18', status='ok', throughput_mean=10.0, batch_size=2, **k)
    _, notes = compact_summary([row(quant='int8', int8_units=AVX2_INT8, backend='openvino'),
                                row(quant='int8', int8_units=AVX2_INT8, backend='onnxruntime'), row()])
    assert f"2 int8 row(s) ran on {AVX2_INT8}" in notes

@pytest.mark.slow
def test_map_and_serve_quantize_calibrate_gate_and_describe_int8_as_infer_does(monkeypatch, tmp_path):
    """Issue 51's finding 8: on a CPU without VNNI (faked), `map --quant int8` stored an `ok` row with no calibration, no
    quantize time, no runtime settings and no gate, and `serve --quant int8` served it without a word."""
    pytest.importorskip('rasterio'); pytest.importorskip('litserve')
    import throughput_bench.machine.devices as D, throughput_bench.backends.export as ex
    from throughput_bench.studies.mapping import synthetic_scene, map_raster
    from throughput_bench.serve.serving import serve_spec, checked_model, server_metadata
    from throughput_bench.serve.loadgen import server_fields
    from throughput_bench.core import BenchError
    from throughput_bench.options import ServeOptions
    monkeypatch.setattr(D, 'cpu_features', lambda: NO_VNNI)
    monkeypatch.setenv('HOME', str(tmp_path / 'home'))  # the exported and quantized graphs: ~/.cache/throughput_bench
    r = map_raster(synthetic_scene(64, 3, folder=tmp_path), model='resnet18', size=32, overlap=0, batch_size=4,
                   workers=0, passes=2, threads=1, model_seconds=0.2, quant='int8', backend='onnxruntime',
                   results_dir=tmp_path / 'results', progress=False, quiet=True)
    assert r.status == 'ok' and r.int8_units == AVX2_INT8, (r.status, r.error)
    assert r.quant_calibration == 'synthetic, 300 images' and r.quantize_seconds > 0 and 'int8=' in r.backend_settings
    assert 0 < r.max_rel_diff <= r.tolerance and r.accuracy_check == 'accuracy unchecked: random weights'
    s = serve_spec(ServeOptions('resnet18', device='cpu', input_size=32, quant='int8', backend='onnxruntime'))
    c = checked_model(s)  # the graph `map` quantized, from the cache; gated again on this input size
    assert c['int8_units'] == AVX2_INT8 and c['quant_calibration'] == r.quant_calibration
    assert 0 < c['max_rel_diff'] <= c['tolerance'] == r.tolerance
    row = server_fields(server_metadata(s, 1, 0.0, 1, 1.0) | c, 'http://127.0.0.1:1')  # what `tbench latency` stores
    assert row['int8_units'] == AVX2_INT8 and row['quant_calibration'] == r.quant_calibration
    # a quantization that fails the gate is refused before a worker starts, in one line
    broken = lambda s, n=300: (np.zeros((16, s.in_chans, s.input_size, s.input_size), np.float32), 'constant, 16 images')
    monkeypatch.setattr(ex, 'calibration_images', broken)
    monkeypatch.setenv('HOME', str(tmp_path / 'other'))
    with pytest.raises(BenchError, match='wrong: .*differ from fp32 eager'):
        checked_model(serve_spec(ServeOptions('resnet18', device='cpu', input_size=32, quant='int8',
                                              backend='onnxruntime')))
