"""What does isolation cost? A sweep of tiny configurations through `tbench infer`, against the time its workers spent.

Runs, each as a fresh command: (1) a sweep of 4 tiny configurations, one worker process each; (2) the same sweep with
--repeats 3; (3) the same command again with nothing left to do. For (1) and (2) it prints the wall time, the seconds
the workers spent (their `wall_seconds`: build, probe, warm-up, measure) and the difference per worker process, which
is what isolation and the sweep itself cost.

    python bench/isolation_cost.py
"""
import subprocess, sys, tempfile, time
from pathlib import Path
from throughput_bench.store import read_results

TINY = ['--models', 'resnet18', 'vit_tiny_patch16_224', '--batch-sizes', '1', '2', '--device', 'cpu', '--input-size', '32',
        '--precisions', 'fp32', '--timed-iters', '5', '--warmup', '1', '--warmup-seconds', '0', '--threads', '1',
        '--wandb', 'disabled', '--no-progress', '--wait-idle', '0']

def run(args, out):
    t0 = time.perf_counter()
    r = subprocess.run([str(Path(sys.executable).parent / 'tbench'), 'infer', *args, '--results-dir', str(out)], capture_output=True, text=True)
    if r.returncode: raise SystemExit(r.stderr)
    return time.perf_counter() - t0

def main():
    seen = []
    with tempfile.TemporaryDirectory() as d:
        for label, extra in (('4 configurations x 1 worker', ['--repeats', '1']), ('4 configurations x 3 workers', ['--repeats', '3'])):
            out = Path(d) / label.replace(' ', '_')
            wall = run(TINY + extra, out)
            df = read_results(out)
            k = int(df.repeats.sum())
            work = df.wall_seconds.sum()
            print(f"{label}: wall {wall:.1f} s, in the workers {work:.1f} s, "
                  f"sweep + isolation {(wall - work):.1f} s = {(wall - work) / k:.2f} s per worker process ({k} processes; "
                  f"includes the command's own start and the fork server's imports, once)", flush=True)
            seen.append((wall, work, k))
        (w1, s1, k1), (w3, s3, k3) = seen
        print(f"marginal cost of isolation: {((w3 - s3) - (w1 - s1)) / (k3 - k1):.2f} s per extra worker process "
              f"(fork from the server, contention check, row transfer)")
        idle = run(TINY + ['--repeats', '3'], out)
        print(f"the same command with nothing to do: {idle:.1f} s")

if __name__ == '__main__': main()
