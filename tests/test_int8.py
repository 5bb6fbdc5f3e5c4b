"""Issue 43: int8 through the field table. ONNX Runtime (static QDQ) and OpenVINO (NNCF) quantize the exported graph on
the same calibration images, cached; the correctness gate catches a quantization that failed; a CPU without int8
units skips int8 with the reason; `quant` is a configuration word, a flag and a CSV column that reads back."""
import numpy as np, pytest
from throughput_bench.core import BenchSpec, config_key, QUANTS
from throughput_bench.machine.devices import quant_support

pytestmark = pytest.mark.skipif(quant_support('int8', 'cpu') is not None, reason='this CPU has no int8 units (VNNI, AMX)')
for pkg in ('onnxruntime', 'openvino', 'nncf'): pytest.importorskip(pkg)

def spec(backend, tmp_path):
    return BenchSpec('resnet18', input_channels=3, input_size=32, batch_size=4, backend=backend, quant='int8',
                     cache_dir=str(tmp_path / 'exported'), threads=1, probe_batch=False)

def run(s):
    from throughput_bench.measure.inference import run_inference
    from throughput_bench.measure.timing import TimingConfig
    return run_inference(s, TimingConfig(warmup=1, min_seconds=0.2, max_seconds=0.5))

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

def test_without_int8_units_the_row_is_skipped_with_the_reason(monkeypatch):
    import throughput_bench.machine.devices as D
    from throughput_bench.scale.sweep import skip_reason
    monkeypatch.setattr(D, 'cpu_features', lambda: {'avx2', 'fma'})
    why = skip_reason(BenchSpec('resnet18', input_channels=3, input_size=32, backend='onnxruntime', quant='int8'))
    assert why and 'int8 dot-product units' in why
    assert skip_reason(BenchSpec('resnet18', input_channels=3, input_size=32, backend='onnxruntime')) is None

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
    "A ViT's matrix products outnumber its convolutions: dynamic int8 (2.3x fp32 for vit_small here, static 1.4x)."
    s = BenchSpec('vit_tiny_patch16_224', input_channels=3, input_size=32, batch_size=4, backend='onnxruntime',
                  quant='int8', cache_dir=str(tmp_path / 'exported'), threads=1, probe_batch=False)
    r = run(s)
    assert r.status == 'ok' and r.backend_settings.endswith('int8=dynamic'), (r.status, r.error, r.backend_settings)
    assert r.quant_calibration.startswith('none: dynamic') and 0 < r.max_rel_diff <= r.tolerance
    import dataclasses
    r = run(dataclasses.replace(s, backend_options='int8=static'))
    assert r.status == 'ok' and r.backend_settings.endswith('int8=static') and r.quant_calibration.startswith('synthetic')
