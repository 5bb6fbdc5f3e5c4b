"""How much faster is int8 here, and what does it cost? On every CPU (AMX, VNNI, or AVX2 without any int8 dot-product
unit): each runtime's int8 beside its fp32, and beside the best non-int8 configuration of any runtime, in paired rounds
of fresh processes (`tbench compare`'s: the machine's drift hits every configuration of a round alike), each ratio with
its 95% interval, each int8 row's units (`int8_units`) and its agreement with fp32 eager (the correctness gate's max
relative difference; with --weights/--pretrained and --images, the top-1 agreement and drop). Rounds measured on a busy
host (`machine.contention`) are kept out of the ratios where quiet rounds exist; where none does, the ratios come from
the busy ones and the line says `contended`. PyTorch's int8 is PT2E compiled by Inductor with freezing (oneDNN's int8
kernels); its fp32 rival is eager (--pytorch-compiled adds fp32 compiled with freezing, which compiles again in every
process of every round: minutes a round on a CPU).

    python bench/int8.py                                       # resnet50, convnext_tiny, vit_small_patch16_224; batch 1 and 16
    python bench/int8.py --models resnet50 --batches 16 --budget-minutes 6 --results-dir /tmp/int8
    python bench/int8.py --models resnet50 --pretrained --images imagenette2/val   # with the accuracy check
"""
import argparse, re, sys
from throughput_bench.core import BenchError
from throughput_bench.stats import paired_ratio
from throughput_bench.machine.host import int8_units
from throughput_bench.studies import compare as C
from throughput_bench.scale import launch
from throughput_bench.analyse.store import read_results
from throughput_bench.backends.ov import BACKEND as OV

def configs(backends:list, pytorch_compiled:bool=False)->tuple:
    "`(non-int8, int8)` configurations in words: each runtime's fp32 (and bf16 where this CPU computes it natively)."
    from throughput_bench.backends.base import get_backend
    from throughput_bench.machine.devices import precision_support
    import torch
    bf16 = precision_support('bf16', torch.device('cpu')) is None
    base, int8 = [], []
    for be in backends:
        base.append(f"backend={be}")
        if be == 'pytorch' and pytorch_compiled: base.append("backend=pytorch compile=default")
        if bf16 and 'bf16' in get_backend(be).precisions and (be != 'openvino' or 'BF16' in OV.capabilities()):
            base.append(f"backend={be} precision=bf16")
        int8.append(f"backend={be} quant=int8" + (' compile=default' if be == 'pytorch' else ''))
    return base, int8

def study(model:str, words:list, batch:int, a)->str:
    "Run (or resume) the paired rounds of `words` at `batch`; the study's id (its rows are in the store)."
    o = launch.check(launch.SweepOptions.of(
        models=[model], device='cpu', threads=a.threads, results_dir=a.results_dir, wait_idle=0, quiet=True,
        progress=False, wandb='disabled', repeats=1, timed_seconds=a.timed_seconds, weights=a.weights,
        images=a.images))
    su = launch.setup(o)
    specs = [C.one_spec(o, su.device, C.parse_config(w), batch) for w in words]
    sid = C.study_id('int8', [s.key() for s in specs], a.target_ci, a.min_rounds, a.max_rounds)
    try: C.run_rounds(specs, words, sid, su, a.target_ci, a.min_rounds, a.max_rounds, a.budget_minutes)
    except BenchError as e: print(f"# {model} batch {batch}: {e}", flush=True)  # a refused or failed row: said, kept
    return sid

def rounds(results_dir:str, sid:str, k:int)->tuple:
    "`(per-round rows (index -> row dict) of the complete rounds, how many of them were busy)` of study `sid`."
    df = read_results(results_dir)
    df = df[df.study.eq(sid)]
    by = {}
    for r in df.to_dict('records'):
        m = re.fullmatch(r'round (\d+), (\w+)', str(r['stage']))
        if m: by.setdefault(int(m[1]), {})[ord(m[2]) - 65] = r
    done = [rr for _, rr in sorted(by.items()) if len(rr) == k and all(x['status'] == 'ok' for x in rr.values())]
    busy = [rr for rr in done if any(str(x.get('contended')).lower() == 'true' for x in rr.values())]
    quiet = [rr for rr in done if rr not in busy]
    return (quiet or done), len(busy), len(done)

def ratio_text(rr:list, i:int, j:int)->str:
    "j over i, paired by round, with its 95% interval."
    r = paired_ratio([x[i]['throughput_mean'] for x in rr], [x[j]['throughput_mean'] for x in rr])
    return f"{r.ratio:.2f}x" + (f" [{r.low:.2f}, {r.high:.2f}]" if r.n > 1 else ' [one round]')

def report(model:str, batch:int, words:list, n_base:int, rr:list, busy:int, done:int):
    "One line per configuration: img/s; an int8 one against its runtime's fp32 and against the best non-int8."
    if not rr: print(f"{model:24} {batch:5d} no complete round", flush=True); return
    mean = lambda i: sum(x[i]['throughput_mean'] for x in rr) / len(rr)
    best = max(range(n_base), key=mean)
    state = f"{len(rr)} rounds" + (f", contended: {busy} of {done} busy, ratios from the busy ones" if busy == done and
                                   busy else f" ({busy} busy rounds left out)" if busy else ', quiet')
    for j, w in enumerate(words):
        line = f"{model:24} {batch:5d} {w:44} {mean(j):9.1f}"
        if j >= n_base:
            own = words.index(f"backend={C.parse_config(w)['backend']}")
            last = rr[-1][j]
            line += (f"  x own fp32 {ratio_text(rr, own, j):22} "
                     f"x best non-int8 ({words[best]}) {ratio_text(rr, best, j):22}"
                     f" units={last.get('int8_units') or '?'} max_rel_diff={float(last.get('max_rel_diff')):.3g}")
        elif j == best: line += "  <- best non-int8"
        print(line, flush=True)
    print(f"{'':30} {state}", flush=True)

def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--models', nargs='+', default=['resnet50', 'convnext_tiny', 'vit_small_patch16_224'])
    ap.add_argument('--batches', nargs='+', type=int, default=[1, 16])
    ap.add_argument('--backends', nargs='+', default=['onnxruntime', 'openvino', 'pytorch'])
    ap.add_argument('--pytorch-compiled', action='store_true', help="fp32 compiled with freezing among the rivals")
    ap.add_argument('--weights', help="pretrained, or a weights file (default: random weights)")
    ap.add_argument('--pretrained', dest='weights', action='store_const', const='pretrained')
    ap.add_argument('--images', help="an image folder: calibration, and the accuracy check")
    ap.add_argument('--threads', type=int, help="intra-op threads of every configuration (default: PyTorch's)")
    ap.add_argument('--timed-seconds', type=float, default=3.0, help="each process's timed phase (default 3)")
    ap.add_argument('--min-rounds', type=int, default=3)
    ap.add_argument('--max-rounds', type=int, default=8)
    ap.add_argument('--target-ci', type=float, default=0.05)
    ap.add_argument('--budget-minutes', type=float, default=6.0, help="per model and batch (default 6)")
    ap.add_argument('--results-dir', default='results-int8')
    a = ap.parse_args(argv)
    print(f"# int8 units of this CPU: {int8_units() or 'none known'}; paired rounds of fresh processes, "
          f"{a.timed_seconds:g} s timed each, random weights unless --weights", flush=True)
    base, int8 = configs(a.backends, a.pytorch_compiled)
    words = base + int8
    print(f"{'model':24} {'batch':>5} {'configuration':44} {'img/s':>9}", flush=True)
    for m in a.models:
        for b in a.batches:
            sid = study(m, words, b, a)
            report(m, b, words, len(base), *rounds(a.results_dir, sid, len(words)))

if __name__ == '__main__': main()
