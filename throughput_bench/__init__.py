__version__ = "0.1.0"

# The Python API (`throughput_bench.api`), importable from the package without importing torch until used:
# `from throughput_bench import infer, train, serve, latency, models, hw, report, globe, collect, sync, repair`.
_API = ('infer', 'train', 'serve', 'latency', 'models', 'hw', 'report', 'globe', 'collect', 'sync', 'repair')
__all__ = list(_API)

def __getattr__(name):
    if name in _API:
        from throughput_bench import api
        return getattr(api, name)
    raise AttributeError(f"module 'throughput_bench' has no attribute {name!r}")
