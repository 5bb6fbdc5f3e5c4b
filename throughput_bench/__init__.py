__version__ = "0.1.0"

# The package's parts are its folders, from the bottom up: `backbones/` (the registry), `machine/` (the device, its
# record, power, allocator and other load), `analyse/` (results, charts, history, submissions), `backends/` (the
# runtimes), `measure/` (what is timed and counted), `serve/` (a real server and its load generator), `scale/` (sweeps,
# DDP, SLURM) and `studies/` (compare, tune, map); `core` is the vocabulary they share, `api` the front door, `cli`
# `tbench`, `ddp` the entry point of each rank under torchrun.
# The Python API (`throughput_bench.api`), importable from the package without importing torch until used:
# `from throughput_bench import infer, train, serve, latency, models, hw, report, history, globe, collect, sync, repair,
# map_raster`.
_API = ('infer', 'train', 'serve', 'latency', 'models', 'hw', 'report', 'history', 'globe', 'collect', 'sync', 'repair',
        'view')
_ELSEWHERE = {'map_raster': 'studies.mapping'}  # name -> the module that defines it
__all__ = list(_API) + list(_ELSEWHERE)

def __getattr__(name):
    if name in _API or name in _ELSEWHERE:
        import importlib
        return getattr(importlib.import_module(f"throughput_bench.{_ELSEWHERE.get(name, 'api')}"), name)
    raise AttributeError(f"module 'throughput_bench' has no attribute {name!r}")

import sys as _sys, types as _types

class _Package(_types.ModuleType):
    """This package, whose API function `models` shares its name with the folder `throughput_bench.models` (the
    registry): importing a module of that folder would bind the folder over the name, so that `from throughput_bench
    import models` gave the function once and the folder after. The import system's binding of a submodule to an API
    name is skipped; the folder's modules stay importable as `from throughput_bench.backbones.registry import get_model`
    (through `sys.modules`)."""
    def __setattr__(self, name, value):
        if name in _API and isinstance(value, _types.ModuleType): return
        super().__setattr__(name, value)

_sys.modules[__name__].__class__ = _Package
