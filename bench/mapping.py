"""End to end against the model alone: how many km²/s survive the mapping pipeline, which stage bounds it, and how the rate moves
with loader workers and tile overlap. Configurations are measured in interleaved rounds (order rotated each round, a fresh
`map_raster` each time); each figure is a mean over rounds with its 95% CI, and each ratio a paired ratio over the same rounds.

    python bench/mapping.py                      # resnet18 (timm, 224 px) and galileo_tiny (geo encoder, 64 px), 3 rounds
    python bench/mapping.py --rounds 5 --scene-size 2048
"""
import argparse, os, sys, tempfile, time
from pathlib import Path
sys.path.insert(0, str(Path(__file__).parent))
from common import mean_ci, show
from throughput_bench.stats import paired_ratio
from throughput_bench.studies.mapping import map_raster, synthetic_scene, STAGES

p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
p.add_argument('--models', nargs='+', default=['resnet18', 'galileo_tiny'])
p.add_argument('--scene-size', type=int, default=1024)
p.add_argument('--rounds', type=int, default=3)
p.add_argument('--passes', type=int, default=2, help="timed passes per run (after one warm-up pass)")
p.add_argument('--batch-size', type=int, default=16)
a = p.parse_args()

scene = synthetic_scene(a.scene_size, 10)
configs = [(m, w, ov) for m in a.models for (w, ov) in ((0, 0.5), (1, 0.5), (2, 0.5), (2, 0.0))]
runs = {c: [] for c in configs}
t0 = time.time()
with tempfile.TemporaryDirectory() as d:
    for r in range(a.rounds):
        order = configs[r % len(configs):] + configs[:r % len(configs)]
        for m, w, ov in order:
            row = map_raster(scene, model=m, overlap=ov, workers=w, passes=a.passes, batch_size=a.batch_size, model_seconds=2,
                             results_dir=Path(d) / f"r{r}", output_raster=Path(d) / 'out.tif', progress=False, quiet=True)
            if row.status != 'ok': sys.exit(f"{m} workers={w} overlap={ov}: {row.status}: {row.error}")
            runs[(m, w, ov)].append(row)
        print(f"round {r + 1}/{a.rounds} done ({time.time() - t0:.0f} s)", flush=True)

print(f"\nscene: {scene.name} ({a.scene_size} px, 10 bands uint16, 10 m, {runs[configs[0]][0].area_km2:.1f} km² valid); "
      f"{a.rounds} interleaved rounds, {a.passes} timed passes each; means over rounds with 95% CIs\n")
for m in a.models:
    base = runs[(m, 0, 0.5)]
    print(f"== {m} ({base[0].input_size} px tiles, {base[0].tiles} tiles at overlap 0.5)")
    for (mm, w, ov), rows in runs.items():
        if mm != m: continue
        e2e = [r.km2_per_sec for r in rows]; alone = [r.model_km2_per_sec for r in rows]; share = [r.pipeline_share for r in rows]
        per = {s: sum(getattr(r, f"stage_{s}_s") for r in rows) / len(rows) for s in STAGES}
        tot = sum(per.values())
        bounds = sorted({r.bound_stage for r in rows})
        line = f"workers {w}, overlap {ov:g}: end to end {show(*mean_ci(e2e), '.3g', ' km²/s')}; model alone {show(*mean_ci(alone), '.3g')}; " \
               f"share {show(*mean_ci(share), '.2f')}; bound by {'/'.join(bounds)}"
        if (w, ov) != (0, 0.5):
            q = paired_ratio([r.km2_per_sec for r in base], e2e)
            line += f"; vs workers 0 overlap 0.5: {q.ratio:.2f}x [{q.low:.2f}, {q.high:.2f}]"
        print(line)
        print('    stage shares: ' + ', '.join(f"{s} {v / tot:.0%}" for s, v in per.items()) + f"; the model waited {sum(r.input_wait_s for r in rows) / len(rows):.2f} s a pass")
print(f"\n{time.time() - t0:.0f} s in all")
