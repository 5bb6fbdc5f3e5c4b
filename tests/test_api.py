"Issue 14: the Python API is importable from the package, whatever else was imported, and behaves like the CLI."
import re
import importlib, pkgutil
from pathlib import Path
import pytest
from conftest import FAST_API
import throughput_bench

API = ('infer', 'train', 'models', 'hw', 'report', 'sync', 'repair')

def test_api_names_are_functions_even_after_every_module_is_imported():
    for m in pkgutil.walk_packages(throughput_bench.__path__, "throughput_bench."): importlib.import_module(m.name)
    from throughput_bench import infer, train, models, hw, report, sync, repair
    for f in (infer, train, models, hw, report, sync, repair): assert callable(f) and f.__module__ == 'throughput_bench.api', f

@pytest.mark.slow
def test_train_rows_through_the_api(tmp_path):
    from throughput_bench import train
    df = train(['resnet18'], optimizers=['sgd', 'adamw'], **(FAST_API | dict(results_dir=tmp_path)))
    assert list(df.optimizer) == ['sgd', 'adamw'] and set(df['mode']) == {'training'} and (df.throughput_mean > 0).all()
    assert list(df.measured) == ['now', 'now']
    again = train(['resnet18'], optimizers=['sgd'], **(FAST_API | dict(results_dir=tmp_path)))
    assert list(again.measured) == ['stored'] and again.throughput_mean[0] == df.throughput_mean[0]

@pytest.mark.parametrize('kw,msg', [
    (dict(models=['resnt18']), "did you mean resnet18"),
    (dict(models=['resnet18'], precisions=['fp8']), "unknown precision 'fp8'"),
    (dict(models=['resnet18'], batch_sizes=[0]), "must be > 0"),
    (dict(models=['resnet18'], repeats=2, isolate=False), "--repeats needs worker processes"),
])
def test_api_errors_are_the_cli_messages(tmp_path, kw, msg):
    from throughput_bench import infer
    from throughput_bench.core import BenchError
    with pytest.raises(BenchError, match=msg): infer(**(FAST_API | dict(results_dir=tmp_path / 'r') | kw))
    assert not (tmp_path / 'r').exists()

def test_the_api_pages_examples_bind_to_the_functions_they_call():
    "The API page's 'Start here' calls are not run there (each measures for minutes): each must still be a valid call."
    import ast, inspect, importlib, nbformat
    nb = nbformat.read(next((Path(__file__).resolve().parents[1] / 'nbs').glob('[0-9][0-9]_api.ipynb')), as_version=4)
    src = next(c.source for c in nb.cells if c.cell_type == 'code' and c.source.startswith('#| eval: false')
               and 'from throughput_bench import infer' in c.source)
    tree, names, calls = ast.parse(src), {}, 0
    for node in tree.body:
        if isinstance(node, ast.ImportFrom):
            mod = importlib.import_module(node.module)
            for a in node.names: names[a.asname or a.name] = getattr(mod, a.name)
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in names:
            fn = names[node.func.id]
            args = [ast.literal_eval(a) if not isinstance(a, ast.Name) else None for a in node.args]
            kw = {k.arg: ast.literal_eval(k.value) for k in node.keywords}
            inspect.signature(fn).bind(*args, **kw)  # a renamed or missing parameter raises TypeError
            calls += 1
    assert calls >= 12 and {'infer', 'train', 'compare', 'tune', 'map_raster'} <= set(names)

def test_an_api_function_is_not_hidden_by_the_submodule_of_its_name():
    "`from throughput_bench import globe` gave the function, then, once `throughput_bench.analyse.globe` was imported, the module."
    import importlib, types
    importlib.import_module('throughput_bench.analyse.globe')  # as api.py does
    from throughput_bench import globe
    from throughput_bench.analyse.globe import write_globe
    assert callable(globe) and not isinstance(globe, types.ModuleType) and globe.__module__ == 'throughput_bench.api'
    assert callable(write_globe)

@pytest.mark.parametrize('kw,flag', [(dict(quantizations=['int8']), '--quantizations'), (dict(backend_options='hint=LATENCY'), '--backend-options')])
def test_train_refuses_what_only_inference_takes(tmp_path, kw, flag):
    "A setting whose field training does not take (`Field.modes`) is one line before anything runs; its default passes."
    from throughput_bench import train
    from throughput_bench.core import BenchError
    with pytest.raises(BenchError, match=f"{flag} is not an option of training"):
        train(['resnet18'], **(FAST_API | dict(results_dir=tmp_path / 'r') | kw))
    assert not (tmp_path / 'r').exists()

@pytest.mark.parametrize('kw,msg', [(dict(port=None), '--port must be a number, not None'),
                                    (dict(host=None), '--host must be given, not None'),
                                    (dict(backend=['openvino']), "--backend takes text, got \"['openvino']\" (list)"),
                                    (dict(channels_last='yes'), "--channels-last takes True or False, got 'yes'"),
                                    (dict(channels_last=1), "--channels-last takes True or False, got '1'"),
                                    (dict(workers=2), "unknown option 'workers'; did you mean workers_per_device?"),
                                    # one value where serve takes one, text where it takes text (both reached the server)
                                    (dict(compile_mode=['default']), "--compile-mode takes text, got \"['default']\" (list)"),
                                    (dict(precision=('fp32',)), "--precision takes text, got \"('fp32',)\" (tuple)"),
                                    (dict(backend_options=5), "--backend-options takes text, got '5' (int)"),
                                    (dict(weights=3.5), "--weights takes text, got '3.5' (float)")])
def test_serve_options_of_the_wrong_type_are_one_line(kw, msg):
    "`api.serve`'s options are checked before a model or a server is built (each was a TypeError from LitServe or a check)."
    from throughput_bench import api
    from throughput_bench.core import BenchError
    with pytest.raises(BenchError, match=re.escape(msg)):
        api.check_serve(api.make_options(api.ServeOptions, ('resnet18',), kw))

def test_serve_takes_a_whole_float_as_the_count_litserve_needs():
    from throughput_bench import api
    import socket
    with socket.socket() as s: s.bind(('127.0.0.1', 0)); port = s.getsockname()[1]  # a port free a moment ago
    o = api.check_serve(api.make_options(api.ServeOptions, ('resnet18',), dict(workers_per_device=2.0, port=port)))
    assert o.workers_per_device == 2 and type(o.workers_per_device) is int

def test_one_word_for_a_list_option_is_a_list_of_one(tmp_path):
    "`api.infer(precisions='fp32')` ran four configurations, one a letter ('f', 'p', '3', '2'), each skipped."
    from throughput_bench.scale.launch import SweepOptions, check, configurations
    import torch
    o = check(SweepOptions.of(models='resnet18', precisions='bf16', batch_sizes=[2], input_size=32, results_dir=tmp_path))
    assert o.models == ['resnet18'] and o.precisions == ['bf16']
    assert [(s.model_name, s.precision) for s in configurations(o, torch.device('cpu'))] == [('resnet18', 'bf16')]

@pytest.mark.parametrize('kw,want', [(dict(batch_sizes=2), ('batch_sizes', [2])),
                                     (dict(models=__import__('numpy').array(['resnet18'])), ('models', ['resnet18'])),
                                     (dict(threads=__import__('numpy').int64(2)), ('threads', 2)),
                                     (dict(output=Path('r/x.csv')), ('output', 'r/x.csv')),
                                     # a count given as a whole float is an int (batch_sizes=[2.0] stored an error row)
                                     (dict(batch_sizes=[2.0]), ('batch_sizes', [2])), (dict(threads=2.0), ('threads', 2))])
def test_a_call_s_values_are_read_as_the_options_hold_them(kw, want):
    "numpy's and pandas' values, one value for a list (`batch_sizes=2` crashed), a path (`output`)."
    from throughput_bench.scale.launch import SweepOptions, check
    o = check(SweepOptions.of(**(dict(models=['resnet18']) | kw)))
    assert getattr(o, want[0]) == want[1] and type(getattr(o, want[0])) is type(want[1])

@pytest.mark.parametrize('kw,msg', [(dict(models=[]), '--models is an empty list'),  # it ran every model
                                    (dict(quantizations=[]), '--quantizations is an empty list'),  # it ran none
                                    (dict(models=5), "--models takes models' names, got '5' (int)"),
                                    (dict(models=b'resnet18'), '--models takes a list'),
                                    (dict(backends=[['pytorch']]), '--backends takes words or numbers'),
                                    (dict(backends={'pytorch': 1}), '--backends takes a list'),
                                    (dict(backends=5), "--backends takes runtimes' names"),
                                    # a generator: the check used it up, and the sweep ran nothing
                                    (dict(models=(m for m in ['resnet18'])), '--models takes a list, got'),
                                    (dict(wandb_tags=5), '--wandb-tags ' + repr('5') + ': a tag is text'),
                                    # a switch takes a bool: `isolate='no'` isolated, `quiet='false'` was quiet
                                    (dict(isolate='no'), "--isolate takes True or False, got 'no' (str)"),
                                    (dict(quiet=0), "--quiet takes True or False, got '0' (int)"),
                                    (dict(wandb_tags=['x' * 65]), 'a tag is text of 1 to 64 characters')])
def test_a_call_s_values_of_the_wrong_kind_are_one_line(kw, msg):
    from throughput_bench.scale.launch import SweepOptions, check
    from throughput_bench.core import BenchError
    with pytest.raises(BenchError, match=re.escape(msg)): check(SweepOptions.of(**(dict(models=['resnet18']) | kw)))

def test_serve_reads_a_path_as_its_text_and_latency_refuses_a_form_that_is_not():
    from throughput_bench import api
    from throughput_bench.serve.loadgen import form_variants
    from throughput_bench.core import BenchError
    o = api.make_options(api.ServeOptions, (Path('resnet18'),), dict(backend_options=Path('hint=LATENCY'), host=Path('127.0.0.1')))
    assert (o.model, o.backend_options, o.host) == ('resnet18', 'hint=LATENCY', '127.0.0.1')
    with pytest.raises(BenchError, match='write KEY=VALUE'): form_variants([5])
