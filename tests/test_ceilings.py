"""A machine's cached GEMM and copy ceilings are other people's text (a cache folder, a results folder's hardware
record): a record that is not figures is measured again, never divided by, and never copied whole into a results
folder; a failing step of the floors script leaves no report running."""
import datetime, json, math
import pytest, torch
from throughput_bench.result import BenchResult
from throughput_bench.measure import flops as F

NOW = datetime.datetime.now().isoformat(timespec='seconds')
def good()->dict:
    "A good record at the thread count `ceilings_stale` compares with when it is called (an earlier test may set it)."
    return dict(gemm_tflops={'fp32': 0.4}, gemm_best={'fp32': 'torch 1024x1024x1024'}, copy_gbps=12.0,
                threads=F.torch_threads()[0], version=F.CEILINGS_VERSION, measured_at=NOW)

HOSTILE = [({'gemm_tflops': {'fp32': 'abc'}}, 'not a TFLOP/s'), ({'gemm_tflops': [1, 2]}, 'not a table'),
           ({'gemm_tflops': {'fp32': -1.0}}, 'not a TFLOP/s'), ({'gemm_tflops': {'fp32': True}}, 'not a TFLOP/s'),
           ({'gemm_tflops': {'fp32': 1e300}}, 'not a TFLOP/s'), ({'gemm_tflops': {'fp32': 10**400}}, 'not a TFLOP/s'),
           ({'copy_gbps': 'NaN'}, 'not a GB/s'),
           ({'measured_at': '2099-01-01T00:00:00'}, 'in the future'), ({'gemm_tflops': {}}, 'no fp32 GEMM figure'),
           ({'gemm_tflops': {'bf16': 1.0}}, 'no fp32 GEMM figure'), ({'copy_gbps': None}, 'no copy figure')]

@pytest.mark.parametrize('change,why', HOSTILE)
def test_a_cached_record_that_is_not_figures_is_measured_again(change, why, tmp_path, monkeypatch):
    monkeypatch.setenv('TB_CACHE_DIR', str(tmp_path))
    cpu = torch.device('cpu')
    path = F.ceilings_cache(cpu)
    path.parent.mkdir(parents=True)
    record = {k: v for k, v in (good() | change).items() if v is not None or k != 'copy_gbps'}  # None: no copy figure
    path.write_text(json.dumps(record))
    said = []
    monkeypatch.setattr(F, 'measure_ceilings', lambda device, quick=False: good() | dict(gemm_tflops={'fp32': 0.37}))  # the GEMMs: notebook 14's
    got = F.machine_ceilings(cpu, log=said.append)
    assert got['gemm_tflops'] == {'fp32': 0.37} and len(said) == 1 and why in said[0], said
    assert json.loads(path.read_text())['gemm_tflops'] == {'fp32': 0.37}  # the cache now holds the measured record

def test_a_good_record_is_used_and_only_its_own_fields_leave_the_cache(tmp_path, monkeypatch):
    monkeypatch.setenv('TB_CACHE_DIR', str(tmp_path))
    cpu = torch.device('cpu')
    path = F.ceilings_cache(cpu)
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(good() | {'pad': 'x' * 100_000}))
    monkeypatch.setattr(F, 'measure_ceilings', lambda *a, **k: pytest.fail('a good record was measured again'))
    got = F.machine_ceilings(cpu, log=lambda s: pytest.fail(s))
    assert got == good()  # the padding stays in the cache file, out of every results folder

@pytest.mark.parametrize('ceilings', [{'gemm_tflops': {'fp32': 'abc'}}, {'gemm_tflops': [1, 2]}, [1, 2], 'x',
                                      {'gemm_tflops': {'fp32': True}}, {'gemm_tflops': {'fp32': -1.0}},
                                      {'gemm_tflops': {'fp32': 1e300}}, {'gemm_tflops': {'fp32': float('nan')}},
                                      {'gemm_tflops': {'fp32': 10**400}}])
def test_a_results_folders_record_that_is_not_figures_gives_no_measured_mfu(ceilings):
    r = BenchResult(status='ok', device='cpu', precision='fp32', throughput_mean=100.0, gflops_per_sample=2.0)
    F.annotate_mfu(r, {'ceilings': ceilings}, peak_override=1.0)
    assert r.mfu_measured is None and r.status == 'ok', (r.mfu_measured, r.error)
    assert F.ceilings_stale(ceilings) is not None  # and a sweep writing to that folder measures them again

def test_a_good_results_folders_record_gives_the_measured_mfu():
    r = BenchResult(status='ok', device='cpu', precision='fp32', throughput_mean=100.0, gflops_per_sample=2.0)
    F.annotate_mfu(r, {'ceilings': good()}, peak_override=1.0)
    assert math.isclose(r.mfu_measured, 100 * 2.0 / 1e3 / 0.4)
