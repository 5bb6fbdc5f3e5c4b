"Issue 14: the Python API is importable from the package, whatever else was imported, and behaves like the CLI."
import importlib, pkgutil
import pytest
from conftest import FAST_API
import throughput_bench

API = ('infer', 'train', 'models', 'hw', 'report', 'sync', 'repair')

def test_api_names_are_functions_even_after_every_module_is_imported():
    for m in pkgutil.iter_modules(throughput_bench.__path__): importlib.import_module(f"throughput_bench.{m.name}")
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
