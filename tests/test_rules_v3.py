"""Issue 54, rules v3: a forgery per rule, built from the committed submissions and re-sealed (fresh checksums) so that
only the rule under test can refuse it."""
import csv, hashlib, json, shutil
from pathlib import Path
import pytest
from throughput_bench.analyse.submit import check_folder, check_folders, released, RULES_VERSION

SUBS = Path(__file__).resolve().parents[1] / 'submissions'

def copy(tmp_path:Path, name:str, as_:str=None)->Path:
    "A committed submission folder, copied under `tmp_path` (as `as_`)."
    return Path(shutil.copytree(SUBS / name, tmp_path / (as_ or name)))

def forge(folder:Path, edit=None, hw_edit=None, manifest_edit=None):
    "Edit every CSV row (and the hardware record), then re-seal every checksum as a forger would."
    m = json.loads((folder / 'manifest.json').read_text())
    p = folder / next(n for n in m['files'] if n.endswith('.csv'))
    with open(p, newline='') as f: rows = list(csv.DictReader(f))
    for r in rows:
        if edit and r['status'] == 'ok': edit(r)
    with open(p, 'w', newline='') as f:
        w = csv.DictWriter(f, list(rows[0])); w.writeheader(); w.writerows(rows)
    if hw_edit:
        h = p.with_name(p.stem + '_hardware.json'); d = json.loads(h.read_text()); hw_edit(d); h.write_text(json.dumps(d))
    for name in m['files']: m['files'][name]['sha256'] = hashlib.sha256((folder / name).read_bytes()).hexdigest()
    if manifest_edit: manifest_edit(m)
    (folder / 'manifest.json').write_text(json.dumps(m))
    return folder

def times(k, *cols):
    "An edit multiplying `cols` by `k` (each per-process figure too)."
    def edit(r):
        for c in cols:
            if r.get(c): r[c] = ';'.join(str(float(x) * k) for x in r[c].split(';'))
    return edit

def rules_said(lines): return sorted({l.split(': ')[2] for l in lines})

def test_the_committed_submissions_pass_rules_v3():
    assert RULES_VERSION == 3
    assert check_folders(SUBS / 'cpu_amd_epyc', SUBS / 'nvidia_h200') == []

FIGURES = ('throughput_mean', 'throughput_ci_low', 'throughput_ci_high', 'throughput_repeats', 'throughput_ci_within_low',
           'throughput_ci_within_high', 'throughput_rerun_low', 'throughput_rerun_high', 'tflops_achieved', 'mfu',
           'pixels_per_sec', 'km2_per_sec')

def test_every_figure_times_1000_is_above_the_stated_cpus_peak(tmp_path):
    "resnet50 at 10,029 img/s on 2 vCPUs, mfu 524: its own numbers agree, the device's peak does not."
    f = forge(copy(tmp_path, 'cpu_amd_epyc'), times(1000, *FIGURES))
    lines = check_folder(f)
    assert rules_said(lines) == ['audited', 'peak'], lines  # its audit's img/s, from another seed, contradicts it too
    peak = next(l for l in lines if ': peak:' in l)
    assert 'cpu_amd_epyc.csv: peak:' in peak and 'line' in peak
    assert all('seeds: another seed' in l for l in lines if ': audited:' in l), lines

def test_watts_above_the_power_limit(tmp_path):
    "Every watt ×1.5 (joules too, so energy per image still agrees): 1,045 W on a 700 W H200."
    f = forge(copy(tmp_path, 'nvidia_h200'), times(1.5, 'watts_mean', 'watts_ci_low', 'watts_ci_high', 'joules_per_image',
                                                   'joules_per_image_ci_low', 'joules_per_image_ci_high'))
    assert rules_said(check_folder(f)) == ['power']

def test_energy_per_image_times_10(tmp_path):
    f = forge(copy(tmp_path, 'nvidia_h200'), times(10, 'joules_per_image', 'joules_per_image_ci_low', 'joules_per_image_ci_high'))
    assert rules_said(check_folder(f)) == ['energy']

def test_an_epyc_relabelled_as_a_xeon(tmp_path):
    def hw(d): d['gpu_name'] = d['cpu'] = 'Intel Xeon'
    f = forge(copy(tmp_path, 'cpu_amd_epyc'), lambda r: r.update(gpu_name='Intel Xeon'), hw)
    lines = check_folder(f)
    assert rules_said(lines) == ['hardware-agrees'] and 'AuthenticAMD' in lines[0], lines

def test_an_h200_relabelled_as_a_t4_is_refused_by_each_rule_it_breaks(tmp_path):
    "373 TFLOP/s and 682 W beside a 70 W power limit, 150 GB and compute capability 9.0 on a T4."
    def hw(d): d.update(gpu_name='Tesla T4', power_limit_w='70.00')
    f = forge(copy(tmp_path, 'nvidia_h200'), lambda r: r.update(gpu_name='Tesla T4'), hw)
    lines = check_folder(f)
    assert rules_said(lines) == ['hardware-agrees', 'peak', 'power'], lines
    assert any('compute capability 9.0 on a 7.5 device' in l for l in lines)

@pytest.mark.parametrize('when', ['2099-01-01T00:00:00', '1999-06-01T12:00:00'])
def test_timestamps_outside_the_tools_life(tmp_path, when):
    f = forge(copy(tmp_path, 'nvidia_h200'), lambda r: r.update(timestamp=when))
    assert rules_said(check_folder(f)) == ['dates']

@pytest.mark.parametrize('v', ['0.1.7', '0.2.0', '0.2.99'])
def test_tbench_versions_that_never_existed(tmp_path, v):
    f = forge(copy(tmp_path, 'nvidia_h200'), lambda r: r.update(tbench_version=v))
    assert rules_said(check_folder(f)) == ['exist']

def test_which_versions_are_releases():
    assert released('tbench_version', '0.1.0') and not released('tbench_version', '0.1.7')
    assert released('pytorch_version', '2.11.0+cu130') and not released('pytorch_version', '2.11.7')
    assert released('pytorch_version', '2.16.0') and not released('pytorch_version', '2.17.0')  # one minor past 2.15
    assert released('timm_version', '1.0.31') and not released('timm_version', '1.0.4')

def test_the_same_run_in_two_folders_is_refused_naming_both(tmp_path):
    a, b = copy(tmp_path, 'nvidia_h200'), copy(tmp_path, 'nvidia_h200', 'nvidia_h200_again')
    said = check_folders(a, b)
    assert rules_said(said) == ['once'] and len(said) == 2 * 5, said
    assert all((f"{a}:" in l or f"{a}/" in l) and str(b) in l for l in said)

def test_the_same_run_twice_in_one_folder(tmp_path):
    f = copy(tmp_path, 'nvidia_h200')
    forge(f, lambda r: r.update(model_name='resnet101') if r['model_name'] == 'vit_base_patch16_224' else None)
    p = f / 'nvidia_h200.csv'
    lines = p.read_text().splitlines()
    p.write_text('\n'.join(lines + [l.replace('resnet101', 'vit_base_patch16_224') for l in lines[1:] if 'resnet101' in l]) + '\n')
    forge(f)  # re-sealed
    said = check_folder(f)
    assert rules_said(said) == ['once'], said

# ---- the board: reproduced, single submission, contradicted ----

from throughput_bench.analyse.submit import board_rows, leaderboard

RUN = ('throughput_mean', 'throughput_ci_low', 'throughput_ci_high', 'throughput_repeats', 'throughput_rerun_low',
       'throughput_rerun_high')

def another(tmp_path, name, k, by='someone else', machine='another machine'):
    "The H200 submission as another submitter on another machine measured it: every figure x `k`, a minute later."
    def edit(r):
        times(k, *RUN)(r); times(1 / k, 'joules_per_image', 'joules_per_image_ci_low', 'joules_per_image_ci_high')(r)
        r['timestamp'] = r['timestamp'][:-2] + '59'
    def hw(d): d['machine_id'] = machine
    return forge(copy(tmp_path, 'nvidia_h200', name), edit, hw, lambda m: m.update(submitted_by=by))

def test_an_independent_submission_inside_the_interval_reproduces_and_one_outside_contradicts(tmp_path):
    a, b = copy(tmp_path, 'nvidia_h200'), another(tmp_path, 'nvidia_h200_b', 1.01)
    d = board_rows(a, b)
    assert d.reproduced.all() and not d.contradicted.any(), d[['folder', 'reproduced', 'contradicted']]
    same = another(tmp_path, 'nvidia_h200_c', 1.01, by='throughput_bench maintainers')  # the same submitter: not independent
    assert not board_rows(a, same).reproduced.any()
    c = another(tmp_path, 'nvidia_h200_d', 0.5, by='a third', machine='a third machine')
    d = board_rows(a, c)
    assert not d.reproduced.any() and d.contradicted.str.contains('img/s').all(), d.contradicted
    page = leaderboard(a, b, c, output=tmp_path / 'board').read_text()
    assert '3 submission(s) checked' in page and '>reproduced<' in page and 'contradicted by a third:' in page
    assert page.index('href="../nvidia_h200_b"') < page.index('href="../nvidia_h200_d"')  # reproduced first, though the same speed class
    assert 'single submission' not in page and 'unaudited: packed under rules v2, before audits' in page

def test_a_single_submission_and_an_unknown_device_say_so(tmp_path):
    a = copy(tmp_path, 'nvidia_h200')
    u = forge(copy(tmp_path, 'nvidia_h200', 'gpu_x'), lambda r: r.update(gpu_name='Acme X1'),
              lambda d: d.update(gpu_name='Acme X1', energy_counter=''))
    assert check_folder(u) == []  # unknown: the hardware rules pass it unchecked
    d = board_rows(a, u)
    assert d.set_index(d.folder.map(lambda f: f.name)).unknown.to_dict() == {'nvidia_h200': False, 'gpu_x': True} or \
        set(d[d.unknown].folder.map(lambda f: f.name)) == {'gpu_x'}
    page = leaderboard(u, output=tmp_path / 'board').read_text()
    assert 'plausibility unchecked: unknown device' in page and 'single submission' in page

# ---- what a fifth probe re-sealed and --check passed ----

def _widened(k):
    "An edit that widens each row's re-run interval `k` times around its mean: any seed's process then lands inside."
    def edit(r):
        m = float(r['throughput_mean'])
        r['throughput_rerun_low'], r['throughput_rerun_high'] = str(m / k), str(m * k)
    return edit

@pytest.mark.parametrize('name', ['cpu_amd_epyc', 'nvidia_h200'])
def test_a_rerun_interval_widened_so_that_any_seed_lands_inside(tmp_path, name):
    lines = check_folder(forge(copy(tmp_path, name), _widened(10)))
    assert rules_said(lines) == ['recomputed'] and 're-run interval is not what its drift' in lines[0], lines

def _restamped(drift:float):
    "An edit giving each row the re-run interval that `drift` gives around its 95% interval, and that drift."
    from throughput_bench.stats import rerun_interval
    def edit(r):
        lo, hi = rerun_interval(float(r['throughput_mean']), r['throughput_ci_low'], r['throughput_ci_high'], drift)
        r.update(throughput_rerun_low=str(lo), throughput_rerun_high=str(hi), rerun_drift=str(drift))
    return edit

def test_a_rerun_interval_on_a_drift_no_machine_has(tmp_path):
    "The interval is what a drift of 300% gives: its arithmetic holds, the drift does not."
    lines = check_folder(forge(copy(tmp_path, 'cpu_amd_epyc'), _restamped(3.0)))
    assert rules_said(lines) == ['recomputed'] and 'without a drift within [0, 0.15]' in lines[0], lines

def test_cuda_rows_in_a_cpus_folder(tmp_path):
    lines = check_folder(forge(copy(tmp_path, 'cpu_amd_epyc'), lambda r: r.update(device='cuda:0')))
    assert rules_said(lines) == ['device'] and 'another kind of device' in lines[0], lines

def test_a_row_of_many_worker_processes_is_submittable(tmp_path):
    "25 per-process figures are over 200 characters: the text rule refused a row for being well measured."
    from test_submit import results
    from throughput_bench.analyse.submit import Submission, check
    root = results(tmp_path / 'results', n=25)
    sub = Submission.read(root / 'cpu_t.csv', root / 'cpu_t_hardware.json')
    assert len(str(sub.rows.throughput_repeats[1])) > 200
    assert [p for p in check(sub) if p.rule in ('text', 'recomputed')] == []

def test_the_seed_interval_of_a_row_with_numpy_numbers():
    "A row from a DataFrame holds NumPy scalars: the interval was (nan, nan), so every audit of it failed."
    import numpy as np
    from throughput_bench.analyse.submit import seed_interval
    row = dict(throughput_rerun_low=np.float32(90), throughput_rerun_high=np.int64(110))
    assert seed_interval(row) == (90.0, 110.0)
    assert seed_interval(dict(throughput_ci_low=np.float64(95), throughput_ci_high=np.float64(105))) == (95.0, 105.0)

def test_a_drift_its_basis_does_not_say(tmp_path):
    "The row's basis says 8.0%; rerun_drift says 15% and the interval is what 15% gives: one of the two was edited."
    lines = check_folder(forge(copy(tmp_path, 'cpu_amd_epyc'), _restamped(0.15)))
    assert rules_said(lines) == ['recomputed'] and 'not the drift its basis' in lines[0], lines

def test_per_process_figures_past_any_machine_are_no_figures(tmp_path):
    "Five figures of 1e308: their sum is inf, and inf was 'within 2%' of any mean."
    lines = check_folder(forge(copy(tmp_path, 'cpu_amd_epyc'), lambda r: r.update(throughput_repeats=';'.join(['1e308'] * 5))))
    assert 'recomputed' in rules_said(lines) and any('no per-process figures' in l for l in lines), lines

@pytest.mark.parametrize('ch', ['\u2028', '\u2029'])
def test_a_line_or_paragraph_separator_is_a_control_character(tmp_path, ch):
    lines = check_folder(forge(copy(tmp_path, 'cpu_amd_epyc'), lambda r: r.update(error=f"line{ch}break")))
    assert rules_said(lines) == ['text'], lines

def test_a_digest_is_read_in_the_one_spelling_it_is_written_in():
    import numpy as np
    from throughput_bench.backends.base import output_digest, read_digest
    d = output_digest(np.ones((2, 10)))
    assert read_digest(d) is not None
    assert read_digest(d.upper()) is None and read_digest(d.replace('sha256=', 'sha256=0')) is None

def test_the_long_bases_the_tool_writes_are_submittable():
    "A damaged record's or the yardstick's basis runs past 200 characters: every line of such a run was refused."
    from throughput_bench.measure.drift import Drift
    from throughput_bench.analyse.submit import LONG_TEXT, LONG_TEXT_LIMIT, SAID_DRIFT
    said = Drift(0.08, True, damaged='the drift record was damaged (3 unreadable line(s)) and set aside as x.jsonl',
                 prior_source='the CPU prior: re-runs minutes apart on a 2-core VM spread 11-19% (SD 4-7.5%)').basis()
    assert 200 < len(said) <= LONG_TEXT_LIMIT and 'rerun_basis' in LONG_TEXT
    assert float(SAID_DRIFT.search(said).group(1)) == 8.0 and SAID_DRIFT.search('Drift 8.0% from').group(1) == '8.0'

def test_a_provisional_flag_its_basis_does_not_say(tmp_path):
    "The basis says 'provisional: …' (the prior still outweighs the re-runs); the flag says it is not."
    lines = check_folder(forge(copy(tmp_path, 'cpu_amd_epyc'), lambda r: r.update(rerun_provisional='False')))
    assert rules_said(lines) == ['recomputed'] and 'rerun_provisional is not what its basis' in lines[0], lines

@pytest.mark.parametrize('dof,said', [(2, 'fewer than the prior'), (600, "its basis's Student t give")])
def test_a_basis_whose_student_t_is_not_the_intervals(tmp_path, dof, said):
    "2 degrees of freedom: fewer than the prior is worth. 600: the stored interval is wider than that t gives."
    def edit(r): r.update(rerun_basis=r['rerun_basis'].replace('Student t, 6 dof', f"Student t, {dof} dof"))
    lines = check_folder(forge(copy(tmp_path, 'cpu_amd_epyc'), edit))
    assert rules_said(lines) == ['recomputed'] and said in lines[0], lines

def test_a_busy_rows_interval_cut_at_zero_is_checked_not_divided_by():
    "A busy row's 95% interval reaches 0 (±872%): its re-run interval's lower bound is 0, and 0 is what it should be."
    from throughput_bench.analyse.submit import rerun_fault
    from throughput_bench.stats import rerun_interval
    lo, hi = rerun_interval(10.0, 0.0, 97.2, 0.08, dof=6)
    row = dict(throughput_mean=10.0, throughput_ci_low=0.0, throughput_ci_high=97.2, throughput_rerun_low=lo,
               throughput_rerun_high=hi, rerun_drift=0.08, rerun_provisional='True',
               rerun_basis='provisional: drift 8.0% from the 8.0% prior; Student t, 6 dof')
    assert lo == 0 and rerun_fault(row) == ''
    assert 'not what its drift' in rerun_fault(row | dict(throughput_rerun_high=hi * 1.5))
