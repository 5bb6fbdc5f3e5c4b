"""An independent check of `tbench infer` on a GPU: the same configurations timed by a plain loop written apart from
the package (timm model, random weights, one batch pre-allocated on the device, 10 warm-up steps, 5 blocks of 20 steps
each timed between two `torch.cuda.synchronize()` calls), then each tbench row beside the loop's median block, as a
ratio. Run by `bench/gpu_check.sh` after `tbench infer` has written `RESULTS`:

    python bench/gpu_hand.py RESULTS_FOLDER

Prints one line per configuration and exits 1 where a ratio is outside 0.9-1.1 (a disagreement to look at)."""
import sys, time, statistics
from pathlib import Path

CONFIGS = [('resnet50', 'fp32'), ('resnet50', 'bf16'), ('vit_base_patch16_224', 'fp32'), ('vit_base_patch16_224', 'bf16')]
BATCH, SIZE, WARMUP, BLOCKS, STEPS = 512, 224, 10, 5, 20

def hand_img_s(model_name:str, precision:str)->float:
    "The median img/s over `BLOCKS` timed blocks of a plain eager loop."
    import torch, timm
    torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = True  # as tbench's fp32 rows (TF32 on)
    dt = torch.bfloat16 if precision == 'bf16' else torch.float32
    m = timm.create_model(model_name, pretrained=False).cuda().eval().to(dt)
    x = torch.randn(BATCH, 3, SIZE, SIZE, device='cuda', dtype=dt)
    with torch.inference_mode():
        for _ in range(WARMUP): m(x)
        torch.cuda.synchronize(); rates = []
        for _ in range(BLOCKS):
            t = time.perf_counter()
            for _ in range(STEPS): m(x)
            torch.cuda.synchronize(); rates.append(BATCH * STEPS / (time.perf_counter() - t))
    del m, x; torch.cuda.empty_cache()
    return statistics.median(rates)

def main(results:str)->int:
    from throughput_bench.analyse.store import read_results
    df = read_results(results)
    bad = 0
    for name, prec in CONFIGS:
        rows = df[(df.model_name == name) & (df.precision == prec) & (df.compile_mode == 'none') & (df.status == 'ok')
                  & (df.batch_size == BATCH)]
        hand = hand_img_s(name, prec)
        if rows.empty: print(f"{name} {prec} bs={BATCH}: hand-driven {hand:,.0f} img/s; no tbench row"); bad += 1; continue
        r = rows.iloc[-1]; ratio = r.throughput_mean / hand
        bad += not 0.9 <= ratio <= 1.1
        print(f"{name} {prec} bs={BATCH}: tbench {r.throughput_mean:,.0f} [{r.throughput_ci_low:,.0f}, "
              f"{r.throughput_ci_high:,.0f}] img/s, hand-driven {hand:,.0f}: tbench / hand {ratio:.3f}")
    return 1 if bad else 0

if __name__ == '__main__': sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else 'results'))
