"""`tbench submit`, `--check` and `tbench leaderboard`: a device that passes, one that breaks each rule (named, with its
lines, nothing written), a tampered folder, and the leaderboard of two submissions and the seed tool's H100 file in a
browser at two widths."""
import hashlib, json, re
from pathlib import Path
import pytest
from conftest import static_server

REF = Path(__file__).parent / 'fixtures' / 'throughput-bench' / 'nvidia_h100_nvl.csv'  # the seed tool's file

def results(root:Path, slug='cpu_t', label='Test CPU', torch=None, scale=1.0, digest=None, size=224, batch=8,
            **kw)->Path:
    """A results folder as a sweep writes it: three rows through `ResultStore` (`size` px, batch `batch`), this
    machine's hardware record (`digest(i)`: row i's output digest)."""
    import torch as T, numpy as np
    from throughput_bench.stats import ci_halfwidth
    from throughput_bench.result import BenchResult
    from throughput_bench.analyse.store import ResultStore
    from throughput_bench.machine.hardware import fingerprint
    s = ResultStore(root, slug, label)
    hw = fingerprint(T.device('cpu')); s.write_hardware(hw); s.update_index()
    hw['gpu_name'] = label; s.write_hardware(hw)  # the rows' device, as a sweep on it writes both
    for i, m in enumerate(['resnet18', 'resnet50', 'vit_tiny_patch16_224']):
        v = scale * 40.0 / (i + 1)
        n = kw.pop('n', 5) if i == 1 else 5  # worker processes; their figures and interval as a sweep makes them
        xs = [v * (1 + 0.01 * k) for k in np.linspace(-2, 2, n)]
        h = ci_halfwidth(float(np.std(xs, ddof=1)), n)
        row = dict(model_name=m, precision='fp32', gpu_name=label, device='cpu', device_type='cpu', batch_size=batch,
                   input_channels=3, input_size=size, throughput_mean=float(np.mean(xs)), throughput_ci_low=v - h,
                   throughput_ci_high=v + h, throughput_repeats=';'.join(map(str, xs)), repeats=n,
                   pytorch_version=torch or hw['pytorch_version'],
                   timm_version=hw['timm_version'], tbench_version='0.1.0', command=f'tbench infer --models {m}',
                   output_digest=digest(i) if digest else '')
        s.append(BenchResult(**(row | (kw if i == 1 else {}))))  # what breaks a rule: on the second row (line 3)
    return root

def test_a_passing_device_is_packed_with_its_checksums_and_passes_the_check(cli, tmp_path):
    results(tmp_path / 'results')
    r = cli('submit', '--no-audit', 'results', '-o', 'subs', '--by', 'tester', cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert 'git add subs/cpu_t' in r.stdout and 'tbench submit --check' in r.stdout
    folder = tmp_path / 'subs' / 'cpu_t'
    assert sorted(p.name for p in folder.iterdir()) == ['cpu_t.csv', 'cpu_t_hardware.json', 'manifest.json']
    m = json.loads((folder / 'manifest.json').read_text())
    for name in ('cpu_t.csv', 'cpu_t_hardware.json'):  # the checksums, worked out here
        assert m['files'][name]['sha256'] == hashlib.sha256((folder / name).read_bytes()).hexdigest()
        assert (folder / name).read_bytes() == (tmp_path / 'results' / name).read_bytes()
    assert m['submitted_by'] == 'tester' and m['rows'] == m['measured'] == 3 and m['device'] == 'Test CPU'
    assert m['commands'] == sorted(f'tbench infer --models {x}' for x in ('resnet18', 'resnet50', 'vit_tiny_patch16_224'))
    r = cli('submit', '--check', folder, cwd=tmp_path)
    assert r.returncode == 0 and 'pass rules' in r.stdout, r.stdout
    r = cli('submit', '--no-audit', 'results', '-o', 'subs', cwd=tmp_path)  # never over an earlier submission unless asked
    assert r.returncode == 1 and '--replace' in r.stderr

BREAKS = {'quiet': dict(contended=True),
          'gate': dict(status='wrong', max_rel_diff=0.5, tolerance=0.01, error='max rel diff 0.5 > 0.01'),
          'intervals': dict(n=3), 'text': dict(model_name='resnet50<script>alert(1)</script>'),
          'status': dict(status='error', error=''), 'versions': dict(timm_version='')}

@pytest.mark.parametrize('rule', sorted(BREAKS) + ['hardware'])
def test_each_broken_rule_is_named_with_its_lines_and_nothing_is_written(cli, tmp_path, rule):
    root = results(tmp_path / 'results', **BREAKS.get(rule, {}))
    if rule == 'hardware':
        hw = root / 'cpu_t_hardware.json'
        d = json.loads(hw.read_text()); del d['torch_threads']; hw.write_text(json.dumps(d))
    r = cli('submit', '--no-audit', 'results', '-o', 'subs', cwd=tmp_path)
    assert r.returncode == 1, r.stdout + r.stderr
    said = [l.strip() for l in r.stderr.splitlines() if l.startswith('  ')]
    assert [l.split(':')[0] for l in said] == [rule], r.stderr  # that rule, and only it
    assert ('torch_threads' in said[0]) if rule == 'hardware' else said[0].endswith('(line 3)'), said
    assert not (tmp_path / 'subs').exists()

def test_check_finds_a_changed_file_an_unlisted_one_and_a_broken_manifest(cli, tmp_path):
    results(tmp_path / 'results')
    assert cli('submit', '--no-audit', 'results', '-o', 'subs', cwd=tmp_path).returncode == 0
    folder = tmp_path / 'subs' / 'cpu_t'
    csv = folder / 'cpu_t.csv'
    csv.write_text(csv.read_text().replace(',40.0,', ',400.0,', 1))  # a figure edited after the check
    (folder / 'notes.html').write_text('<b>hi</b>')
    r = cli('submit', '--check', folder, cwd=tmp_path)
    assert r.returncode == 1
    assert any('cpu_t.csv' in l and 'SHA-256 differs' in l for l in r.stdout.splitlines()), r.stdout
    assert any('notes.html' in l and 'does not list' in l for l in r.stdout.splitlines()), r.stdout
    (folder / 'manifest.json').write_text('{"files": {"../../etc/passwd": {}}}')
    r = cli('submit', '--check', folder, cwd=tmp_path)
    assert r.returncode == 1 and 'listed, not there' in r.stdout
    (folder / 'manifest.json').write_text('not json')
    assert 'manifest.json' in cli('submit', '--check', folder, cwd=tmp_path).stdout

@pytest.mark.slow
def test_the_leaderboard_of_two_submissions_and_the_seed_file_in_a_browser(cli, tmp_path, browser):
    results(tmp_path / 'a', 'cpu_a', 'CPU A', scale=1.0)
    results(tmp_path / 'b', 'cpu_b', 'CPU B', scale=2.1, torch='2.0.0')  # faster, on an older torch (2.1x: at
    # 2x its resnet50 would be A's resnet18 to the digit, in the same second: the same run to the `once` rule)
    results(tmp_path / 'c', 'cpu_c', 'CPU C', contended=True)
    for d in 'abc': cli('submit', '--no-audit', d, '-o', 'subs', '--allow-contended', '1', cwd=tmp_path)
    csv = tmp_path / 'subs' / 'cpu_c' / 'cpu_c.csv'
    csv.write_text(csv.read_text() + csv.read_text().splitlines()[1] + '\n')  # C is changed after packing: left off
    r = cli('leaderboard', 'subs', '--also', REF, '-o', 'board', cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    with static_server(tmp_path) as url:
        for width in (1400, 390):
            page = browser.new_page(viewport={'width': width, 'height': 900})
            problems = []
            page.on('console', lambda m: problems.append(m.text) if m.type == 'error' else None)
            page.on('request', lambda q: problems.append(q.url) if not q.url.startswith(url) else None)
            page.goto(f"{url}/board/index.html")
            heads = page.eval_on_selector_all('h2', 'els => els.map(e => e.textContent)')
            assert 'resnet18 · 3×224 px · fp32' in heads
            i = heads.index('resnet18 · 3×224 px · fp32')
            rows = page.eval_on_selector_all(f'#g{i} + table tbody tr', 'els => els.map(e => e.innerText)')
            # fastest first: the H100's seed rows (compiled, then eager: each says which), then B (2x A), then A; C
            # is left off, and the page says why
            assert [re.search(r'H100|CPU A|CPU B|CPU C', t).group(0) for t in rows] == ['H100', 'H100', 'CPU B', 'CPU A']
            assert 'compile default' in rows[0] and 'eager' in rows[1] and 'unchecked' in rows[0]
            assert 'older torch' in rows[2] and 'older' not in rows[3]
            assert 'Left off' in page.inner_text('main') and 'cpu_c' in page.inner_text('main')
            assert page.evaluate('document.documentElement.scrollWidth') <= width  # nothing wider than the screen
            page.screenshot(path=str(tmp_path / f'board_{width}.png'), full_page=False)
            assert not problems, problems
