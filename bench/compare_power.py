"""How often does `tbench compare` cry wolf, and how often does it find a real 10% difference? Measured on this machine.

- 20 A/A comparisons: the same configuration as A and as B (resnet18, 64 px, batch 1, one thread). Each is a fresh study
  (its own results folder), 3 to 6 rounds until the ratio's 95% CI is within ±3%. A "significant" verdict is a false alarm;
  at alpha = 0.05 the test should raise at most about 1 in 20.
- 10 comparisons of two configurations that differ by about 10%: 3 against 9 input channels (only the first convolution
  grows: about +12% FLOPs for resnet18 at 64 px). How often is the difference found (significant, in the right direction)?
  (64 against 68 px, the first choice, differed by 27%, not 13%: at these sizes a stride-32 network's feature maps grow a step.)

    python bench/compare_power.py                 # 20 A/A and 10 A/B
    python bench/compare_power.py --aa 5 --ab 3   # a quick look
"""
import argparse, sys, tempfile, time
import numpy as np

def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--aa', type=int, default=20); ap.add_argument('--ab', type=int, default=10)
    ap.add_argument('--model', default='resnet18'); ap.add_argument('--seconds', type=float, default=0.5)
    ap.add_argument('--pair', nargs=2, default=['input_size=64 input_channels=3', 'input_size=64 input_channels=9'], help="the A/B pair, in words")
    a = ap.parse_args()
    from throughput_bench.studies.compare import compare
    kw = dict(device='cpu', threads=1, timed_seconds=a.seconds, warmup_seconds=0.2, min_rounds=3, max_rounds=6, target_ci=0.03, wait_idle=0, quiet=True)
    out = {'A/A': [], 'A/B': []}
    t0 = time.monotonic()
    for kind, n, configs in (('A/A', a.aa, ['input_size=64', 'input_size=64']), ('A/B', a.ab, a.pair)):
        for i in range(n):
            with tempfile.TemporaryDirectory() as d:
                t = compare(a.model, configs, results_dir=d, **kw).iloc[0]
            out[kind].append(t)
            print(f"{kind} {i + 1}/{n}: {t.ratio:.3f} [{t.ratio_low:.3f}, {t.ratio_high:.3f}] p={t.p_value:.3f} {t.verdict}, {t.rounds} rounds "
                  f"({time.monotonic() - t0:.0f} s)", flush=True)
    aa, ab = out['A/A'], out['A/B']
    alarms = sum(t.verdict != 'not significant' for t in aa)
    found = sum(t.verdict == 'slower' for t in ab)  # B does more work: slower
    hw = lambda ts: np.median([(np.log(t.ratio_high) - np.log(t.ratio_low)) / 2 for t in ts])
    print(f"\nA/A: {alarms} false alarm(s) in {len(aa)} (alpha 0.05); median rounds {np.median([t.rounds for t in aa]):.0f}, "
          f"median CI half-width ±{hw(aa):.1%}")
    if ab:
        print(f"A/B ({a.pair[1]} vs {a.pair[0]}: B/A {np.median([t.ratio for t in ab]):.3f} measured, median): found {found} of {len(ab)}; "
              f"median rounds {np.median([t.rounds for t in ab]):.0f}, median CI half-width ±{hw(ab):.1%}")
    print(f"{time.monotonic() - t0:.0f} s in all")

if __name__ == '__main__': main()
