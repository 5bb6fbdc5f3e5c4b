"""The hostile-input harness: every flag of every command, fed the values that broke earlier surfaces, is refused in one
line (exit 2, under 200 characters, no traceback), or starts a run that leaves the files already there untouched.

The flags are read from the parsers `tbench` builds (`cli.COMMANDS`, made from the options classes and the field table):
a new flag joins the harness with no edit here. A value valid enough to start a measurement is stopped where the
measurement would begin (`STOPS`): only the refusals are this harness's business. The parsers a file or a person feeds
(runtime-setting words, compare's configuration words, submission manifests) get property tests with `hypothesis`."""
import argparse, functools, json, os, signal, subprocess
from pathlib import Path
import pytest
from hypothesis import given, settings, HealthCheck, strategies as st
from throughput_bench import cli as C
from throughput_bench.core import BenchError

# the families of values that broke the newest surface in four fault probes
LONG = 'x' * 100_000
TEXTS = {'empty': '', 'blank': '   ', 'tab': '\t', 'superscript two': '²', 'Arabic-Indic three': '٣',
         'fullwidth eight': '８', 'Cyrillic confusable': 'сpu', 'nan': 'nan', 'inf': 'inf', 'minus inf': '-inf',
         'negative': '-1', 'huge': '1e308', 'huge whole': '9' * 400, '100,000 characters': LONG,
         'control characters': 'a\x1b]0;title\x07b', 'line end': 'a\nb'}
PATHS = ('a directory', 'a FIFO', 'a symlink loop', 'an unreadable file', 'a file of the wrong kind')

# what each command is given besides the flag under test (a later flag wins, so the hostile value replaces its own)
BASE = {'infer': ['--models', 'resnet18', '--device', 'cpu', '--no-progress', '--wandb', 'disabled', '--wait-idle', '0'],
        'train': ['--models', 'resnet18', '--device', 'cpu', '--no-progress', '--wandb', 'disabled', '--wait-idle', '0'],
        'serve': ['--model', 'resnet18', '--device', 'cpu'],
        'latency': ['--url', 'http://127.0.0.1:9/v1/infer', '--wandb', 'disabled', '--no-progress'],
        'map': ['--synthetic', '--scene-size', '256', '--model', 'resnet18', '--device', 'cpu', '--no-progress'],
        'compare': ['resnet18', 'threads=1', 'threads=2', '--device', 'cpu'],
        'tune': ['resnet18', '--device', 'cpu', '--no-progress'],
        'sync': ['nowhere'], 'repair': ['results/keep.csv']}
# the commands that read results or a machine rather than measure: their flags are few and their own tests' (drawing
# charts or asking W&B per value costs seconds each, past the harness's two minutes)
SKIP = {'hw': 'measures the machine', 'sync': 'asks W&B', 'models': 'builds every model', 'report': 'draws charts',
        'history': 'draws charts', 'globe': 'writes a site', 'leaderboard': 'writes a page',
        'submit': 'every failing rule is a line of its own (exit 1)', 'collect': 'no value flag but a folder',
        'repair': 'no value flag'}
NUMERIC = {'empty', 'blank', 'superscript two', 'Arabic-Indic three', 'fullwidth eight', 'nan', 'inf', 'minus inf',
           'negative', 'huge', 'huge whole', '100,000 characters', 'control characters'}
CHOICE = {'empty', 'blank', 'tab', 'Cyrillic confusable', '100,000 characters', 'control characters', 'line end'}

class WouldRun(BaseException):
    "Raised where a measurement would start: the values got past every check."

def stop(*a, **k): raise WouldRun()

# where each command's measurement starts, after its checks
STOPS = [('throughput_bench.scale.launch', 'idle_check'), ('throughput_bench.scale.sweep', 'hardware_record'), ('throughput_bench.scale.launch', 'slurm_sweep'),
         ('throughput_bench.serve.serving', 'make_server'), ('throughput_bench.serve.loadgen', 'server_info'),
         ('throughput_bench.studies.mapping', 'apply_allocator'), ('throughput_bench.studies.compare', 'run_rounds'),
         ('throughput_bench.studies.tune', 'search'), ('throughput_bench.cli', 'start_with_allocator')]

NUMBERS = (C.whole_number, C.number, C.positive_int, C.positive_float, C.nonneg_float)

def value_flags(cmd:str)->list:
    """`(flag, kind)` for each long flag of `cmd` that takes a value, once (its first spelling), from the parser
    `tbench` builds: `number`, `choice` or `text` (a path, a name: every family, the paths included)."""
    p = C.main_parser([cmd])._subparsers._group_actions[0].choices[cmd]
    out = []
    for a in p._actions:
        if not a.option_strings or a.nargs == 0 or a.help == argparse.SUPPRESS: continue
        out.append((a.option_strings[0], 'number' if a.type in NUMBERS else 'choice' if a.choices else 'text'))
    return out

@pytest.fixture(scope='module')
def place(tmp_path_factory):
    "A folder with a results file, and a path of each hostile kind."
    d = tmp_path_factory.mktemp('hostile')
    (d / 'results').mkdir()
    (d / 'results' / 'keep.csv').write_text('model_name,throughput_mean,status\nresnet18,100.0,ok\n')
    (d / 'a_dir').mkdir()
    os.mkfifo(d / 'fifo')
    (d / 'loop').symlink_to(d / 'loop')
    (d / 'secret.safetensors').write_bytes(b'\0' * 64); os.chmod(d / 'secret.safetensors', 0)
    (d / 'wrong.npy').write_text('model_name,status\nx,ok\n')  # a CSV named as an array
    return d

def path_value(d:Path, kind:str)->str:
    return str(d / {'a directory': 'a_dir', 'a FIFO': 'fifo', 'a symlink loop': 'loop',
                    'an unreadable file': 'secret.safetensors', 'a file of the wrong kind': 'wrong.npy'}[kind])

def snapshot(d:Path)->dict:
    return {p: p.read_bytes() for p in d.rglob('*') if p.is_file() and not p.is_symlink() and p.suffix == '.csv'}

def cases():
    "Each command's flags; `train`'s only where `infer` has no flag of that name (both go through `launch.check`)."
    infer = set(value_flags('infer'))
    for cmd, *_ in C.COMMANDS:
        if cmd in SKIP: continue
        for flag, kind in value_flags(cmd):
            if cmd == 'train' and (flag, kind) in infer: continue
            yield pytest.param(cmd, flag, kind, id=f"{cmd} {flag}")

@functools.lru_cache(maxsize=None)
def parser(cmd:str):
    "`tbench`'s parser with `cmd`'s flags, built once (building it is most of a refused call's time)."
    return C.main_parser([cmd])

def tbench(cmd:str, *args, capsys):
    "`tbench cmd args` in this process, as `tbench()` runs it, on a parser built once: `(exit code, stdout, stderr)`."
    argv = [cmd, *map(str, args)]
    try: a = parser(cmd).parse_args(argv); C._run(lambda: a.fn(a), f"tbench {cmd}"); code = 0
    except SystemExit as e: code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    out = capsys.readouterr()
    return subprocess.CompletedProcess(argv, code, out.out, out.err)

def judge(r, what:str):
    "Refused in one line: exit 2, one stderr line under 200 characters, no traceback."
    err = r.stderr.rstrip('\n')
    assert 'Traceback' not in r.stdout + r.stderr, f"{what}: a traceback\n{r.stderr[-2000:]}"
    assert r.returncode == 2, f"{what}: exit {r.returncode}, not 2: {err[-300:]!r}"
    assert len(err.splitlines()) == 1 and len(err) < 200, f"{what}: not one line under 200: {err[:400]!r}"

@pytest.mark.timeout(120)
@pytest.mark.parametrize('cmd,flag,kind', list(cases()))
def test_every_flag_refuses_hostile_values_in_one_line(cmd, flag, kind, capsys, place, monkeypatch):
    import importlib
    for mod, name in STOPS: monkeypatch.setattr(importlib.import_module(mod), name, stop)
    monkeypatch.setattr(C, 'check_floors', lambda: None)  # once a process, tested on its own: 0.3 s a call
    monkeypatch.chdir(place); old = signal.getsignal(signal.SIGTERM)
    monkeypatch.setattr(signal, 'signal', lambda *a: old)  # `_run` leaves pytest's SIGTERM handling as it is
    before = snapshot(place)
    values = dict(TEXTS) | {k: path_value(place, k) for k in PATHS}
    keep = {'number': NUMERIC, 'choice': CHOICE}.get(kind)
    values = {k: v for k, v in values.items() if keep is None or k in keep}
    for family, v in values.items():
        what = f"tbench {cmd} {flag}=<{family}>"
        try: r = tbench(cmd, *BASE.get(cmd, []), f"{flag}={v}", capsys=capsys)
        except WouldRun: r = None
        if r is None or r.returncode == 0: pass  # a value valid enough to run: only the files are checked
        else: judge(r, what)
        assert snapshot(place) == before, f"{what}: changed a results file"

# ---- the parsers a file or a person feeds, property-tested (a small example budget: the harness stays within two
# minutes of CI) ----
FEW = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
# words built from the pieces that broke: keys and values of the runtimes, Unicode digits, confusables, controls
PIECES = st.sampled_from(['streams', 'hint', 'requests', 'mode', 'inter_threads', 'int8', 'openvino.', 'onnxruntime.',
                          'pytorch.', 'backend', 'threads', 'precision', 'batch_size', 'channels_last', '=', '==', '2',
                          '0', '-1', '²', '٣', '８', 'LATENCY', 'parallel', 'openvino', 'сpu', '\x1b[2J', '\n', ' ',
                          'x' * 300])
WORDS = st.one_of(st.lists(PIECES, max_size=12).map(''.join), st.text(max_size=60))

def said_in_one_line(e:BenchError):
    text = str(e)
    assert '\n' not in text and len(text) < 200 and '\x1b' not in text, text[:400]

@FEW
@given(text=WORDS)
def test_runtime_words_parse_back_or_are_refused_in_one_line(text):
    "A runtime's words are its config, said back the same (`words` parses to the same config), or one line."
    from throughput_bench.backends.base import get_backend
    for b in ('openvino', 'onnxruntime'):
        be = get_backend(b)
        try: c = be.parse_options(text)
        except BenchError as e: said_in_one_line(e); continue
        assert be.parse_options(c.words()) == c

@FEW
@given(text=WORDS)
def test_backend_options_go_to_their_runtimes_or_are_refused_in_one_line(text):
    from throughput_bench.scale.launch import backend_words
    from throughput_bench.backends.base import get_backend
    try: out = backend_words(text, ['openvino', 'onnxruntime'])
    except BenchError as e: said_in_one_line(e); return
    for b, words in out.items(): get_backend(b).parse_options(words)  # each runtime's share is its own words

@FEW
@given(text=WORDS)
def test_compare_configurations_parse_or_are_refused_in_one_line(text):
    from throughput_bench.studies.compare import parse_config
    try: d = parse_config(text)
    except BenchError as e: said_in_one_line(e); return
    assert all(isinstance(v, int) and v >= 1 for k, v in d.items() if k in ('threads', 'batch_size'))

JSON = st.recursive(st.none() | st.booleans() | st.floats() | st.integers() | st.text(max_size=30),
                    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=4),
                    max_leaves=20)

@FEW
@given(m=st.one_of(JSON, st.fixed_dictionaries({'files': st.dictionaries(st.text(max_size=20), JSON, max_size=3),
                                                'allow_contended': JSON})),
       raw=st.one_of(st.none(), st.binary(max_size=200)))
def test_a_submission_manifest_of_any_shape_is_problems_in_lines(m, raw, tmp_path_factory):
    "`tbench submit --check` on a folder whose manifest is any JSON (or any bytes): its problems, each one line."
    from throughput_bench.analyse.submit import check_folder
    d = tmp_path_factory.mktemp('sub') / 'cpu_x'
    d.mkdir()
    (d / 'manifest.json').write_bytes(raw if raw is not None else json.dumps(m).encode())
    lines = check_folder(d)
    assert lines and all('\n' not in l and '\x1b' not in l for l in lines), lines

CGROUP_TEXT = st.one_of(st.sampled_from(['max', '0', '-1', '1073741824', str(2**64), '1e9', '', ' ', 'nan', '²']),
                        st.text(max_size=40), st.binary(max_size=40).map(lambda b: b.decode('latin-1')))

@FEW
@given(v2=st.booleans(), line=st.one_of(st.sampled_from(['0::/g', '4:memory:/g', '4:cpu,memory:/g', '', ':::', '0::']),
                                        st.text(max_size=30)),
       cap=CGROUP_TEXT, used=CGROUP_TEXT, stat=st.one_of(st.none(), CGROUP_TEXT, st.just('inactive_file 5\nanon 1')))
def test_a_memory_cgroup_of_any_content_gives_a_budget_within_what_the_machine_has(v2, line, cap, used, stat,
                                                                                    tmp_path_factory):
    "The default memory budget reads the process's cgroup; whatever its files say, the figure stays in [0, available]."
    import psutil
    from throughput_bench.machine.host import free_memory_mb
    root = tmp_path_factory.mktemp('cg')
    d = root / 'g' if v2 else root / 'memory' / 'g'
    d.mkdir(parents=True)
    names = ('memory.max', 'memory.current') if v2 else ('memory.limit_in_bytes', 'memory.usage_in_bytes')
    for n, text in zip(names, (cap, used)): (d / n).write_text(text, errors='surrogateescape')
    if stat is not None: (d / 'memory.stat').write_text(stat, errors='surrogateescape')
    (root / 'cgroup').write_text(line, errors='surrogateescape')
    mb = free_memory_mb(str(root), str(root / 'cgroup'))
    assert 0 <= mb <= psutil.virtual_memory().available / 2**20 * 1.01, (mb, cap, used, stat)
