"""How much memory reading a results CSV takes, as a multiple of the file's size.

A results file comes from other people (contributed results, a SLURM shard, a file grown over months), and the store reads
it whole to check every line. This script builds files of a given size from real rows (and a junk one, every line bad; our own rows by default, ~530 bytes each),
reads each in a fresh process, and prints the peak resident memory the read added, over the file's size.

    python bench/csv_memory.py --mb 50 200
"""
import argparse, json, os, subprocess, sys, tempfile
from pathlib import Path

CHILD = r"""
import resource, sys, json, time
from throughput_bench.analyse.store import read_results, parse_csv, scan_csv
import pandas as pd
kind, path = sys.argv[1], sys.argv[2]
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
t = time.perf_counter()
if kind == 'frame': n = len(read_results(path))                     # what report, globe, compare read
elif kind == 'scan': s = scan_csv(path); n = s.rows + len(s.bad)      # what an append or a resume checks
else: n = sum(map(len, parse_csv(path)[1:]))                          # a dict per row (repair's old way)
s = time.perf_counter() - t
print(json.dumps({'rows': n, 'added_mb': (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - base) / 1024, 'seconds': s}))
"""

def build(path:Path, source:Path, mb:float, junk:bool=False):
    "Write `mb` MiB of `source`'s rows (or of junk lines) to `path`."
    lines = source.read_text().splitlines(keepends=True)
    header, body = lines[0], lines[1:]
    if junk: body = ['"unterminated,' + 'x' * 400 + '\n', 'a,b\n', 'no,commas,here,' * 30 + '\n']
    block = ''.join(body).encode()
    with open(path, 'wb') as f:
        f.write(header.encode())
        for _ in range(int(mb * 2**20 // len(block)) + 1): f.write(block)

def measure(kind:str, path:Path)->dict:
    r = subprocess.run([sys.executable, '-c', CHILD, kind, str(path)], capture_output=True, text=True, check=True)
    return json.loads(r.stdout.strip().splitlines()[-1])

if __name__ == '__main__':
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--mb', type=float, nargs='+', default=[50.0])
    ap.add_argument('--source', default=str(Path(__file__).parent.parent / 'results/cpu_intel_xeon_processor.csv'))
    a = ap.parse_args()
    print(f"{'file':>10} {'MiB':>6} {'what':>6} {'rows':>9} {'added MiB':>10} {'× file':>7} {'s':>6}")
    with tempfile.TemporaryDirectory() as d:
        for mb in a.mb:
            for junk in (False, True):
                p = Path(d) / f"{'junk' if junk else 'rows'}.csv"
                build(p, Path(a.source), mb, junk)
                size = p.stat().st_size / 2**20
                for kind in (['frame', 'scan', 'dicts'] if not junk else ['scan']):
                    m = measure(kind, p)
                    print(f"{p.stem:>10} {size:6.0f} {kind:>6} {m['rows']:9d} {m['added_mb']:10.0f} {m['added_mb'] / size:7.1f} {m['seconds']:6.1f}")
                p.unlink()
