"""Does `tbench tune` find what driving the runtimes by hand found? The issue's goals on this CPU:
resnet50 at 224 px: a configuration at least 1.5x fp32 eager throughput, with the compare CI excluding 1.4;
vit_small_patch16_224 at batch 1: at least 1.3x.

    python bench/tune.py                         # both, 10 minutes each
    python bench/tune.py --models resnet50 --budget 5
"""
import argparse, tempfile, time

def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--models', nargs='+', default=['resnet50', 'vit_small_patch16_224']); ap.add_argument('--budget', type=float, default=10)
    ap.add_argument('--results-dir', default=None, help="keep the rows and charts here (default: a temporary folder)")
    a = ap.parse_args()
    from throughput_bench.studies.tune import tune
    goals = {'resnet50': (None, 1.5, 1.4), 'vit_small_patch16_224': ([1], 1.3, None)}
    d = a.results_dir or tempfile.mkdtemp(prefix='tbench-tune-')
    for m in a.models:
        batches, goal, floor = goals.get(m, (None, None, None))
        t0 = time.monotonic()
        r = tune(m, device='cpu', budget_minutes=a.budget, batch_sizes=batches, results_dir=d, wait_idle=5, progress=False)
        v = r.versus_eager.iloc[0] if len(r.versus_eager) else None
        print(f"\n{m}: {(time.monotonic() - t0) / 60:.1f} min; best: {r.best_throughput['config']} "
              f"{float(r.best_throughput['throughput_mean']):.1f} img/s ({r.best_throughput.get('stage')})")
        if r.best_latency: print(f"  best batch-1 latency: {r.best_latency['config']} p50 {float(r.best_latency['latency_p50_ms']):.1f} ms")
        if v is not None:
            print(f"  {v.sentence}")
            ok = goal is None or (v.ratio >= goal and (floor is None or v.ratio_low > floor))
            print(f"  goal {goal}x" + (f" with the CI above {floor}" if floor else '') + f": {'met' if ok else 'NOT met'}")
        print(f"  command: {r.command}\n  chart: {r.chart}")
        print(r.table.sort_values('throughput_mean', ascending=False).head(8).to_string(index=False, float_format=lambda x: f"{x:.1f}"))

if __name__ == '__main__': main()
