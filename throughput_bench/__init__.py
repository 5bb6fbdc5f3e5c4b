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

import sys as _sys, types as _types

class _Package(_types.ModuleType):
    """This package, whose API function `globe` shares its name with the submodule `throughput_bench.globe`: importing
    the submodule would bind the module over the name, so that `from throughput_bench import globe` gave the function
    once and the module after. The import system's binding of a submodule to an API name is skipped; the submodule
    stays importable as `from throughput_bench.globe import write_globe` (through `sys.modules`)."""
    def __setattr__(self, name, value):
        if name in _API and isinstance(value, _types.ModuleType): return
        super().__setattr__(name, value)

_sys.modules[__name__].__class__ = _Package
