"The package's shape: what starts without torch."
import argparse, subprocess, sys, json
import pytest

def modules_after(code:str, tmp_path)->set:
    "The modules a fresh interpreter holds after running `code`."
    r = subprocess.run([sys.executable, '-c', code + "\nimport sys, json; print(json.dumps(sorted(sys.modules)))"],
                       capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert r.returncode == 0, r.stderr
    return set(json.loads(r.stdout.strip().splitlines()[-1]))

HELP = """
from throughput_bench.cli import tbench
for sub in ([], ['infer'], ['train'], ['report'], ['globe'], ['latency'], ['serve'], ['models'], ['compare'], ['tune'], ['map']):
    try: tbench(sub + ['--help'])
    except SystemExit: pass
"""

def test_help_imports_no_torch(tmp_path):
    mods = modules_after(HELP, tmp_path)
    assert 'throughput_bench.cli' in mods and 'argparse' in mods
    assert not {'torch', 'timm', 'pandas', 'litserve', 'mlperf_loadgen', 'rasterio'} & mods  # nor an extra

def test_report_and_globe_import_no_torch(tmp_path):
    from throughput_bench.result import BenchResult
    from throughput_bench.analyse.store import ResultStore
    s = ResultStore(tmp_path / 'results', 'cpu_test', 'Test CPU')
    s.append(BenchResult(model_name='resnet18', precision='fp32', gpu_name='Test CPU', batch_size=2, throughput_mean=10.0,
                         input_channels=3, input_size=32, device='cpu', device_type='cpu', throughput_ci_low=9.0, throughput_ci_high=11.0))
    mods = modules_after(f"""
from throughput_bench.cli import tbench
for args in (['report', 'results', '--output', 'rep', '--formats', 'png'], ['globe', 'results', '--output', 'globe']):
    try: tbench(args)
    except SystemExit as e: assert not e.code, e.code
""", tmp_path)
    assert (tmp_path / 'rep' / 'summary.md').is_file() and (tmp_path / 'globe' / 'index.html').is_file()
    assert 'throughput_bench.analyse.charts' in mods and not {'torch', 'timm'} & mods

def test_submit_check_imports_no_torch(tmp_path):
    "`tbench submit --check` reads the datasheet peaks (`machine.peaks`), never torch: hundreds of folders, no model."
    from pathlib import Path
    subs = sorted(str(p) for p in (Path(__file__).parents[1] / 'submissions').iterdir())
    mods = modules_after(f"""
from throughput_bench.cli import tbench
try: tbench(['submit', '--check', *{subs!r}])
except SystemExit as e: assert not e.code, e.code
""", tmp_path)
    assert 'throughput_bench.machine.peaks' in mods and not {'torch', 'timm'} & mods

def test_option_help_is_the_api_docment():
    "A flag's help is written once, as its `api.sweep` parameter's docment: `tbench train --help` and `tbench infer --help` say the same as the API."
    import dataclasses
    from fastcore.docments import docments
    from throughput_bench import api, cli
    d = docments(api.sweep)
    made = {f.name: f.metadata['setting'] for f in dataclasses.fields(api.SweepOptions) if 'setting' in f.metadata}
    part_docs = {part: docments(part) for part, _ in made.values()}
    for parser in (cli.infer_parser(), cli.train_parser()):
        parser.format_help()  # the texts are read when help is shown
        shared = [a for a in parser._actions if a.dest in d and not a.option_strings[0].startswith(('--no-', '-h')) and a.help != argparse.SUPPRESS]  # a --no- flag says what it turns off
        assert len(shared) > 40
        for a in shared:
            # a setting's option that `as_sweep` made from the field table: the comment of the part that declares it
            doc = d[a.dest] or part_docs[made[a.dest][0]][made[a.dest][1]]
            assert a.help == " ".join(doc.split()).replace("%", "%%"), a.dest
    p = cli.train_parser(); p.format_help()
    batch = next(a for a in p._actions if a.dest == 'batch_sizes')
    assert '256 training' in batch.help  # training's default batch on a GPU, which the help once gave as 512

def _package_modules()->dict:
    "Module name (`sweep`, `backends.base`) -> (the number of the notebook it is exported from, its source)."
    import re
    from pathlib import Path
    root = Path(__file__).resolve().parents[1] / 'throughput_bench'
    out = {}
    for f in root.rglob('*.py'):
        src = f.read_text()
        m = re.search(r'File to edit: \S*nbs/(\d+)_(\w+)\.ipynb', src)
        if m: out['.'.join(f.relative_to(root).with_suffix('').parts)] = (int(m.group(1)), m.group(2), src)
    return out

def test_notebooks_are_named_as_their_modules_and_none_imports_a_later_one():
    import ast
    mods = _package_modules()
    assert len(mods) > 25
    for name, (n, stem, _) in mods.items(): assert stem == name.replace('.', '_'), (name, stem)  # 32_scale_sweep.ipynb exports scale.sweep
    later = []
    for name, (n, _, src) in mods.items():
        pkg = name.rsplit('.', 1)[0] if '.' in name else ''
        for node in ast.walk(ast.parse(src)):  # module level and inside functions alike
            if not isinstance(node, ast.ImportFrom): continue
            target = node.module or ''
            if node.level: target = '.'.join(([pkg] if pkg and node.level == 1 else []) + ([target] if target else []))
            elif target.startswith('throughput_bench.'): target = target[len('throughput_bench.'):]
            else: continue
            targets = [target] if target else [a.name for a in node.names]  # `from throughput_bench import api`: the names are modules
            if node.module == 'throughput_bench': targets = [a.name for a in node.names]
            for t in targets:
                if t in mods and t != name and mods[t][0] >= n: later.append(f"{name} ({n}) imports {t} ({mods[t][0]})")
    assert not later, later  # `>=`: with each number used once, two notebooks of one number cannot hide an arrow

def test_each_notebook_number_is_used_once():
    "Notebooks are numbered in layer order, one number each (06_energy and 06_timing once shared one)."
    from pathlib import Path
    numbers = [p.name[:2] for p in (Path(__file__).resolve().parents[1] / 'nbs').glob('[0-9][0-9]_*.ipynb')]
    assert len(numbers) > 30 and len(numbers) == len(set(numbers)), sorted(n for n in numbers if numbers.count(n) > 1)

API_ONLY = {'mode', 'quiet', 'run_id', 'conventions', 'wandb_run_name'}  # options of the API that no flag sets

def test_options_are_written_once():
    "`SweepOptions` is the one list of a sweep's options: `api.sweep`'s parameters (names, defaults, docs) and the flags of `tbench infer` and `tbench train` are made from it."
    import dataclasses, inspect
    from fastcore.docments import docments
    from throughput_bench import api, cli
    fields = {f.name: f for f in dataclasses.fields(api.SweepOptions)}
    params = inspect.signature(api.sweep).parameters
    assert set(params) == set(fields) and [n for n in params if not fields[n].kw_only] == [
        n for n, f in fields.items() if not f.kw_only]  # the settings by name only, after the sweep's own
    ds, dO = docments(api.sweep), docments(api.SweepOptions)  # each read parses the module's source: once
    for name, f in fields.items():
        assert params[name].default == f.default, name
        assert ds[name] == dO[name], name
        assert dO[name] or cli.option_help(api.SweepOptions, name), name  # a setting's: its part's comment
    grouped = [n for names in api.SweepOptions.GROUPS.values() for n in names.split()]
    assert len(grouped) == len(set(grouped)) and set(grouped) | API_ONLY == set(fields)
    assert set(api.SweepOptions.NUMBERS) <= set(fields) and set(api.SweepOptions.CHOICES) <= set(fields)
    dests = set()
    for parser in (cli.infer_parser(), cli.train_parser()):
        dests |= {a.dest for a in parser._actions if a.dest not in ('help', argparse.SUPPRESS)}
    assert dests == set(grouped), dests ^ set(grouped)

def test_options_are_checked_into_a_copy_never_changed():
    "No step changes the options another reads: they are frozen, and `check` returns a checked copy."
    import dataclasses
    from throughput_bench import api
    from throughput_bench.core import BenchError
    o = api.SweepOptions(models='resnet18', device='cpu')  # made directly: `of` reads one word as a list of one
    with pytest.raises(dataclasses.FrozenInstanceError): o.models = ['x']
    c = api.check(o)
    assert o.models == 'resnet18' and o.backends is None and c.models == ['resnet18'] and c.backends == ['pytorch']
    with pytest.raises(BenchError, match="did you mean batch_sizes"): api.SweepOptions.of(batch_size=[4])

@pytest.mark.parametrize('argv,field,value', [
    (['--no-progress'], 'progress', False), (['--no-isolate'], 'isolate', False), (['--no-tf32'], 'tf32', False),
    (['--output-dir', 'x'], 'results_dir', 'x'), (['--batch_sizes', '2', '4'], 'batch_sizes', [2, 4]),
    (['--wandb-tags'], 'wandb_tags', []), (['--row-ci', '0.05'], 'row_ci', 0.05)])
def test_every_flag_lands_on_its_option(argv, field, value):
    from throughput_bench import cli
    assert getattr(cli.infer_parser().parse_args(argv), field) == value

@pytest.mark.parametrize('cls,fn,parser', [('options.ServeOptions', 'api.serve', 'serve_parser'),
                                           ('options.LatencyOptions', 'api.latency', 'latency_parser'),
                                           ('studies.mapping.MapOptions', 'studies.mapping.map_raster', 'map_parser'),
                                           ('studies.tune.TuneOptions', 'studies.tune.tune', 'tune_parser'),
                                           ('studies.compare.CompareOptions', 'studies.compare.compare', 'compare_parser')])
def test_every_command_takes_its_options_from_one_object(cls, fn, parser):
    "`tbench serve`, `latency`, `map`, `tune` and `compare` as `infer`: the function's parameters and docs are its options class's fields, and so are its flags."
    import dataclasses, inspect, importlib
    from fastcore.docments import docments
    from throughput_bench import cli
    get = lambda s: getattr(importlib.import_module('throughput_bench.' + s.rsplit('.', 1)[0]), s.rsplit('.', 1)[1])
    O, f = get(cls), get(fn)
    fields = [x.name for x in dataclasses.fields(O)]
    params = inspect.signature(f).parameters
    assert sorted(params) == sorted(fields)
    # its own options by position, in order; those of the parts it embeds (`Runtime`, `Process`, `Input`) by name
    assert [k for k, p in params.items() if p.kind != p.KEYWORD_ONLY] == [x.name for x in dataclasses.fields(O) if not x.kw_only]
    df, dO = docments(f), docments(O)  # each read parses the module's source: once, not once a field
    for name in fields: assert df[name] == dO[name] and dO[name], name
    if parser:
        grouped = {n for names in O.GROUPS.values() for n in names.split()}
        dests = {a.dest for a in getattr(cli, parser)()._actions if a.dest not in ('help', argparse.SUPPRESS)}
        assert dests == grouped and grouped <= set(fields), dests ^ grouped

def _functions():
    "(module.function, lines, parameters) of every function of the package."
    import ast
    for name, (_, _, src) in _package_modules().items():
        for node in ast.walk(ast.parse(src)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                a = node.args
                yield f"{name}.{node.name}", node.end_lineno - node.lineno + 1, len(a.posonlyargs + a.args + a.kwonlyargs)

PUBLIC = {'studies.compare.compare', 'studies.tune.tune'}  # public functions whose parameters are their documented options

def test_functions_are_small():
    "No function of the package over 60 lines or 15 parameters, but public functions whose parameters are their options."
    big = [f"{f}: {n} lines, {k} parameters" for f, n, k in _functions() if (n > 61 or k > 15) and f not in PUBLIC]
    assert not big, big

def test_lines_are_at_most_120_characters():
    "Every line of the package is at most 120 characters, but those nbdev writes (the module docstring, `__all__`)."
    long = []
    for name, (_, _, src) in _package_modules().items():
        lines = src.split('\n')
        start = next(i for i, l in enumerate(lines) if l.startswith('# %%'))  # the docstring and the export header above
        in_all = False
        for i, l in enumerate(lines[start:], start + 1):
            in_all = l.startswith('__all__') or (in_all and l.startswith(' '))
            if len(l) > 120 and not in_all: long.append(f"{name}:{i}: {len(l)}")
    assert not long, long

PLAN_CPU = """
import json, sys
from throughput_bench.scale import launch as L
from throughput_bench.scale.sweep import plan, hardware_record, run_sweep
from throughput_bench.measure.flops import annotate_mfu
o = L.check(L.SweepOptions.of(models=['resnet18'], device='cpu', input_size=32, precisions=['fp32', 'amp'],
                              results_dir='results', wandb='disabled', progress=False))
su = L.setup(o)
specs = L.configurations(o, su.device)
p = plan(specs, su.store)
p.skipped += [(specs[0], 'a skipped row, written by this process')]
p.todo = []  # everything up to the first worker process: its rows would come from torch's side
hw = hardware_record(su.store, su.device, log=print)
run_sweep(p, su.store, su.timing, post=lambda r: annotate_mfu(r, hw), repeats=su.repeats, progress=False)
row = su.store.rows()[-1]
from throughput_bench.api import hw as machine  # `tbench hw --device cpu`: the same record
m = machine('cpu'); assert m == {k: hw[k] for k in m}, m
print(json.dumps({k: hw[k] for k in ('pytorch_version', 'cuda_version', 'torch_threads', 'torch_interop_threads')}
                 | {'threads': specs[0].threads, 'row': [row['pytorch_version'], row['cuda_version'], row['status']]}))
"""

def test_cpu_sweep_plans_without_torch(tmp_path, monkeypatch):
    """A CPU `tbench infer`'s own process checks, plans, opens its store, writes the hardware record and a skipped row
    without importing torch (its worker processes do), recording what torch itself says: its version and CUDA (read from
    its version.py), its thread counts (asked of torch once, kept in the cache), the machine's ceilings (cached);
    `tbench hw --device cpu` makes the same record."""
    import datetime, torch
    from throughput_bench.machine.devices import _threads_key
    from throughput_bench.machine.hardware import Host
    from throughput_bench.measure.flops import keep_ceilings, CEILINGS_VERSION
    monkeypatch.setenv('TB_CACHE_DIR', str(tmp_path / 'cache'))
    threads = (1, 1)  # what torch said in a process like the command's, the first time (any this machine allows)
    (tmp_path / 'cache').mkdir()
    (tmp_path / 'cache' / 'torch_threads.json').write_text(json.dumps({_threads_key(): list(threads)}))
    keep_ceilings(Host(), dict(gemm_tflops={'fp32': 0.1}, gemm_best={}, copy_gbps=1.0, threads=threads[0],
                               version=CEILINGS_VERSION, measured_at=datetime.datetime.now().isoformat()))
    r = subprocess.run([sys.executable, '-c', PLAN_CPU + "\nprint(json.dumps(sorted(sys.modules)))"],
                       capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert r.returncode == 0, r.stderr
    *_, said, mods = r.stdout.strip().splitlines()
    assert 'throughput_bench.scale.sweep' in json.loads(mods)
    assert not {'torch', 'timm', 'torchvision'} & set(json.loads(mods)), r.stdout
    v = str(torch.__version__), torch.version.cuda or ''
    assert json.loads(said) == dict(pytorch_version=v[0], cuda_version=v[1], torch_threads=threads[0],
                                    torch_interop_threads=threads[1], threads=threads[0], row=[*v, 'skipped'])

def test_torch_threads_asked_once_then_kept(tmp_path, monkeypatch):
    """The first time, `torch_threads` asks torch (imported then) and keeps its answer; a process like it reads that
    answer and imports no torch."""
    monkeypatch.setenv('TB_CACHE_DIR', str(tmp_path / 'cache'))
    def said(code):
        ask = "import sys, json\nfrom throughput_bench.machine.devices import torch_threads as th\nt = list(th())\n"
        r = subprocess.run([sys.executable, '-c', ask + code], capture_output=True, text=True, cwd=tmp_path,
                           timeout=120)
        assert r.returncode == 0, r.stderr
        return json.loads(r.stdout.strip().splitlines()[-1])
    first = said("import torch; print(json.dumps([t, [torch.get_num_threads(), torch.get_num_interop_threads()]]))")
    again = said("print(json.dumps([t, 'torch' in sys.modules]))")
    assert first[0] == first[1] and again == [first[0], False], (first, again)

def test_a_docs_chain_ends_with_no_link_and_leaves_the_parts_alone():
    "fastcore 1.8's `docments` follows `__delwrap__` while `hasattr` finds one: a link of None crashed `tbench serve --help` there. The tree's parts carry no chain of their own."
    from throughput_bench import api
    from throughput_bench.core import PARTS
    from throughput_bench.options import ServeOptions, LatencyOptions
    from throughput_bench.studies.mapping import MapOptions
    from throughput_bench.studies.compare import CompareOptions
    from throughput_bench.studies.tune import TuneOptions
    for O in (api.SweepOptions, ServeOptions, LatencyOptions, MapOptions, CompareOptions, TuneOptions, api.serve, api.sweep):
        s, links = O, 0
        while hasattr(s, '__delwrap__'): s, links = s.__delwrap__, links + 1
        assert s is not None and links < 50, O
    assert not any('__delwrap__' in vars(P) for P in PARTS.values())

def test_values_of_refuses_its_arguments_the_old_way_round():
    "`values_of(spec, Runtime)`; the old order (`values_of(Runtime, spec)`) gave the class's defaults, silently."
    from throughput_bench.core import BenchSpec, Runtime, values_of
    spec = BenchSpec('resnet18', precision='bf16')
    assert values_of(spec, Runtime)['precision'] == 'bf16'
    for args in ((Runtime, spec), (spec,)):
        with pytest.raises(TypeError, match='values_of takes a configuration, then its parts'): values_of(*args)
