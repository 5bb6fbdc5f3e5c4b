"""How much faster is int8 here, and what does it cost? Each backend's int8 beside its fp32 and its bf16 (where the CPU
computes bf16 natively), measured by `tbench compare` in paired rounds of fresh processes (the machine's drift hits
every configuration of a round alike), with each ratio's 95% interval and each row's agreement with fp32 eager (the
correctness gate's max relative difference; with --weights/--pretrained and --images, the top-1 agreement and drop).
PyTorch's int8 is PT2E compiled by Inductor; its base is fp32 eager and its other configuration bf16 eager (a compiled
fp32 or bf16 would compile again in every process of every round: minutes a comparison on a CPU).

    python bench/int8.py                                       # resnet50, convnext_tiny, vit_small_patch16_224; batch 1 and 16
    python bench/int8.py --models resnet50 --batches 16 --budget-minutes 2 --results-dir /tmp/int8
    python bench/int8.py --models resnet50 --pretrained --images imagenette2/val   # with the accuracy check
"""
import argparse, sys
from throughput_bench.studies.compare import compare, parse_config
from throughput_bench.analyse.store import read_results
from throughput_bench.machine.devices import quant_support
from throughput_bench.backends.ov import BACKEND as OV

def configs(backend:str)->list:
    "fp32 first (the base of every ratio), then int8, then bf16 where the backend runs it natively here."
    from throughput_bench.backends.base import get_backend
    out = [f"backend={backend}", f"backend={backend} quant=int8" + (' compile=default' if backend == 'pytorch' else '')]
    if 'bf16' in get_backend(backend).precisions and (backend != 'openvino' or 'BF16' in OV.capabilities()):
        out.append(f"backend={backend} precision=bf16")
    return out

def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--models', nargs='+', default=['resnet50', 'convnext_tiny', 'vit_small_patch16_224'])
    ap.add_argument('--batches', nargs='+', type=int, default=[1, 16])
    ap.add_argument('--backends', nargs='+', default=['onnxruntime', 'openvino', 'pytorch'])
    ap.add_argument('--weights', help="pretrained, or a weights file (default: random weights)")
    ap.add_argument('--pretrained', dest='weights', action='store_const', const='pretrained')
    ap.add_argument('--images', help="an image folder: calibration, and the accuracy check")
    ap.add_argument('--budget-minutes', type=float, default=3.0, help="per comparison (default 3)")
    ap.add_argument('--results-dir', default='results-int8')
    a = ap.parse_args(argv)
    if why := quant_support('int8', 'cpu'): sys.exit(f"bench/int8.py: {why}")
    print(f"{'model':24} {'batch':>5} {'backend':12} {'configuration':34} {'img/s':>9} {'x fp32 [95% CI]':20} "
          f"{'verdict':24} {'max rel diff':>10}")
    for m in a.models:
        for b in a.batches:
            for be in a.backends:
                t = compare(m, configs(be), device='cpu', batch_size=b, budget_minutes=a.budget_minutes,
                            results_dir=a.results_dir, wait_idle=0, quiet=True, weights=a.weights, images=a.images)
                rows = read_results(a.results_dir)
                rows = rows[rows.model_name.eq(m) & rows.batch_size.eq(b) & rows.backend.eq(be)]
                for r in t.to_dict('records'):
                    w = parse_config(r['b'])
                    mine = rows[rows.precision.eq(w.get('precision', 'fp32')) & rows.quant.eq(w.get('quant', 'none'))]
                    rel = mine.max_rel_diff.median() if len(mine) else float('nan')
                    check = str(mine.accuracy_check.iloc[-1]) if len(mine) and 'accuracy_check' in mine else ''
                    print(f"{m:24} {b:5d} {be:12} {r['b']:34} {r['b_img_s']:9.1f} "
                          f"{r['ratio']:6.2f} [{r['ratio_low']:.2f}, {r['ratio_high']:.2f}] {r['verdict']:24} {rel:10.3g} "
                          f"{check if check not in ('nan', 'None') else ''}",
                          flush=True)

if __name__ == '__main__': main()
