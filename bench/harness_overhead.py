"""What does the harness cost? `tbench infer`'s img/s against a bare `while` loop on the same model and batch.

Three figures, measured in one run:
1. the harness's own cost per iteration: `measure` timing an empty step (its loop, clock read and bookkeeping),
   as a fraction of this model's iteration time: a bound that machine noise cannot blur;
2. in-process rounds, interleaved (bare, measure, bare, measure, ...) on the same model object and batch;
3. rounds of the full `tbench infer` path (a fresh child process per configuration) against the bare loop.
Then one run with the adaptive stop (target CI 1%) reports how long reaching the CI target took.

    python bench/harness_overhead.py --model resnet18 --batch 16 --size 112 --seconds 5 --rounds 5
"""
import argparse, statistics, time
import torch
from throughput_bench.core import BenchSpec
from throughput_bench.backbones.registry import get_model, build
from throughput_bench.measure.timing import TimingConfig, measure
from throughput_bench.scale.sweep import run_isolated

def bare_loop(model, x, seconds):
    "The 10-line loop: warm up, then forward passes until `seconds` have passed."
    with torch.inference_mode():
        for _ in range(5): model(x)
        n, t0 = 0, time.perf_counter()
        while time.perf_counter() - t0 < seconds:
            model(x); n += 1
        dt = time.perf_counter() - t0
    return n * x.shape[0] / dt

def main():
    p = argparse.ArgumentParser()
    p.add_argument('--model', default='resnet18'); p.add_argument('--batch', type=int, default=16)
    p.add_argument('--size', type=int, default=112); p.add_argument('--seconds', type=float, default=5)
    p.add_argument('--rounds', type=int, default=5); p.add_argument('--threads', type=int, default=torch.get_num_threads())
    a = p.parse_args()
    torch.set_num_threads(a.threads)
    model = build(get_model(a.model), 3, a.size).eval()
    x = torch.randn(a.batch, 3, a.size, a.size)
    spec = BenchSpec(a.model, batch_size=a.batch, input_channels=3, input_size=a.size, threads=a.threads)
    fixed = TimingConfig(warmup=5, warmup_seconds=0, timed_seconds=a.seconds)
    cpu = torch.device('cpu')
    empty = measure(lambda: None, cpu, 1, TimingConfig(warmup=100, warmup_seconds=0, timed_seconds=1.0))
    per_iter = empty.seconds / empty.iterations
    with torch.inference_mode():
        t = time.perf_counter(); [model(x) for _ in range(3)]; model_iter = (time.perf_counter() - t) / 3
    print(f"harness cost: {per_iter * 1e6:.3f} us per iteration (empty step, {empty.iterations} iterations); "
          f"{a.model} iteration {model_iter * 1e3:.1f} ms -> {100 * per_iter / model_iter:.5f}% of it")

    def step():
        with torch.inference_mode(): return model(x)
    ib, ih = [], []
    for i in range(a.rounds):
        ib.append(bare_loop(model, x, a.seconds))
        tm = measure(step, cpu, a.batch, TimingConfig(warmup=5, warmup_seconds=0, timed_seconds=a.seconds))
        ih.append(tm.summary()['throughput_mean'])
        print(f"in-process round {i + 1}: bare {ib[-1]:8.2f} img/s   measure() {ih[-1]:8.2f} img/s   ratio {ih[-1] / ib[-1]:.4f}", flush=True)
    r_in = [h / b for h, b in zip(ih, ib)]
    print(f"in-process ratio measure()/bare: median {statistics.median(r_in):.4f}, min {min(r_in):.4f}, max {max(r_in):.4f}\n")

    bare, harness = [], []
    for i in range(a.rounds):
        bare.append(bare_loop(model, x, a.seconds))
        r = run_isolated(spec, fixed); assert r.status == 'ok', r.error
        harness.append(r.throughput_mean)
        print(f"isolated round {i + 1}: bare {bare[-1]:8.2f} img/s   tbench {harness[-1]:8.2f} img/s   ratio {harness[-1] / bare[-1]:.4f}", flush=True)
    ratios = [h / b for h, b in zip(harness, bare)]
    print(f"\n{a.model} bs={a.batch} {a.size}px threads={a.threads}, {a.rounds} interleaved rounds of {a.seconds}s")
    print(f"bare loop   median {statistics.median(bare):.2f} img/s")
    print(f"tbench      median {statistics.median(harness):.2f} img/s")
    print(f"ratio tbench (child process)/bare: median {statistics.median(ratios):.4f}, min {min(ratios):.4f}, max {max(ratios):.4f}")
    adaptive = TimingConfig(warmup=5, warmup_seconds=0, min_seconds=5, max_seconds=60, target_ci=0.01)
    r = run_isolated(spec, adaptive)
    half = (r.throughput_ci_high - r.throughput_ci_low) / 2
    print(f"\nadaptive stop (target CI 1%): {r.throughput_mean:.2f} ± {half:.2f} img/s "
          f"({100 * half / r.throughput_mean:.2f}%), timed phase {r.seconds_measured:.1f}s over {r.iterations} iterations, "
          f"whole configuration {r.wall_seconds:.1f}s")

if __name__ == '__main__': main()
