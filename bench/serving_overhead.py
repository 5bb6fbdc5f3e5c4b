"""What does serving cost over the bare model? ResNet-18 at 224 px on this CPU, in process and behind `tbench serve`.

Measured side by side in interleaved rounds (one results folder per round), each round:
  1. in process: `tbench infer` at batch 1 and batch 8;
  2. served with max batch 1: `tbench latency` single-stream (3 runs) -> served p50 minus in-process p50 at batch 1
     (target: at most 5 ms);
  3. served with dynamic batching (max batch 8, 10 ms timeout): `tbench latency --scenario offline --concurrency 8 16`
     -> served img/s at saturation over `tbench infer` at batch 8 (target: at least 80%).
One pair of measurements cannot tell a 5 ms overhead from this machine's run-to-run noise: the script prints each round's
figures and their mean with a 95% interval over the rounds. Then `tbench report` on the last round's folder.

    python bench/serving_overhead.py [--rounds 3] [--out DIR] [--model resnet18] [--size 224]
"""
import argparse, subprocess, sys, time
from pathlib import Path
import pandas as pd
from throughput_bench.serve.serving import ServerProcess
from throughput_bench.analyse.store import read_results
from throughput_bench.analyse.charts import serving_overhead
sys.path.insert(0, str(Path(__file__).parent))
from common import mean_ci, show

BIN = Path(sys.executable).parent

def tb(*args, cwd):
    t0 = time.perf_counter()
    r = subprocess.run([str(BIN / 'tbench'), *map(str, args)], cwd=cwd, capture_output=True, text=True)
    if r.returncode: raise SystemExit(f"tbench {' '.join(map(str, args))} failed:\n{r.stderr}")
    print(r.stdout.strip(), f"\n  ({time.perf_counter() - t0:.0f} s)", flush=True)

def one_round(out, a):
    "The overhead table of one round, measured into `out`."
    common = ['--wandb', 'disabled', '--no-progress', '--results-dir', out / 'results']
    tb('infer', '--models', a.model, '--input-size', a.size, '--device', 'cpu', '--precisions', 'fp32', '--batch-sizes', 1, 8, *common, cwd=out)
    serve = ['--model', a.model, '--input-size', a.size, '--device', 'cpu']
    with ServerProcess(*serve, '--max-batch-size', 1, ready_timeout=300) as s:
        tb('latency', s.url, '--runs', 3, '--min-duration', 5, *common, cwd=out)
    with ServerProcess(*serve, '--max-batch-size', 8, '--batch-timeout-ms', 10, ready_timeout=300) as s:
        tb('latency', s.url, '--scenario', 'offline', '--concurrency', 8, 16, '--runs', 3, '--min-duration', 5, *common, cwd=out)
    return serving_overhead(read_results(out / 'results'))

def main():
    p = argparse.ArgumentParser(); p.add_argument('--out', default='bench_serving'); p.add_argument('--model', default='resnet18')
    p.add_argument('--size', type=int, default=224); p.add_argument('--rounds', type=int, default=3); a = p.parse_args()
    root = Path(a.out).resolve(); root.mkdir(parents=True, exist_ok=True)
    diff, share, rows = [], [], []
    for i in range(a.rounds):
        out = root / f"round{i + 1}"; out.mkdir(exist_ok=True)
        ov = one_round(out, a)
        rows.append(ov.assign(round=i + 1))
        for o in ov.itertuples():
            if o.served_p50_ms == o.served_p50_ms: diff.append(o.p50_overhead_ms)
            if o.served_img_s == o.served_img_s: share.append(o.served_share)
        print(f"round {i + 1}: p50 overhead {diff[-1] if diff else float('nan'):+.1f} ms, served/in-process img/s {share[-1] if share else float('nan'):.0%}", flush=True)
    with pd.option_context('display.width', 200, 'display.max_columns', 20, 'display.precision', 2):
        print(pd.concat(rows).to_string(index=False))
    print(f"served p50 at batch 1 minus in process: {show(*mean_ci(diff), fmt='+.1f', unit=' ms')} over {len(diff)} rounds (target <= +5 ms)")
    print(f"served throughput at saturation over in process: {show(*[100 * x for x in mean_ci(share)], fmt='.0f', unit='%')} over {len(share)} rounds (target >= 80%)")
    tb('report', out / 'results', '-o', root / 'report', cwd=root)

if __name__ == '__main__': main()
