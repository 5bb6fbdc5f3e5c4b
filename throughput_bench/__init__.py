__version__ = "0.1.0"

# The Python API (`throughput_bench.api`), importable from the package without importing torch until used:
# `from throughput_bench import infer, train, serve, latency, models, hw, report, history, globe, collect, sync, repair,
# map_raster`.
_API = ('infer', 'train', 'serve', 'latency', 'models', 'hw', 'report', 'history', 'globe', 'collect', 'sync', 'repair',
        'view')
_ELSEWHERE = {'map_raster': 'mapping'}  # name -> the module that defines it (never a name that is also a module's)
__all__ = list(_API) + list(_ELSEWHERE)

def __getattr__(name):
    if name in _API or name in _ELSEWHERE:
        import importlib
        return getattr(importlib.import_module(f"throughput_bench.{_ELSEWHERE.get(name, 'api')}"), name)
    raise AttributeError(f"module 'throughput_bench' has no attribute {name!r}")
