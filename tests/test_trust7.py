"""Many submissions read at once (files of one header parsed in one pass), a leaderboard that says what it left off,
and `tbench submit`'s rule lines cut as every one-line error is."""
import hashlib, json, shutil, sys
from pathlib import Path
import pandas as pd
import pytest
from throughput_bench.analyse.submit import check_all

SUBS = Path(__file__).parents[1] / 'submissions'
sys.path.insert(0, str(Path(__file__).parents[1] / 'bench'))
from submit_scale import build  # submissions of other runs: figures moved under 1%, timestamps by seconds, re-sealed

def copy(src:str, dest:Path)->Path:
    "A committed submission folder, copied to `dest`."
    return Path(shutil.copytree(SUBS / src, dest))

def reseal(folder:Path):
    "Each file's checksum and size in the manifest, as `tbench submit` writes them."
    m = json.loads((folder / 'manifest.json').read_text())
    for name in m['files']:
        b = (folder / name).read_bytes()
        m['files'][name] = dict(sha256=hashlib.sha256(b).hexdigest(), bytes=len(b))
    (folder / 'manifest.json').write_text(json.dumps(m))

def edit_csv(folder:Path, fn):
    "Rewrite the folder's CSV bytes with `fn(bytes) -> bytes`, then reseal."
    p = next(folder.glob('*.csv')); p.write_bytes(fn(p.read_bytes())); reseal(folder)

def test_folders_checked_together_get_what_each_gets_alone(tmp_path):
    """Files that share a header are parsed in one pass: a CRLF file, one without its last newline, one with a row
    without a model (which fails alone) beside good ones; each folder's lines and rows are what it gets checked alone."""
    a, e, b, _, c, _, d, _ = build(tmp_path, 8)  # the CPU's and the H200's, in turn
    edit_csv(b, lambda x: x.replace(b'\n', b'\r\n'))
    edit_csv(c, lambda x: x.rstrip(b'\n'))
    edit_csv(d, lambda x: x + x.split(b'\n')[1].replace(b'resnet18', b'', 1) + b'\n')  # a row without a model
    said, subs = check_all(a, b, c, d, e)
    for f in (a, b, c, d, e):
        alone, one = check_all(f)
        assert said[f] == alone[f], f.name
        if f not in subs: continue
        # the same values (a column typed with other folders' rows may be float where alone it is int)
        pd.testing.assert_frame_equal(subs[f].rows, one[f].rows, check_dtype=False)
        pd.testing.assert_frame_equal(subs[f].raw, one[f].raw)
    assert not said[a] and not said[b] and not said[c] and not said[e]
    assert len(said[d]) == 1 and 'a row without a model' in said[d][0] and d not in subs

def test_the_leaderboard_says_what_it_left_off(cli, tmp_path):
    ok, bad = copy('cpu_amd_epyc', tmp_path / 'cpu_amd_epyc'), tmp_path / 'broken'
    bad.mkdir(); (bad / 'manifest.json').write_text('{')
    r = cli('leaderboard', ok, bad, '-o', tmp_path / 'board', cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert '(1 submission folder(s) on it; 1 left off, failing the rules: broken)' in r.stdout
    assert (tmp_path / 'board' / 'index.html').is_file()

def test_a_submit_error_line_is_cut_as_every_one_line_error_is(cli, tmp_path):
    "A 3,000-character --device came back whole in the rule lines (exit 1); each line is now cut."
    r = cli('submit', '--no-audit', SUBS / 'cpu_amd_epyc', '--device', 'x' * 3000, '--output', tmp_path / 'out', cwd=tmp_path)
    assert r.returncode == 1 and r.stderr.strip()
    assert all(len(l) <= 600 for l in r.stderr.splitlines()), max(map(len, r.stderr.splitlines()))
    assert not (tmp_path / 'out').exists()

HOSTILE_HW = {'blank units': ('cpu_vector_units', '   '), 'a clock of 1e308': ('cpu_max_mhz', 1e308),
              'Infinity MHz': ('cpu_max_mhz', float('inf')), 'true MHz': ('cpu_max_mhz', True),
              'units as a number': ('cpu_vector_units', 123), 'no core': ('cpu_count', -4),
              'cores as a list': ('cpu_count', [2]), 'families as a list': ('cpu_family', [25, 26]),
              'an infinite family': ('cpu_family', float('inf')), 'a limit as a dict': ('power_limit_w', {'w': 1})}

@pytest.mark.parametrize('what', sorted(HOSTILE_HW))
def test_a_hostile_hardware_record_is_unchecked_plausibility_never_a_wrong_line(tmp_path, what):
    """A record's facts are each one plausible number, or the peak rule says nothing (the board: "plausibility
    unchecked"): never this machine's CPU in their place (blank vector units), never an infinite peak that passes
    anything, never a line of numpy's words ("could not be checked: ValueError ...")."""
    from throughput_bench.analyse.submit import stated_peak
    key, value = HOSTILE_HW[what]
    f = copy('cpu_amd_epyc', tmp_path / 'cpu_amd_epyc')
    h = f / 'cpu_amd_epyc_hardware.json'; hw = json.loads(h.read_text())
    hw[key] = value; h.write_text(json.dumps(hw)); reseal(f)
    said, subs = check_all(f)
    assert not [l for l in said[f] if 'could not be checked' in l or 'peak' in l], said[f]
    peak = stated_peak(subs[f].hardware, dict(precision='fp32', threads=2))
    assert peak is None or (key in ('cpu_count', 'cpu_family', 'power_limit_w') and 0 < peak < 1), peak

BLOCK = '''import sys
class Block:
    "pydantic is not installed: as on a GPU machine's image, where litserve was carried without it."
    def find_spec(self, name, path=None, target=None):
        if name.split('.')[0] == 'pydantic': raise ModuleNotFoundError(f"No module named {name!r}", name=name)
sys.meta_path.insert(0, Block())
'''

def test_a_package_installed_without_its_requirement_is_one_line_naming_both(tmp_path):
    "On an H200 `tbench latency` printed litserve's traceback: litserve imports pydantic, which was not there."
    from conftest import tbench
    site = tmp_path / 'site'; site.mkdir(); (site / 'sitecustomize.py').write_text(BLOCK)
    import os
    r = tbench('latency', 'http://127.0.0.1:9', '--wandb', 'disabled', '--no-progress', cwd=tmp_path,
               env={'PYTHONPATH': os.pathsep.join([str(site), os.environ.get('PYTHONPATH', '')])})
    assert r.returncode == 2 and 'Traceback' not in r.stderr, r.stderr[-2000:]
    (line,) = r.stderr.strip().splitlines()
    assert "'pydantic' is not installed (litserve imports it" in line and line.endswith('pip install pydantic'), line
    assert not list(tmp_path.glob('results/*.csv'))  # nothing half-written

@pytest.mark.parametrize('text', ['not json', '[1, 2]', '{"k": NaN}', 'null', '"a string"', '\x00' * 64])
def test_a_damaged_flops_cache_is_counted_again_and_mended(tmp_path, monkeypatch, text):
    "The FLOPs cache is the machine's own file, but a crash or a hand can damage it: a count is never read from junk."
    import json
    from throughput_bench.core import BenchSpec
    from throughput_bench.measure.flops import known_gflops, flops_key
    monkeypatch.setenv('TB_CACHE_DIR', str(tmp_path))
    spec = BenchSpec(model_name='resnet18', input_size=32)
    (tmp_path / 'gflops.json').write_text(text.replace('"k"', json.dumps(flops_key(spec))))
    calls = []
    assert known_gflops(spec, lambda: calls.append(1) or 0.075) == 0.075 and calls == [1]
    assert known_gflops(spec, lambda: calls.append(1) or 0.075) == 0.075 and calls == [1]  # mended: read back
    for bad in (-1.0, 0, True, '0.075', [0.075]):
        (tmp_path / 'gflops.json').write_text(json.dumps({flops_key(spec): bad}))
        assert known_gflops(spec, lambda: 0.075) == 0.075

def test_a_board_whose_every_folder_fails_says_why_in_one_line(tmp_path, cli):
    "A copy of a submission beside it: both fail the once rule, and the board says so, not 'no measured rows'."
    a, b = copy('cpu_amd_epyc', tmp_path / 'a' / 'cpu_amd_epyc'), copy('cpu_amd_epyc', tmp_path / 'b' / 'cpu_amd_epyc')
    r = cli('leaderboard', a, b, '-o', tmp_path / 'board', cwd=tmp_path)
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert 'none of the 2 submission folder(s) passes the rules' in r.stderr and 'the same run' in r.stderr, r.stderr
    assert not (tmp_path / 'board' / 'index.html').exists()
