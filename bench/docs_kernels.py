"""What the docs build saves by keeping each job's kernel from notebook to notebook.

`tools/build_docs.py` executes every notebook in nbs/ (the notebooks' test, and the site). It used to start a fresh
Jupyter kernel for each of the 44: Python's start, then torch's and timm's imports (about 9 s of CPU on a 2-core
VM) in most of them. Now each job keeps its kernel and resets it between notebooks (names, environment, working
folder), as `nbdev_test`'s worker processes are; `--fresh-kernels` is the old way. This script runs the whole build
both ways, in alternating order over `--rounds` rounds (the machine drifts over minutes), and prints for each the
wall seconds, the CPU seconds of the build and all its processes, and the notebook-seconds the build reports, then
the ratios of the means. Each build takes 3 to 6 minutes here; keep the machine otherwise quiet.

    python bench/docs_kernels.py [--rounds 1] [--jobs 2]
"""
import argparse, os, re, resource, subprocess, sys, tempfile, time
from pathlib import Path
import numpy as np

ROOT = Path(__file__).resolve().parents[1]

def build(fresh:bool, jobs:int, out:Path)->dict:
    "One whole build: `{'wall', 'cpu', 'notebook_s'}` (cpu: of the build and every process it reaped)."
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.monotonic()
    cmd = [sys.executable, str(ROOT / 'tools' / 'build_docs.py'), '--jobs', str(jobs), '--out', str(out)]
    p = subprocess.run(cmd + ['--fresh-kernels'] * fresh, capture_output=True, text=True, cwd=ROOT)
    wall = time.monotonic() - t
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode: sys.exit(f"docs_kernels: the build failed ({'fresh' if fresh else 'kept'} kernels):\n{p.stderr[-2000:]}")
    m = re.search(r'executed \d+ notebooks \((\d+) notebook-seconds', p.stdout)
    return dict(wall=wall, cpu=(r1.ru_utime + r1.ru_stime) - (r0.ru_utime + r0.ru_stime),
                notebook_s=float(m.group(1)) if m else float('nan'))

def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--rounds', type=int, default=1); ap.add_argument('--jobs', type=int, default=2)
    a = ap.parse_args()
    got = {'fresh': [], 'kept': []}
    with tempfile.TemporaryDirectory() as d:
        for i in range(a.rounds):
            for way in (['fresh', 'kept'] if i % 2 == 0 else ['kept', 'fresh']):
                r = build(way == 'fresh', a.jobs, Path(d) / way)
                got[way].append(r)
                print(f"round {i + 1} {way:5} kernels: {r['wall']:6.0f} s wall, {r['cpu']:6.0f} CPU-s, "
                      f"{r['notebook_s']:5.0f} notebook-s", flush=True)
    mean = {w: {k: float(np.mean([r[k] for r in rs])) for k in ('wall', 'cpu', 'notebook_s')} for w, rs in got.items()}
    print(f"\n{os.cpu_count()} cores, {a.jobs} jobs, {a.rounds} round(s); fresh / kept:")
    for k, name in (('wall', 'wall seconds'), ('cpu', 'CPU seconds'), ('notebook_s', 'notebook-seconds')):
        print(f"  {name:17} {mean['fresh'][k]:7.0f} / {mean['kept'][k]:7.0f} = {mean['fresh'][k] / mean['kept'][k]:.2f}x")

if __name__ == '__main__': main()
