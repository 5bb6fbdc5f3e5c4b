"""Rules v3's audits: an audit process computes a row's outputs again (its digest), times a repeated input against
distinct ones and measures with another seed; `tbench submit` packs the records and `--check` works every verdict out
again, so that a forgery re-sealed with fresh checksums is refused by the audit rule alone."""
import hashlib, json, re
from pathlib import Path
import numpy as np
import pytest
from throughput_bench.core import BenchSpec
from throughput_bench.measure.timing import TimingConfig
from throughput_bench.analyse.store import row_key
from throughput_bench.analyse import submit as S
from throughput_bench.analyse.audit import AuditConfig, audit_row, submit_audited, spec_of_row
from throughput_bench.backends.base import output_digest
from test_submit import results
from test_trust7 import reseal  # each file's checksum in the manifest, as tbench submit writes it

QUICK = AuditConfig()  # on a CPU: the gate's call and 1 to 8 pairs at the row's batch

@pytest.mark.slow
def test_an_audit_process_computes_the_rows_outputs_again_and_the_checker_agrees_with_its_verdicts():
    """The row's own process and a fresh worker process (another seed for its timed inputs) give the same bytes on the
    gate's fixed input; the record's failures are what the checker works out from its figures."""
    from throughput_bench.scale.sweep import run_spec
    spec = BenchSpec('resnet18', input_channels=3, input_size=32, batch_size=2, probe_batch=False, threads=1)
    row = run_spec(spec, TimingConfig(warmup=2, warmup_seconds=0.1, timed_seconds=0.3)).to_row()
    assert row['status'] == 'ok' and row['output_digest'].startswith('sha256=')
    rec = audit_row(row, QUICK)  # a worker process of the sweep's fork server
    assert rec['status'] == 'ok', rec
    assert QUICK.pairs <= rec['cache_pairs'] <= QUICK.most_pairs
    assert rec['output_digest'] == row['output_digest']  # identical bytes, another process
    assert rec['key'] == list(row_key(row)) and rec['seed'] == QUICK.seed
    assert rec['cache_gain'] > 0 and rec['throughput'] > 0 and rec['seconds'] > 0
    assert rec['failures'] == S.audit_failures(row, rec | dict(passed=True, failures=[]))
    assert rec['passed'] == (not rec['failures'])
    assert spec_of_row(row).key() == spec.key()
    # in this process: on a CPU the pairs' distinct calls are the audit's timed phase, its img/s from them alone
    got = []
    rec2 = audit_row(row, QUICK, runner=lambda *a, **kw: got.append(run_spec(*a, **kw)) or got[-1])
    res, cache = got[0], got[0].extra['cache']
    assert rec2['throughput'] == res.throughput_mean and res.iterations == cache['pairs'] == rec2['cache_pairs']
    assert res.throughput_mean == pytest.approx(res.iterations * res.batch_size / res.seconds_measured, rel=1e-6)
    assert res.ref_gemm_gflops is None  # no yardstick beside an audit

def _audited_folder(tmp_path:Path)->Path:
    """A packed submission (three rows through `ResultStore`) with an audit record a row that passes: its digest, no
    gain from a repeated input, another seed's img/s at the row's mean."""
    digest = lambda i: output_digest(np.random.default_rng(i).standard_normal((2, 10)))
    root = results(tmp_path / 'results', digest=digest)
    import pandas as pd
    d = pd.read_csv(root / 'cpu_t.csv', keep_default_na=False)
    recs = [dict(key=list(row_key(r)), config=r['model_name'], seed=7, status='ok', error='',
                 output_digest=digest(i), cache_gain=1.01, cache_pairs=20, throughput=float(r['throughput_mean']),
                 seconds=3.0, failures=[], passed=True) for i, r in enumerate(d.to_dict('records'))]
    return S.submit(root, output=tmp_path / 'subs', by='tester', quiet=True, audits=recs,
                    audit_summary=dict(configurations=3, passed=3, seed=7))

def test_a_packed_submission_carries_its_audits_and_passes(cli, tmp_path):
    folder = _audited_folder(tmp_path)
    assert S.AUDITS_FILE in json.loads((folder / 'manifest.json').read_text())['files']
    r = cli('submit', '--check', folder, cwd=tmp_path)
    assert r.returncode == 0 and 'pass rules v3' in r.stdout and 'unaudited' not in r.stdout, r.stdout

FORGED = {  # what a forger changes in the audit records, then re-seals: each refused by the audit rule alone
    'another model': lambda r: r | dict(output_digest=output_digest(np.ones((2, 10)))),
    'a cache': lambda r: r | dict(cache_gain=1.5),
    'a lucky process': lambda r: r | dict(throughput=r['throughput'] * 1.5),
    'a process that failed': lambda r: r | dict(status='error', error='worker killed by SIGKILL'),
    'passed said of a failure': lambda r: r | dict(cache_gain=9.0, failures=[], passed=True),
    'a gain of minus infinity': lambda r: r | dict(cache_gain=float('-inf')),
    'a gain as text': lambda r: r | dict(cache_gain='1.0'),
    'the rows own seed': lambda r: r | dict(seed=0),
    'no pairs': lambda r: r | dict(cache_pairs=0),
    'a record that says it failed': lambda r: r | dict(passed=False, failures=['caching: 9x']),
    'a gain no machine measures': lambda r: r | dict(cache_gain=0.01),
    'a billion pairs': lambda r: r | dict(cache_pairs=10**9),
    'a close gain from one pair': lambda r: r | dict(cache_pairs=1, cache_gain=1.09),  # the audit measures it again
    'a status in capitals': lambda r: r | dict(status='OK'),
    'a seed as text': lambda r: r | dict(seed='7'),
    'a digest with another largest value': lambda r: r | dict(output_digest=re.sub(r'max=\S+', 'max=1e30',
                                                                                 r['output_digest'])),
}

@pytest.mark.parametrize('forgery', sorted(FORGED) + ['a record left out', 'a record of no row', 'a record twice',
                                                      'no audits at all'])
def test_a_forged_audit_resealed_is_refused_by_the_audit_rule_alone(tmp_path, forgery):
    folder = _audited_folder(tmp_path)
    p = folder / S.AUDITS_FILE
    recs = [json.loads(l) for l in p.read_text().splitlines()]
    if forgery in FORGED: recs[1] = FORGED[forgery](recs[1])
    elif forgery == 'a record left out': del recs[1]
    elif forgery == 'a record of no row': recs.append(recs[1] | dict(key=['inference', 'resnet101'] + recs[1]['key'][2:]))
    elif forgery == 'a record twice': recs.append(dict(recs[1]))
    if forgery == 'no audits at all':
        p.unlink(); m = json.loads((folder / 'manifest.json').read_text()); del m['files'][S.AUDITS_FILE]
        (folder / 'manifest.json').write_text(json.dumps(m))
    else: p.write_text(''.join(json.dumps(r) + '\n' for r in recs))
    reseal(folder)
    lines = S.check_folder(folder)
    assert len(lines) == 1 and ': audited: ' in lines[0], lines
    if forgery not in ('a record of no row', 'a record twice', 'no audits at all'): assert lines[0].endswith('(line 3)'), lines
    words = {'another model': 'outputs', 'a cache': 'caching', 'a lucky process': 'seeds',
             'a process that failed': 'did not measure', 'passed said of a failure': 'caching',
             'a record left out': 'no audit record', 'a gain of minus infinity': 'cache_gain is not a number',
             'a gain as text': 'cache_gain is not a number', 'a gain no machine measures': 'cache_gain is not a number',
             'a billion pairs': 'cache_pairs is not a count', 'a close gain from one pair': 'from 1 pair of calls',
             'a status in capitals': "did not measure (status 'OK')", 'a seed as text': "seed '7' is not a whole number", 'a digest with another largest value': 'digest was edited', 'the rows own seed': 'seed is not another seed',
             'no pairs': 'cache_pairs is not a count', 'a record that says it failed': 'does not say it passed', 'a record of no row': 'of no measured row', 'a record twice': '1 duplicate record(s)',
             'no audits at all': 'no audits'}
    assert words[forgery] in lines[0], lines

@pytest.mark.parametrize('text', ['{', '[1, 2]', '{"key": "<script>alert(1)</script>"}', '{"a": {"b": {"c": {"d": 1}}}}',
                                  '{"error": "\\u001b[2J"}', 'x' * 10, '{"config": "\\u202eevil"}', '{"error": "\\u009b2J"}'])
def test_a_hostile_audits_file_is_one_line_never_a_traceback(tmp_path, text):
    folder = _audited_folder(tmp_path)
    (folder / S.AUDITS_FILE).write_text(text + '\n'); reseal(folder)
    lines = S.check_folder(folder)
    assert lines and all('\n' not in l and '\x1b' not in l for l in lines), lines
    assert any(S.AUDITS_FILE in l for l in lines), lines

def test_no_audit_packs_a_folder_the_check_and_the_board_call_unaudited(cli, tmp_path):
    results(tmp_path / 'results')
    assert cli('submit', '--no-audit', 'results', '-o', 'subs', '--by', 'tester', cwd=tmp_path).returncode == 0
    folder = tmp_path / 'subs' / 'cpu_t'
    assert json.loads((folder / 'manifest.json').read_text())['unaudited'] == 'packed with --no-audit'
    r = cli('submit', '--check', folder, cwd=tmp_path)
    assert r.returncode == 0 and 'unaudited: cpu_t (packed with --no-audit)' in r.stdout, r.stdout
    m = json.loads((folder / 'manifest.json').read_text()); del m['unaudited']  # a v3 folder that says nothing
    (folder / 'manifest.json').write_text(json.dumps(m))
    lines = S.check_folder(folder)
    assert len(lines) == 1 and 'audited: no audits' in lines[0], lines
    good = _audited_folder(tmp_path / 'b')
    assert cli('leaderboard', good, '-o', 'board', cwd=tmp_path).returncode == 0
    assert '<span class="tag ok">audited</span>' in (tmp_path / 'board' / 'index.html').read_text()

@pytest.mark.slow
def test_submit_audits_each_configuration_and_packs_nothing_when_the_figures_are_not_this_machines(tmp_path):
    """The three rows' figures were written, not measured here: each configuration's audit process measures it, the
    made-up figures land outside, and nothing is packed; each failed configuration is a line. The rows are of 32 px at
    batch 2: the audits measure what the rows say, and those are the cheapest to measure."""
    from throughput_bench.scale.sweep import run_spec
    root = results(tmp_path / 'results', size=32, batch=2)
    said = []
    with pytest.raises(S.BenchError) as e:
        submit_audited(root, output=tmp_path / 'subs', by='tester', cfg=QUICK, log=said.append, runner=run_spec)
    msg = str(e.value)
    assert '3 of 3 audit(s) failed, nothing written' in msg and not (tmp_path / 'subs').exists()
    assert len([l for l in said if l.startswith('audit ')]) == 3 and said[-1].startswith('audits: 0 of 3 passed')
    # each row predates output digests: the outputs audit says so, whatever the figures
    assert msg.count('the row predates output digests') == 3, msg

@pytest.mark.parametrize('shape', ['8192x8192', '-8x1000', '-8x-1000', '0x10', '2x10x3', '２x10'])
def test_a_hostile_digest_is_no_digest_and_costs_nothing(shape):
    "A digest is one row an image and at most `MAX_DIGEST_VALUES` values: 8192x8192 once cost 13 s and 4.3 GB a row."
    from throughput_bench.backends.base import read_digest, digests_agree
    d = f"sha256=aa max=1 probe=0.1,0.1,0.1,0.1 shape={shape}"
    assert read_digest(d) is None
    assert digests_agree(d, d.replace('aa', 'bb'), 1e-3) == (False, 'no output digest to compare')

@pytest.mark.parametrize('manifest', [dict(unaudited=['why']), dict(unaudited=True), dict(unaudited='  '),
                                      dict(rules_version=True), dict(rules_version=-1), dict(rules_version='2')])
def test_a_manifest_that_drops_its_audits_must_say_why_in_plain_words(tmp_path, manifest):
    "An `unaudited` that is not words, or a rules version that is not one, is no reason: the folder is refused."
    folder = _audited_folder(tmp_path)
    (folder / S.AUDITS_FILE).unlink()
    m = json.loads((folder / 'manifest.json').read_text()); del m['files'][S.AUDITS_FILE]; m.pop('audits')
    (folder / 'manifest.json').write_text(json.dumps(m | manifest)); reseal(folder)
    lines = S.check_folder(folder)
    assert len(lines) == 1 and 'audited: no audits' in lines[0], lines

def test_unaudited_text_is_printed_escaped(cli, tmp_path):
    results(tmp_path / 'results')
    assert cli('submit', '--no-audit', 'results', '-o', 'subs', '--by', 'tester', cwd=tmp_path).returncode == 0
    folder = tmp_path / 'subs' / 'cpu_t'
    m = json.loads((folder / 'manifest.json').read_text()); m['unaudited'] = 'evil \u202e \u009b2J'
    (folder / 'manifest.json').write_text(json.dumps(m)); reseal(folder)
    r = cli('submit', '--check', folder, cwd=tmp_path)
    assert r.returncode == 1 and '\u202e' not in r.stdout and '\u009b' not in r.stdout, r.stdout

def test_replace_onto_a_file_or_a_link_writes_nothing_and_check_refuses_packing_flags(cli, tmp_path):
    results(tmp_path / 'results')
    (tmp_path / 'subs').mkdir(); (tmp_path / 'subs' / 'cpu_t').write_text('a file')
    r = cli('submit', '--no-audit', 'results', '-o', 'subs', '--by', 'tester', '--replace', cwd=tmp_path)
    assert r.returncode == 1 and 'not a submission folder' in r.stderr, r.stderr
    assert sorted(p.name for p in (tmp_path / 'subs').iterdir()) == ['cpu_t']  # no .partial left behind
    r = cli('submit', '--check', 'subs', '--by', 'x', cwd=tmp_path)
    assert r.returncode == 2 and 'not used with --check' in r.stderr, r.stderr

@pytest.mark.parametrize('kw,msg', [(dict(pairs=0), 'at least 1'), (dict(pairs=2.0), 'whole number'),
                                    (dict(seed=0), "differ from the rows'"), (dict(most_pairs='8'), 'whole number'),
                                    (dict(most_pairs=10**12), 'more than 64'), (dict(most_pairs=1), 'most_pairs must be at least 2'), (dict(timed_seconds=float('nan')), 'timed_seconds'),
                                    (dict(timed_seconds=0), 'timed_seconds'), (dict(timed_phase='no'), 'timed_phase')])
def test_an_audit_config_the_checker_would_refuse_is_one_line(kw, msg):
    "An audit of fewer pairs than `--check` accepts, or of the rows' own seed, is refused before any process starts."
    from throughput_bench.core import BenchError
    with pytest.raises(BenchError, match=msg): AuditConfig(**kw)

def test_cache_gain_makes_at_least_one_pair_whatever_it_is_told():
    import torch
    from throughput_bench.measure.inference import cache_gain
    net = torch.nn.Linear(12, 4)
    for least in (0, -1):
        g = cache_gain(lambda x: net(x.flatten(1)).detach().numpy(), BenchSpec('m', input_channels=3, input_size=2), 2, least=least)
        assert g['pairs'] >= 1 and g['gain'] > 0

@pytest.mark.parametrize('summary', ['all passed', dict(configurations=999, passed=-3, seed=0, share=1e9), 'another seed',
                                     'negative seconds'])
def test_a_manifest_audits_summary_its_records_contradict_is_refused(tmp_path, summary):
    "The manifest's summary of the audits (not under its own checksums) must say what `audits.jsonl` holds."
    folder = _audited_folder(tmp_path)
    m = json.loads((folder / 'manifest.json').read_text())
    n = len((folder / S.AUDITS_FILE).read_text().splitlines())
    assert m['audits']['configurations'] == m['audits']['passed'] == n and not S.check_folder(folder)  # as packed
    m['audits'] = {'another seed': m['audits'] | dict(seed=8), 'negative seconds': m['audits'] | dict(audit_seconds=-1.0)
                   }.get(summary, summary) if isinstance(summary, str) and summary != 'all passed' else summary
    (folder / 'manifest.json').write_text(json.dumps(m))
    lines = S.check_folder(folder)
    assert len(lines) == 1 and 'audits summary is not what' in lines[0], lines
