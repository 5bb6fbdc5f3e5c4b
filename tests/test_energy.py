"""Energy per image from the device's own counter: a RAPL tree that moves (a stand-in for the kernel's, written by this
test at a known rate) gives each row joules per image, watts and their intervals; no counter leaves the cells empty and
says why, in the row and once in the hardware record. Nothing is estimated."""
import json, os, threading, time
from pathlib import Path
import pandas as pd
import pytest
from conftest import tbench, FAST

def powercap(root:Path, uj:int=0)->Path:
    "A powercap tree as the kernel lays it out: package-0 and its DRAM subzone (also listed at the top, as a link)."
    for z, name in (('intel-rapl:0', 'package-0'), ('intel-rapl:0/intel-rapl:0:1', 'dram')):
        d = root / z; d.mkdir(parents=True, exist_ok=True)
        (d / 'name').write_text(name + '\n'); (d / 'energy_uj').write_text(f"{uj}\n")
        (d / 'max_energy_range_uj').write_text(f"{2**32}\n")
    (root / 'intel-rapl:0:1').symlink_to(root / 'intel-rapl:0' / 'intel-rapl:0:1')
    return root

def with_flags(args:list, values:dict)->list:
    "`args` with the value after each flag in `values` replaced."
    out = list(args)
    for k, v in values.items(): out[out.index(k) + 1] = v
    return out

WATTS = 40.0  # what the writer adds to the package zone: 0.4 J every 10 ms at most

def test_a_moving_counter_gives_joules_per_image_and_watts_with_intervals(tmp_path):
    root, stop = powercap(tmp_path / 'powercap'), threading.Event()
    def write():
        uj, f = 0, root / 'intel-rapl:0' / 'energy_uj'
        while not stop.is_set():
            uj += int(WATTS * 0.01 * 1e6); tmp = f.with_suffix('.tmp'); tmp.write_text(f"{uj}\n"); tmp.replace(f)
            time.sleep(0.01)
    t = threading.Thread(target=write, daemon=True); t.start()
    env = os.environ | {'TB_POWERCAP': str(root)}
    try:
        args = with_flags(FAST, {'--repeats': '2', '--timed-seconds': '0.5'})
        r = tbench('infer', '--models', 'resnet18', *args, cwd=tmp_path, env=env)
    finally: stop.set(); t.join()
    assert r.returncode == 0, r.stderr
    row = pd.read_csv(next((tmp_path / 'results').glob('*.csv'))).query("status == 'ok'").iloc[0]
    assert row.energy_counter == 'rapl' and (pd.isna(row.energy_note) or row.energy_note == '')
    # the counter moved by at most WATTS (the writer sleeps at least 10 ms a step): watts within what it wrote
    assert 0 < row.watts_mean <= WATTS * 1.05 and row.watts_ci_low <= row.watts_mean <= row.watts_ci_high
    assert row.joules_per_image > 0 and row.joules_per_image_ci_low <= row.joules_per_image <= row.joules_per_image_ci_high
    # joules per image is the phase's joules over its images: watts over img/s, per process, averaged
    assert row.joules_per_image == pytest.approx(row.watts_mean / row.throughput_mean, rel=0.5)
    hw = json.loads(next((tmp_path / 'results').glob('*_hardware.json')).read_text())
    assert hw['energy_counter'].startswith('rapl: CPU package-0 + dram')
    # the report and the Globe Race show it: img/J and km² per kWh beside km²/s
    r = tbench('report', 'results', '-o', 'rep', '--formats', 'png', '--charts', 'overview', cwd=tmp_path)
    assert r.returncode == 0 and 'img/J [95% CI] | km²/kWh |' in (tmp_path / 'rep' / 'summary.md').read_text(), r.stderr
    from throughput_bench.analyse.globe import globe_data
    lane = next(x for x in globe_data(tmp_path / 'results')['rows'] if x['model'] == 'resnet18')
    assert lane['jpi'] == pytest.approx(row.joules_per_image)

def test_no_counter_leaves_the_cells_empty_and_says_why(tmp_path):
    env = os.environ | {'TB_POWERCAP': str(tmp_path / 'nothing')}
    r = tbench('infer', '--models', 'resnet18', *FAST, cwd=tmp_path, env=env)
    assert r.returncode == 0, r.stderr
    row = pd.read_csv(next((tmp_path / 'results').glob('*.csv'))).query("status == 'ok'").iloc[0]
    assert pd.isna(row.joules_per_image) and pd.isna(row.watts_mean) and 'no RAPL zone' in row.energy_note
    hw = json.loads(next((tmp_path / 'results').glob('*_hardware.json')).read_text())
    assert hw['energy_counter'].startswith('none: no RAPL zone under')
