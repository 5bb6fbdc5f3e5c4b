"""What does isolation cost? A sweep of tiny configurations through `tbench infer`, against the time its workers spent.

Each round runs, as fresh commands and in alternating order: a sweep of 4 tiny configurations with one worker process
each, the same sweep with --repeats 3, and the same command again with nothing left to do. The marginal cost of a worker
process (fork from the server, the contention check, the row coming back) is the difference of (wall - worker seconds)
between the two sweeps per extra process; the script prints each round's figure and their mean with a 95% interval.

    python bench/isolation_cost.py [--rounds 5]
"""
import argparse, subprocess, sys, tempfile, time
from pathlib import Path
sys.path.insert(0, str(Path(__file__).parent))
from common import mean_ci, show
from throughput_bench.analyse.store import read_results

TINY = ['--models', 'resnet18', 'vit_tiny_patch16_224', '--batch-sizes', '1', '2', '--device', 'cpu', '--input-size', '32',
        '--precisions', 'fp32', '--timed-iters', '5', '--warmup', '1', '--warmup-seconds', '0', '--threads', '1',
        '--wandb', 'disabled', '--no-progress', '--wait-idle', '0']

def run(args, out):
    t0 = time.perf_counter()
    r = subprocess.run([str(Path(sys.executable).parent / 'tbench'), 'infer', *args, '--results-dir', str(out)], capture_output=True, text=True)
    if r.returncode: raise SystemExit(r.stderr)
    return time.perf_counter() - t0

def overhead(extra, out):
    "`(wall - worker seconds, worker processes)` of one sweep."
    wall = run(TINY + extra, out)
    df = read_results(out)
    return wall - df.wall_seconds.sum(), int(df.repeats.sum())

def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0]); p.add_argument('--rounds', type=int, default=5); a = p.parse_args()
    marginal, idle = [], []
    with tempfile.TemporaryDirectory() as d:
        for i in range(a.rounds):
            order = [('1', 1), ('3', 3)] if i % 2 == 0 else [('3', 3), ('1', 1)]
            got = {k: overhead(['--repeats', k], Path(d) / f"r{i}_{k}") for k, _ in order}
            (o1, k1), (o3, k3) = got['1'], got['3']
            marginal.append((o3 - o1) / (k3 - k1))
            idle.append(run(TINY + ['--repeats', '3'], Path(d) / f"r{i}_3"))
            print(f"round {i + 1}: {marginal[-1]:.2f} s per extra worker process; nothing to do: {idle[-1]:.1f} s", flush=True)
    print(f"\nmarginal cost of isolation: {show(*mean_ci(marginal), unit=' s')} per extra worker process ({a.rounds} rounds)")
    print(f"a command with nothing left to do: {show(*mean_ci(idle), fmt='.1f', unit=' s')}")

if __name__ == '__main__': main()
