"""Issue 42: one field table. Each field of a configuration is declared once (`core.FIELDS`, from `BenchSpec`'s `_F`); the
tables that used to name fields are read from it; serve and map take every setting `compare` and `tune` can name."""
import dataclasses
from throughput_bench.core import (FIELDS, FIELD, KEY, KEY_DEFAULTS, WORDS, SHORT_WORDS, BenchSpec, fields_in,
    config_key, config_words)
from throughput_bench.options import ServeOptions

# the resume key's order as stored results and drift records have it (`key` column of <device>_drift.tsv)
STORED_KEY = ('mode', 'model_name', 'precision', 'compile_mode', 'batch_size', 'channels_last', 'input_channels',
              'input_size', 'data_mode', 'threads', 'optimizer', 'timesteps', 'num_classes', 'world_size', 'backend',
              'backend_options', 'study', 'stage', 'map_options', 'allocator')

def test_the_key_keeps_the_order_stored_records_have():
    "Fields added later (issue 43's `quant` and `weights`) go at the end: the stored order of the others is kept."
    from throughput_bench.core import KEY_ORDER
    assert KEY == STORED_KEY + ('quant', 'weights') == BenchSpec.KEY
    # every field has its written place: one added since the last is written into KEY_ORDER where it lands, so that a
    # field added after it cannot move it
    assert sorted(KEY_ORDER) == sorted(FIELD)

def test_an_old_row_without_the_later_fields_resumes_as_its_spec():
    "A row written before `allocator`, `backend` or `timesteps` existed reads as their defaults: the same key."
    s = BenchSpec('resnet18', batch_size=8, input_channels=3, input_size=64, threads=2)
    old = {k: str(v) for k, v in s.flat().items() if k in KEY and not FIELD[k].later}
    assert config_key(old) == s.key()
    assert set(KEY_DEFAULTS) == {f.name for f in FIELDS if f.later}

def test_every_field_is_said_somewhere_and_words_cover_the_key():
    assert {w for w in WORDS if w != 'input'} | {'input_channels', 'input_size'} == set(KEY)
    assert not {'mode', 'study', 'stage'} & set(SHORT_WORDS)
    # a field's form says it; its default is silent unless it is always said
    assert config_words({'model_name': 'm', 'allocator': 'tcmalloc', 'precision': 'fp32'}) == 'm fp32 tcmalloc'
    assert config_words({'model_name': 'm', 'allocator': 'glibc', 'precision': 'fp32'}) == 'm fp32'

def test_the_tables_that_named_fields_are_read_from_the_field_table():
    from throughput_bench import cli; from throughput_bench.analyse import charts; from throughput_bench.scale import sweep; from throughput_bench.analyse import submit; from throughput_bench.studies import compare
    assert charts.SAID == fields_in('bar') and charts.PLACED == fields_in('placed') and charts.COMPARED == fields_in('compared')
    assert charts.VARIED == fields_in('varied') and sweep.SAID_IN_SUMMARY == fields_in('summary')
    assert submit.IDENTITY == fields_in('board') + ('device_type',)
    assert compare._INT == {f.name for f in FIELDS if f.integer}
    assert {w for w, n in compare._WORDS.items() if w != n} == {f.word for f in FIELDS if f.word and f.word != f.name}
    # every swept flag has its one-value spelling
    assert {cli.PLURALS['--' + f.option[:-1].replace('_', '-')] for f in FIELDS if f.swept} == {
        '--' + f.option.replace('_', '-') for f in FIELDS if f.swept}

def test_serve_and_map_take_every_setting_compare_and_tune_can_name():
    "Before, `tbench serve` could not serve `hint=...` or `allocator=tcmalloc` (ServeOptions had neither)."
    from throughput_bench.studies.mapping import MapOptions
    named = {f.name for f in FIELDS if f.word} | {'backend_options'}
    serve = {f.name for f in dataclasses.fields(ServeOptions)} | {'batch_size'}   # max_batch_size: the serving batch
    assert named <= serve, named - serve
    mp = {f.name for f in dataclasses.fields(MapOptions)} | {'input_size', 'input_channels', 'timesteps'}  # size, bands
    assert named <= mp, named - mp

def test_a_served_configuration_names_its_runtime_words_and_allocator_in_its_metadata():
    from throughput_bench.serve.serving import serve_spec
    from throughput_bench.core import BenchError
    import pytest
    spec = serve_spec(ServeOptions('resnet18', device='cpu', input_size=32, allocator='glibc-retain'))
    assert spec.allocator == 'glibc-retain'
    with pytest.raises(BenchError, match='hint'):  # the runtime's own words are checked by the runtime
        serve_spec(ServeOptions('resnet18', device='cpu', backend_options='hint=FAST'))

def test_the_command_of_a_one_process_ddp_row_asks_for_ddp():
    assert '--nproc 1' in BenchSpec('resnet18', mode='training', world_size=1).command('cpu')
    assert '--nproc' not in BenchSpec('resnet18', mode='training').command('cpu')

def test_the_sweep_has_an_option_for_every_field_with_a_flag_and_lists_the_swept_ones():
    "`SweepOptions` is lists over the configuration: each field's flag is one of its options, a list where it sweeps."
    from throughput_bench.scale.launch import SweepOptions
    opts = {f.name: f for f in dataclasses.fields(SweepOptions)}
    for f in FIELDS:
        if not f.option: continue
        assert f.option in opts, f.name
        listed = 'list' in str(opts[f.option].type) or 'tuple' in str(opts[f.option].type)
        assert listed == f.swept, (f.name, opts[f.option].type)
    assert all(f.option for f in FIELDS if f.setting)  # every setting is an option of the sweep

def test_a_configuration_is_a_tree_of_its_parts():
    "`spec.runtime` is the part itself (issue 53: there was none); each field has one name, read through the spec too."
    from throughput_bench.core import Runtime, Process, Input, Workload, Model, Role, PARTS, spec_fields
    spec = BenchSpec('resnet18', precision='bf16', backend='openvino', backend_options='hint=LATENCY', threads=2)
    parts = spec.parts()
    assert list(parts) == list(PARTS) == ['model', 'runtime', 'process', 'workload', 'input', 'role']
    assert parts['runtime'] == {'precision': 'bf16', 'quant': 'none', 'backend': 'openvino',
                                'backend_options': 'hint=LATENCY', 'compile_mode': 'none', 'channels_last': False,
                                'weights': ''}
    assert sum(len(v) for v in parts.values()) == len(KEY)
    assert [type(getattr(spec, p)) for p in PARTS] == [Model, Runtime, Process, Workload, Input, Role]
    assert spec.process == Process(threads=2) and set(parts['process']) == {'threads', 'allocator'}  # serve's, map's
    assert 'world_size' in parts['workload']  # DDP is what a training run is made to do: serve and map take no --nproc
    # one field, two ways to it, and each spec owns its parts: a copy made by `replace` is another tree
    spec.runtime.precision = 'fp16'
    assert spec.precision == 'fp16'
    other = dataclasses.replace(spec, batch_size=8)
    other.threads = 1
    assert (spec.threads, spec.batch_size, other.threads, other.batch_size) == (2, 32, 1, 8)
    assert other.runtime == spec.runtime and other.runtime is not spec.runtime
    # flat where it travels (a worker's message, a SLURM manifest) and nested as `asdict` writes it: both read back
    assert BenchSpec(**spec.flat()) == spec == BenchSpec(**dataclasses.asdict(spec))
    assert list(spec.flat())[:len(FIELDS)] == [f.name for f in FIELDS] and len(spec_fields()) == len(spec.flat())
    import pytest
    with pytest.raises(TypeError, match='precison'): BenchSpec('resnet18', precison='bf16')  # a typo is no field
    with pytest.raises(TypeError, match='model_name'): BenchSpec(precision='bf16')

def test_a_stored_row_has_a_column_for_every_field():
    "`BenchResult` is the row flattened where it is stored: each field of the configuration is one of its columns."
    from throughput_bench.result import COLUMNS
    assert set(KEY) <= set(COLUMNS), set(KEY) - set(COLUMNS)

NEW_SETTING = '''
    # the fusion pass: off on (default off)
    fusion:str = _F('off', form='fusion={}', said='summary compared served', word='fusion', choices=('off', 'on'),
                    later=True)
'''

CHECK_NEW_SETTING = '''
import dataclasses, throughput_bench as tb
from throughput_bench.core import KEY, KEY_DEFAULTS, BenchSpec, config_words, config_key
from throughput_bench.options import ServeOptions
from throughput_bench.cli import main_parser
from throughput_bench.studies.compare import parse_config
from throughput_bench.studies.mapping import MapOptions
from throughput_bench.serve.loadgen import server_fields
assert tb.__file__.startswith(%r), tb.__file__
assert KEY[-1] == 'fusion' and KEY_DEFAULTS['fusion'] == 'off'            # the key; an old row meant `off`
s = BenchSpec('resnet18', fusion='on')
assert config_words(s) == 'resnet18 fp32 fusion=on bs=32' and 'fusion=on' in s.settings(), config_words(s)
assert config_key({k: getattr(s, k) for k in KEY if k != 'fusion'})[-1] == 'off'
assert parse_config('fusion=on batch=8')['fusion'] == 'on'                # compare and tune name it
for argv in (['serve', '--model', 'resnet18', '--fusion', 'on'], ['map', '--synthetic', '--fusion', 'on']):
    assert main_parser(argv).parse_args(argv).fusion == 'on', argv        # serve and map take it, with its choices
assert ServeOptions('resnet18', fusion='on').fusion == 'on' and MapOptions(fusion='on').fusion == 'on'
assert server_fields({'fusion': 'on'}, 'http://127.0.0.1:1')['fusion'] == 'on'  # what a server says of it
# tbench infer takes it; the sweep's configurations carry it; the row stores it as a column; the row resumes
import tempfile, torch
from throughput_bench.result import COLUMNS
from throughput_bench.scale.launch import SweepOptions, check, configurations, rerun_command
from throughput_bench.machine.devices import result_from_spec
from throughput_bench.analyse.store import ResultStore, row_key
argv = ['infer', '--models', 'resnet18', '--fusion', 'on']
assert main_parser(argv).parse_args(argv).fusion == 'on'
o = check(SweepOptions.of(models=['resnet18'], precisions=['fp32'], batch_sizes=[8], input_size=32, fusion='on'))
(spec,) = configurations(o, torch.device('cpu'))
assert spec.fusion == 'on' and '--fusion on' in spec.command() and '--fusion on' in rerun_command([spec], o)
assert COLUMNS[-1] == 'fusion'
with tempfile.TemporaryDirectory() as d:
    store = ResultStore(d, 'cpu')
    store.append(result_from_spec(spec, status='ok', throughput_mean=1.0))
    (row,) = store.rows()
    assert row['fusion'] == 'on' and row_key(row) == spec.key(), row
    from throughput_bench.analyse.store import read_results
    assert read_results(store.csv_path).fusion.tolist() == ['on']  # read back as text, as it was written
print('reached')
'''

def _package_with(tmp_path, edits:dict):
    """A copy of the package under `tmp_path` with `edits` (`{file: (anchor, text put after it)}`) and no other: the
    files that differ from the package are exactly the edited ones."""
    import filecmp, shutil, throughput_bench
    from pathlib import Path
    src = Path(throughput_bench.__file__).parent
    dst = tmp_path / 'throughput_bench'
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns('__pycache__', 'globe_assets'))
    for name, (anchor, text) in edits.items():
        p = dst / name
        assert p.read_text().count(anchor) == 1, (name, anchor)
        p.write_text(p.read_text().replace(anchor, anchor + text))
    changed = [str(p.relative_to(dst)) for p in dst.rglob('*.py') if not filecmp.cmp(p, src / p.relative_to(dst), shallow=False)]
    assert sorted(changed) == sorted(edits), changed

def _run_in(tmp_path, script:str):
    import os, subprocess, sys
    r = subprocess.run([sys.executable, '-c', script % str(tmp_path)], cwd=tmp_path, capture_output=True, text=True,
                       timeout=300, env={**os.environ, 'PYTHONPATH': str(tmp_path)})
    assert r.returncode == 0 and 'reached' in r.stdout, r.stderr[-3000:]

WEIGHTS_LINE = "flag='weights', word='weights', later=True)\n"

def test_a_setting_added_to_the_table_reaches_every_command_and_the_csv_with_no_other_edit(tmp_path):
    """The design's test (issues 42 and 53, a): a copy of the package with one more `_F` line in `Runtime`, and nothing
    else edited: the key, old rows, words, `compare`'s words, `tbench serve` and `tbench map` flags and the served
    metadata all take it; so do `tbench infer` and the sweep's configurations, a re-run command, and the CSV: a column
    of its own that reads back and resumes."""
    _package_with(tmp_path, {'core.py': (WEIGHTS_LINE, NEW_SETTING)})
    _run_in(tmp_path, CHECK_NEW_SETTING)

# the OpenVINO-style example of issue 53: a runtime flag that one backend acts on (PyTorch folds each BatchNorm into
# the convolution before it, `torch.fx`'s inference fusion, and says so in the row's `backend_settings`)
BACKEND_ACTS = '''        if spec.fusion == 'on':  # fold each BatchNorm into its convolution
            from torch.fx.experimental.optimization import fuse
            model = fuse(model)
'''
BACKEND_SAYS = '''        if spec.fusion == 'on': settings += ' fusion=on'
'''

CHECK_BACKEND_SETTING = '''
import shlex, throughput_bench as tb
assert tb.__file__.startswith(%r), tb.__file__
from throughput_bench.api import infer
from throughput_bench.cli import main_parser
from throughput_bench.analyse.audit import spec_of_row
kw = dict(device='cpu', input_size=32, batch_sizes=[2], precisions=['fp32'], timed_seconds=0.2, warmup=1,
          warmup_seconds=0, threads=1, progress=False, wandb='disabled', repeats=1, wait_idle=0, quiet=True,
          isolate=False, results_dir='r')
(fused,) = infer(['resnet18'], fusion='on', **kw).to_dict('records')
assert fused['status'] == 'ok' and fused['fusion'] == 'on' and 'fusion=on' in fused['backend_settings'], fused
(plain,) = infer(['resnet18'], **kw).to_dict('records')  # another configuration: measured, not the fused row
assert plain['measured'] == 'now' and plain['fusion'] == 'off' and 'fusion' not in plain['backend_settings'], plain
(again,) = infer(['resnet18'], fusion='on', **kw).to_dict('records')  # resumed: the stored row
assert again['measured'] == 'stored' and again['throughput_mean'] == fused['throughput_mean'], again
argv = shlex.split(spec_of_row(fused).command())[1:]  # the row's own re-run command asks for it again
assert '--fusion' in argv and main_parser(argv).parse_args(argv).fusion == 'on', argv
print('reached')
'''

def test_a_setting_a_backend_acts_on_is_its_field_line_and_that_backends_code(tmp_path):
    """The design's test (issue 53, b): `fusion` declared in `Runtime` and acted on by the PyTorch backend, two files
    edited: a real sweep measures it, the row stores it and says what the runtime did, a second call resumes it, a
    configuration without it is another row, and the row's re-run command asks for it."""
    anchor = "        else: model = model.to(dtype=dtype).eval()\n"
    _package_with(tmp_path, {'core.py': (WEIGHTS_LINE, NEW_SETTING),
                             'backends/pytorch.py': (anchor, BACKEND_ACTS)})
    p = tmp_path / 'throughput_bench' / 'backends' / 'pytorch.py'  # the same file: what it says of the settings
    said = "            + f\" threads={torch.get_num_threads()}\"\n        )\n"
    assert p.read_text().count(said) == 1
    p.write_text(p.read_text().replace(said, said + BACKEND_SAYS))
    _run_in(tmp_path, CHECK_BACKEND_SETTING)

def test_each_runtime_has_a_typed_config_and_the_help_names_its_settings():
    "A runtime's own settings are a frozen dataclass (`RuntimeConfig`); `--backend-options`' help names every one."
    from fastcore.docments import docments
    from throughput_bench.core import Runtime
    from throughput_bench.backends.base import RuntimeConfig, get_backend
    import pytest
    from throughput_bench.core import BenchError
    help_text = docments(Runtime)['backend_options']
    for name, words, want in (('openvino', 'hint=THROUGHPUT requests=4', dict(hint='THROUGHPUT', requests=4, streams=None)),
                              ('onnxruntime', 'mode=parallel inter_threads=2', dict(mode='parallel', inter_threads=2, int8=None))):
        be = get_backend(name)
        assert issubclass(be.config, RuntimeConfig) and dataclasses.is_dataclass(be.config)
        c = be.parse_options(words)
        assert dataclasses.asdict(c) == want and c.words() == words
        with pytest.raises(dataclasses.FrozenInstanceError): c.mode = 'x'
        assert all(s in help_text for s in be.options), (name, list(be.options))
        with pytest.raises(BenchError, match=f"{name}: unknown setting"): be.parse_options('hints=LATENCY')

def test_one_sweep_gives_each_runtime_its_own_words_and_a_rerun_of_some_rows_keeps_them():
    "`--backend-options 'openvino.hint=LATENCY onnxruntime.mode=parallel'`: each row gets its runtime's words only; the re-run command of the OpenVINO rows alone names theirs, and parses back to the same configuration."
    import shlex, torch
    from throughput_bench.scale.launch import SweepOptions, check, configurations, rerun_command
    from throughput_bench.machine.devices import result_from_spec
    from throughput_bench.cli import main_parser
    o = check(SweepOptions.of(models=['resnet18'], backends=['openvino', 'onnxruntime'], precisions=['fp32'], batch_sizes=[4],
                              input_size=64, backend_options='openvino.hint=LATENCY onnxruntime.mode=parallel'))
    specs = configurations(o, torch.device('cpu'))
    assert [(s.backend, s.backend_options) for s in specs] == [('openvino', 'hint=LATENCY'), ('onnxruntime', 'mode=parallel')]
    ov = [result_from_spec(s, status='ok') for s in specs if s.backend == 'openvino']
    argv = shlex.split(rerun_command(ov, o))[1:]
    a = vars(main_parser(argv).parse_args(argv))
    again = configurations(check(SweepOptions.of(**{k: v for k, v in a.items() if k not in ('fn', 'cmd')})), torch.device('cpu'))
    assert [s.key() for s in again] == [specs[0].key()]

def test_a_tag_that_is_not_one_of_its_kind_is_an_error_at_import():
    "A field's tags are typed: a typo (`said='bar sumary'`) fails where the field is declared, not by leaving it unsaid."
    import pytest
    import dataclasses
    from throughput_bench.core import Field, Said, Always, MODES, PARTS
    for f in FIELDS:  # every declared tag is typed, one of its kind's
        assert isinstance(f.said, Said) and isinstance(f.always, Always) and set(f.modes) <= set(MODES), f.name
        assert f.part in PARTS, f.name
    with pytest.raises(ValueError, match="said 'sumary' is not one of"): Field('size', 1, part='input', said='bar sumary')
    with pytest.raises(ValueError, match="runs 'precisions ' is not the name of a Backend attribute"):
        Field('size', 1, part='input', runs='precisions ')
    with pytest.raises(ValueError, match="always 'word' is not one of"): dataclasses.replace(FIELD['precision'], always='word')
    with pytest.raises(ValueError, match="not a kind of summary"): FIELD['precision'].says('bars')
