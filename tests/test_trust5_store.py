"""Issue 51 (trust 5), the store's findings: every number a row holds reads back (3); the drift record and a results CSV
lose no line to a repair beside a writer (1) and keep good lines byte for byte (15); history orders what it can and
says what it cannot (4); a re-run keeps the accuracy check and an unchecked row never hides a checked one (9)."""
import dataclasses, math, threading
from pathlib import Path
import numpy as np, pandas as pd
import pytest
from hypothesis import given, settings, strategies as st
from throughput_bench.core import BenchResult
from throughput_bench.analyse.store import ResultStore, read_results, fmt_value

# ---- 3: numbers of numpy's types are written as figures, not as `np.float64(0.0)` ----
NUMERIC = [f for f in dataclasses.fields(BenchResult) if f.type in ('Optional[float]', 'Optional[int]')]
finite = st.floats(-1e9, 1e9, allow_nan=False, width=64)

def numpy_row():
    "A row of numpy scalars (float64, float32, int64) in every numeric column of `BenchResult`."
    ints = st.builds(np.int64, st.integers(-2**40, 2**40))
    floats = st.one_of(st.builds(np.float64, finite), st.builds(np.float32, finite))
    return st.fixed_dictionaries({f.name: ints if f.type == 'Optional[int]' else floats for f in NUMERIC})

@settings(max_examples=5, deadline=None)
@given(st.lists(numpy_row(), min_size=1, max_size=6))
def test_every_numeric_column_reads_back_from_numpy_scalars(tmp_path_factory, rows):
    "Each numeric column of `BenchResult`, given a numpy scalar, reads back as its value (rounded to 6 decimals)."
    st_ = ResultStore(tmp_path_factory.mktemp('s'), 'cpu_x')
    st_.append(*[BenchResult(model_name='resnet18', **r) for r in rows])
    got = read_results(st_.csv_path)
    for i, row in enumerate(rows):
        for k, v in row.items():
            assert math.isclose(got[k].iloc[i], round(float(v), 6), rel_tol=1e-12, abs_tol=1e-9), (k, got[k].iloc[i], v)

def test_top1_drop_of_numpy_type_is_not_stored_as_its_repr(tmp_path):
    "The probe's case: an accuracy row's drop and its interval, numpy floats, are figures in the file."
    st_ = ResultStore(tmp_path, 'cpu_x')
    st_.append(BenchResult(model_name='resnet18', throughput_mean=1.0, top1_drop=np.float64(0.0),
                           top1_drop_ci_low=np.float64(-1.25), top1_drop_ci_high=np.float32(2.5)))
    assert 'np.float' not in st_.csv_path.read_text()
    got = read_results(st_.csv_path).iloc[0]
    assert (got.top1_drop, got.top1_drop_ci_low, got.top1_drop_ci_high) == (0.0, -1.25, 2.5)
