"Issue 44: the first example on a busy machine: the time-capped path judged like for like, the batch that ran recorded."
import pandas as pd
import pytest
from conftest import FAST_API
from throughput_bench import infer

def test_the_time_capped_path_passes_the_gate_in_every_precision(work):
    """A time cap (every step predicted over its limit) runs batch 1 instead of the default 32: each precision's
    outputs are compared image for image at the batch that ran (the gate compared 1 image against 8: `wrong`, inf), and
    the row says batch 1, asked 32."""
    kw = {k: v for k, v in FAST_API.items() if k != 'batch_sizes'} | dict(results_dir=work / 'results',
                                                                          max_step_seconds=1e-4)
    df = infer(['resnet18'], **(kw | dict(precisions=['fp32', 'bf16', 'fp16', 'amp'])))
    ran = df[df.status.ne('skipped')]
    assert len(ran) >= 2 and ran.status.eq('ok').all(), ran[['precision', 'status', 'error']].to_string()
    assert ran.batch_size.eq(1).all() and ran.batch_requested.eq(32).all() and ran.batch_reason.eq('time-cap').all()
    gated = ran[ran.precision.ne('fp32')]
    assert (gated.max_rel_diff <= gated.tolerance).all()
