"""What does serving cost over the bare model? ResNet-18 at 224 px on this CPU, in process and behind `tbench serve`.

All in one results folder, measured side by side in one run:
  1. in process: `tbench infer` at batch 1 and batch 8 (3 worker processes each, the defaults);
  2. served with max batch 1: `tbench latency` single-stream (3 runs) -> served p50 minus in-process p50 at batch 1
     (target: at most 5 ms);
  3. served with dynamic batching (max batch 8, 10 ms timeout): `tbench latency --scenario offline --concurrency 8 16`
     -> served img/s at saturation over `tbench infer` at batch 8 (target: at least 80%).
Then `tbench report` on the folder (serving.png, summary.md with the overhead table).

    python bench/serving_overhead.py [--out DIR] [--model resnet18] [--size 224]
"""
import argparse, subprocess, sys, time
from pathlib import Path
import pandas as pd
from throughput_bench.serving import ServerProcess
from throughput_bench.store import read_results
from throughput_bench.charts import serving_overhead

BIN = Path(sys.executable).parent

def tb(*args, cwd):
    t0 = time.perf_counter()
    r = subprocess.run([str(BIN / 'tbench'), *map(str, args)], cwd=cwd, capture_output=True, text=True)
    if r.returncode: raise SystemExit(f"tbench {' '.join(map(str, args))} failed:\n{r.stderr}")
    print(r.stdout.strip(), f"\n  ({time.perf_counter() - t0:.0f} s)", flush=True)

def main():
    p = argparse.ArgumentParser(); p.add_argument('--out', default='bench_serving'); p.add_argument('--model', default='resnet18')
    p.add_argument('--size', type=int, default=224); a = p.parse_args()
    out = Path(a.out).resolve(); out.mkdir(parents=True, exist_ok=True)
    common = ['--wandb', 'disabled', '--no-progress', '--results-dir', out / 'results']
    tb('infer', '--models', a.model, '--input-size', a.size, '--device', 'cpu', '--precisions', 'fp32', '--batch-sizes', 1, 8, *common, cwd=out)
    serve = ['--model', a.model, '--input-size', a.size, '--device', 'cpu']
    with ServerProcess(*serve, '--max-batch-size', 1, ready_timeout=300) as s:
        tb('latency', s.url, '--runs', 3, '--min-duration', 5, *common, cwd=out)
    with ServerProcess(*serve, '--max-batch-size', 8, '--batch-timeout-ms', 10, ready_timeout=300) as s:
        tb('latency', s.url, '--scenario', 'offline', '--concurrency', 8, 16, '--runs', 3, '--min-duration', 5, *common, cwd=out)
    df = read_results(out / 'results')
    ov = serving_overhead(df)
    with pd.option_context('display.width', 200, 'display.max_columns', 20, 'display.precision', 2): print(ov.to_string(index=False))
    for o in ov.itertuples():
        if o.served_p50_ms == o.served_p50_ms: print(f"served p50 at batch 1: {o.served_p50_ms:.1f} ms vs {o.in_process_p50_ms:.1f} ms in process: {o.p50_overhead_ms:+.1f} ms "
              f"(target <= +5 ms; the client's own p50 against a null endpoint: {o.client_p50_ms:.1f} ms)")
        if o.served_img_s == o.served_img_s: print(f"served throughput at saturation (max batch {o.max_batch}): {o.served_img_s:.1f} img/s vs {o.in_process_img_s:.1f} img/s "
              f"in process at batch {o.max_batch}: {100 * o.served_share:.0f}% (target >= 80%)")
    tb('report', out / 'results', '-o', out / 'report', cwd=out)

if __name__ == '__main__': main()
