"""Does the test suite pass on a busy machine? Run the README's test command (or a part of it) with busy-loop
processes beside it, and report its exit code and how long it took.

    python bench/busy_suite.py                 # the whole README test command, two busy loops
    python bench/busy_suite.py --loops 2 -- pytest -q tests/test_trust.py tests/test_infer_cli.py
"""
import argparse, re, subprocess, sys, time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SPIN = "import time\nwhile True: pass"

def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument('--loops', type=int, default=2, help="busy-loop processes beside the tests")
    p.add_argument('cmd', nargs=argparse.REMAINDER, help="the command (default: the README's test command)")
    a = p.parse_args()
    cmd = ' '.join(c for c in a.cmd if c != '--') or next(l for l in (ROOT / 'README.md').read_text().splitlines() if l.startswith('nbdev_test '))
    spin = [subprocess.Popen([sys.executable, '-c', SPIN]) for _ in range(a.loops)]
    t0 = time.perf_counter()
    try: rc = subprocess.run(cmd, shell=True, cwd=ROOT).returncode
    finally:
        for s in spin: s.kill(); s.wait()
    print(f"\n{cmd!r} beside {a.loops} busy loop(s): exit {rc} after {time.perf_counter() - t0:.0f} s")
    sys.exit(rc)

if __name__ == '__main__': main()
