"""TorchScript as a throughput_bench backend, from a package of its own.

The model is traced on one image of the row's input, frozen (weights folded in as constants) and passed through
`torch.jit.optimize_for_inference`; the timer calls the scripted module on a batch made once. Nothing in throughput_bench
names this module: the entry point in `pyproject.toml` does.
"""
from __future__ import annotations
import time
import torch
from throughput_bench.backends.base import Backend, Prepared

class TorchScript(Backend):
    "The model traced with `torch.jit.trace`, frozen and optimised for inference."
    name, package = 'torchscript', None  # needs torch only, which is always there
    devices, precisions = ('cpu', 'cuda'), ('fp32',)
    packages = ('tbench-torchscript',)

    def tune_words(self, batch, threads, precision, device_type, compile_modes=()):
        "fp32 at its defaults: one screen per batch and thread count."
        return [''] if device_type in self.devices and precision == 'fp32' else []

    def prepare(self, model, spec, device)->Prepared:
        x1 = torch.randn(1, spec.in_chans, spec.input_size, spec.input_size, device=device)
        t0 = time.perf_counter()
        with torch.no_grad():
            scripted = torch.jit.optimize_for_inference(torch.jit.freeze(torch.jit.trace(model.eval(), x1)))
        built = time.perf_counter() - t0
        def run(x):
            with torch.no_grad(): return scripted(x)
        def step(batch:int):
            x = torch.randn(batch, spec.in_chans, spec.input_size, spec.input_size, device=device)
            return (lambda: run(x)), batch
        return Prepared(step=step, output=lambda x: run(x.to(device)), version=torch.__version__, build_seconds=built,
                        settings=f"jit=trace+freeze threads={torch.get_num_threads()}")

BACKEND = TorchScript()
