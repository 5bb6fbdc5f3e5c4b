"""How long `tbench submit --check` and `tbench leaderboard` take over many submission folders.

Builds N folders from the committed submissions (each another submitter on another machine: its figures moved by under
1%, its timestamps by seconds, its checksums re-sealed, so every one passes the rules and none is the same run as
another), then times, each in a fresh process, the check of all of them and the leaderboard built from them: wall seconds, and
the CPU seconds of the process (on a busy host the wall time grows with what else runs; the CPU time much less). With
`--old PATH` it times a checkout of the package at PATH too, over the first `--old-n` folders (the old code is slow).

    python bench/submit_scale.py --n 500
    python bench/submit_scale.py --n 500 --old /path/to/older/checkout --old-n 50
"""
import argparse, csv, hashlib, json, os, random, shutil, subprocess, sys, tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOURCES = ['cpu_amd_epyc', 'nvidia_h200']
CHILD = r"""
import sys, time
from pathlib import Path
t, c = time.perf_counter(), time.process_time()
from throughput_bench.analyse.submit import check_folders, leaderboard
what, out, folders = sys.argv[1], sys.argv[2], [Path(f) for f in sys.argv[3:]]
if what == 'check': n = len(check_folders(*folders))
else: leaderboard(*folders, output=out); n = 0
print(f"{time.perf_counter() - t:.1f} {n} {time.process_time() - c:.1f}")
"""

def build(dest:Path, n:int, seed:int=0)->list:
    "`n` submission folders under `dest`, alternately from each committed one."
    rng, out = random.Random(seed), []
    for i in range(n):
        src = ROOT / 'submissions' / SOURCES[i % len(SOURCES)]
        f = Path(shutil.copytree(src, dest / f"{src.name}_{i:04d}"))
        m = json.loads((f / 'manifest.json').read_text())
        p = f / next(k for k in m['files'] if k.endswith('.csv'))
        with open(p, newline='') as fh: rows = list(csv.DictReader(fh))
        k = 1 + rng.uniform(-0.005, 0.005)
        for r in rows:
            if r['status'] != 'ok': continue
            for c in ('throughput_mean', 'throughput_ci_low', 'throughput_ci_high', 'throughput_repeats',
                      'throughput_rerun_low', 'throughput_rerun_high'):
                if r.get(c): r[c] = ';'.join(repr(float(x) * k) for x in r[c].split(';'))
            r['timestamp'] = r['timestamp'][:-2] + f"{(int(r['timestamp'][-2:]) + i) % 60:02d}"
        with open(p, 'w', newline='') as fh:
            w = csv.DictWriter(fh, list(rows[0])); w.writeheader(); w.writerows(rows)
        h = p.with_name(p.stem + '_hardware.json'); d = json.loads(h.read_text()); d['machine_id'] = f"machine-{i}"
        h.write_text(json.dumps(d))
        m['submitted_by'] = f"submitter {i}"
        for name in m['files']: m['files'][name]['sha256'] = hashlib.sha256((f / name).read_bytes()).hexdigest()
        (f / 'manifest.json').write_text(json.dumps(m))
        out.append(f)
    return out

def timed(code:Path, what:str, folders:list, out:Path)->str:
    "Seconds (and the problem lines' count) of `what` in a fresh process importing the package at `code`."
    env = os.environ | {'PYTHONPATH': str(code)}
    r = subprocess.run([sys.executable, '-c', CHILD, what, str(out), *map(str, folders)], capture_output=True, text=True,
                       env=env)
    if r.returncode: raise SystemExit(r.stderr[-2000:])
    return r.stdout.split()

if __name__ == '__main__':
    a = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    a.add_argument('--n', type=int, default=500, help="submission folders (default 500)")
    a.add_argument('--old', type=Path, help="a checkout of an older version to time beside this one")
    a.add_argument('--old-n', type=int, default=50, help="folders the older version is timed over (default 50)")
    a = a.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folders = build(Path(tmp) / 'subs', a.n)
        for name, code, n in [('this checkout', ROOT, a.n)] + ([(f"old: {a.old}", a.old, a.old_n)] if a.old else []):
            s, problems, s_cpu = timed(code, 'check', folders[:n], Path(tmp) / 'board')
            b, _, b_cpu = timed(code, 'board', folders[:n], Path(tmp) / 'board')
            print(f"{name}: {n} folders: --check {s} s ({s_cpu} s of CPU; {problems} problem lines), leaderboard {b} s "
                  f"({b_cpu} s of CPU)")
