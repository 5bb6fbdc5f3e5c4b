"Trust 5, finding 6: a row keyed and labelled ONNX Runtime `mode=parallel` runs the parallel executor."
import dataclasses
import pytest
from conftest import FAST

ort = pytest.importorskip('onnxruntime')

def test_parallel_mode_gets_the_inter_op_threads_it_needs(tmp_path):
    "ONNX Runtime falls back to sequential with one inter-op thread: parallel mode is given at least two."
    import torch, onnx
    from onnx import helper, TensorProto
    from throughput_bench.core import BenchSpec
    from throughput_bench.backends.ort import BACKEND
    io = [helper.make_tensor_value_info(n, TensorProto.FLOAT, [1, 4]) for n in 'xy']
    path = tmp_path / 'relu.onnx'  # any graph will do: the session's options are what is checked
    onnx.save(helper.make_model(helper.make_graph([helper.make_node('Relu', ['x'], ['y'])], 'g', io[:1], io[1:]),
                                opset_imports=[helper.make_opsetid('', 17)]), str(path))
    spec = BenchSpec('resnet18', backend='onnxruntime', input_channels=3, input_size=32, threads=1,
                     backend_options='mode=parallel')
    so = BACKEND.session(path, spec, torch.device('cpu')).get_session_options()
    assert so.execution_mode == ort.ExecutionMode.ORT_PARALLEL and so.inter_op_num_threads >= 2
    seq = BACKEND.session(path, dataclasses.replace(spec, backend_options=''), torch.device('cpu')).get_session_options()
    assert seq.execution_mode == ort.ExecutionMode.ORT_SEQUENTIAL

@pytest.mark.parametrize('words', ['mode=parallel inter_threads=1', 'inter_threads=2', 'onnxruntime.inter_threads=3'])
def test_a_setting_that_would_not_run_as_keyed_is_one_line(cli, work, words):
    r = cli('infer', '--models', 'resnet18', '--backends', 'onnxruntime', '--backend-options', words, *FAST,
            '--output-dir', work / 'out', cwd=work)
    assert r.returncode == 2, r
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and 'Traceback' not in r.stderr and 'inter_threads' in lines[0], r.stderr
    assert not list((work / 'out').glob('*.csv'))  # refused before anything ran

@pytest.mark.parametrize('backends,words', [(['onnxruntime'], 'mode=parallel inter_threads=2'),
    (['onnxruntime', 'openvino'], 'onnxruntime.mode=parallel onnxruntime.inter_threads=2')])
def test_settings_that_need_each_other_plan_together(backends, words):
    """`inter_threads` is read only with `mode=parallel`: said together they plan (each word was once checked alone,
    and `tbench tune` on a CPU with ONNX Runtime installed, which screens `mode=parallel inter_threads=N`, stopped at
    once); `mode=parallel inter_threads=1` says the rule it breaks."""
    import torch
    from throughput_bench.scale.launch import SweepOptions, check, configurations
    from throughput_bench.core import BenchError
    o = check(SweepOptions.of(models=['resnet18'], backends=backends, precisions=['fp32'],
                              batch_sizes=[2], input_size=32, backend_options=words))
    specs = configurations(o, torch.device('cpu'))
    assert [s.backend_options for s in specs if s.backend == 'onnxruntime'] == ['mode=parallel inter_threads=2']
    with pytest.raises(BenchError, match='needs inter_threads of at least 2'):
        configurations(check(SweepOptions.of(models=['resnet18'], backends=['onnxruntime'], input_size=32,
                                             backend_options='mode=parallel inter_threads=1')), torch.device('cpu'))
