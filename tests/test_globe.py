"The Globe Race page in headless Chromium: offline, figures equal to Python's, every view working; and `tbench globe`'s bad input."
import math, re
from pathlib import Path
from urllib.parse import urlsplit
import pandas as pd
import pytest
from conftest import tbench, static_server  # the `browser` fixture is in conftest.py
from throughput_bench.api import globe
from throughput_bench.analyse.land import EARTH_LAND_KM2

pytestmark = pytest.mark.slow  # servers, browsers, launches: the full run, not the fast tier

ROOT = Path(__file__).resolve().parents[1]
SEED = ROOT / 'tests' / 'fixtures' / 'throughput-bench' / 'nvidia_h100_nvl.csv'  # the seed tool's H100 NVL file (MIT), copied
OURS = ROOT / 'results'                                                           # this project's committed CPU results

@pytest.fixture(scope='module')
def site(tmp_path_factory):
    "The page built from the seed tool's GPU file and this project's CPU results, served on loopback."
    out = tmp_path_factory.mktemp('globe')
    globe([str(SEED), str(OURS)], str(out))
    with static_server(out) as url: yield url, out

def open_page(browser, url):
    "Load `url` with every request off the loopback blocked; returns the page and a list that collects every problem."
    page = browser.new_page(viewport={'width': 1300, 'height': 1000})
    problems = []
    def gate(route):
        host = urlsplit(route.request.url).hostname
        if route.request.url.startswith('data:') or host == '127.0.0.1': route.continue_()
        else: problems.append(f"blocked request off the machine: {route.request.url}"); route.abort()
    page.route('**/*', gate)
    page.on('console', lambda m: problems.append(f"console {m.type}: {m.text}") if m.type in ('error', 'warning') else None)
    page.on('pageerror', lambda e: problems.append(f"page error: {e}"))
    page.on('requestfailed', lambda r: problems.append(f"request failed: {r.url}"))
    page.on('response', lambda r: problems.append(f"HTTP {r.status}: {r.url}") if r.status >= 400 else None)
    assert page.goto(f"{url}/index.html", wait_until='load').status == 200
    page.wait_for_function("window.globeRace && window.globeRace.cells() > 0")
    return page, problems

def python_best(csv, model, channels, size):
    "img/s and its CI of the fastest variant of `model` at channels x size in a results CSV, computed here with pandas alone."
    df = pd.read_csv(csv)
    if 'status' in df: df = df[df.status.eq('ok')]
    if 'mode' in df: df = df[df['mode'].eq('inference')]
    d = df[df.model_name.eq(model) & df.input_channels.eq(channels) & df.input_size.eq(size)]
    d = d[pd.to_numeric(d.throughput_mean, errors='coerce').notna()]
    r = d.loc[pd.to_numeric(d.throughput_mean).idxmax()]
    lo, hi = (r.get('throughput_ci_low'), r.get('throughput_ci_high'))
    return float(r.throughput_mean), (None if lo is None or pd.isna(lo) else float(lo)), (None if hi is None or pd.isna(hi) else float(hi))

def shown(v:float, digits:int=3)->str:
    "A figure as the page prints it: 3 significant digits, thousands separated."
    dec = max(0, digits - 1 - math.floor(math.log10(abs(v))))
    return f"{v:,.{dec}f}"

def time_to_map(days:float)->str:
    "A time to map the land as the page says it, worked out here: under 2 days in d/h/min/s, else days."
    if days >= 2: return f"{shown(days)} days"
    s = days * 86400
    d, h, m, sec = int(s // 86400), int(s % 86400 // 3600), int(s % 3600 // 60), int(s % 60)
    return f"{d} d {h} h {m} min" if d else f"{h} h {m} min {sec} s" if h else f"{m} min {sec} s"

def stat(page, lane:int, key:str)->tuple:
    "`(text, value, lo, hi)` of one figure of a lane."
    dd = page.locator(f"#lane-{lane} dd[data-key={key}]")
    num = lambda a: None if a in (None, '', 'null') else float(a)
    return dd.inner_text(), num(dd.get_attribute('data-value')), num(dd.get_attribute('data-lo')), num(dd.get_attribute('data-hi'))

def test_two_models_race_shows_the_figures_python_computes(site, browser, tmp_path):
    url, out = site
    page, problems = open_page(browser, url)
    page.select_option('#race-kind', 'models')
    page.select_option('#lane-0 .pick-device', 'H100 NVL')
    page.select_option('#lane-0 .pick-model', 'resnet50 @ 3x224px')
    page.select_option('#lane-1 .pick-model', 'galileo_nano')
    page.select_option('#race-gsd', '30')
    for lane, (model, c, size) in enumerate([('resnet50', 3, 224), ('galileo_nano', 10, 64)]):
        img_s, _, _ = python_best(SEED, model, c, size)
        km2s = img_s * (size * 30) ** 2 / 1e6           # each model credited with its own tile: 224 px and 64 px
        days = EARTH_LAND_KM2 / km2s / 86400
        text, v, lo, hi = stat(page, lane, 'km2s')
        assert v == pytest.approx(km2s, rel=1e-12) and f"{shown(km2s)} km²/s" in text and 'no CI' in text, (text, km2s)
        text, v, _, _ = stat(page, lane, 'days')
        assert v == pytest.approx(days, rel=1e-12) and time_to_map(days) in text, (text, days)
    # advance the race by ten simulated seconds: each lane has covered its rate times ten seconds
    page.evaluate("globeRace.advance(10)")
    state = page.evaluate("globeRace.state()")
    for s in state['lanes']:
        assert s['fraction'] == pytest.approx(min(1, s["km2s"] * 10 / EARTH_LAND_KM2), rel=1e-12)
    assert 0 < state['lanes'][1]['fraction'] < state['lanes'][0]['fraction'] < 1
    # Start runs the clock in real time at the chosen speed
    page.click('#race-start'); page.wait_for_timeout(600)
    assert page.evaluate("globeRace.state()")['elapsed'] > 10 and page.inner_text('#race-start') == 'Pause'
    page.click('#race-start')
    # the globe is drawn: a share of the canvas is the lane's colour, mid-race
    lit = page.evaluate("""() => { const c = document.querySelector('#lane-1 canvas'), d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
                                     let n = 0; for (let i = 0; i < d.length; i += 4) if (Math.abs(d[i] - 46) < 30 && Math.abs(d[i+1] - 125) < 30 && d[i+2] > 180) n++; return n; }""")
    assert lit > 100, lit
    page.screenshot(path=str(tmp_path / 'globe_mid_race.png'))  # an artefact of the run, not committed
    assert (tmp_path / 'globe_mid_race.png').stat().st_size > 10_000
    assert not problems, problems

def test_device_race_carries_the_interval(site, browser):
    "One model on two devices: the CPU lane's km²/s and finish time carry the 95% CI of its img/s; the seed tool's lane has none."
    url, out = site
    page, problems = open_page(browser, url)
    page.select_option('#race-kind', 'devices')
    page.select_option('#lane-0 .pick-device', 'H100 NVL')
    page.select_option('#lane-1 .pick-device', 'Xeon')
    page.select_option('#lane-0 .pick-model', 'resnet18 @ 3x224px')
    assert page.input_value('#lane-1 .pick-model') == 'resnet18 @ 3x224px'
    ours = OURS / 'cpu_intel_xeon_processor.csv'  # the Xeon's file (results/ holds more than one device)
    img_s, lo, hi = python_best(ours, 'resnet18', 3, 224)
    a = (224 * 10) ** 2 / 1e6
    text, v, vlo, vhi = stat(page, 1, 'km2s')
    assert (v, vlo, vhi) == pytest.approx((img_s * a, lo * a, hi * a), rel=1e-12) and '95% CI' in text
    text, v, dlo, dhi = stat(page, 1, 'days')
    assert (dlo, dhi) == pytest.approx((EARTH_LAND_KM2 / (hi * a) / 86400, EARTH_LAND_KM2 / (lo * a) / 86400), rel=1e-12)
    assert dlo <= v <= dhi and f"95% CI {time_to_map(dlo)} – {time_to_map(dhi)}" in text, text
    assert 'no CI' in stat(page, 0, 'km2s')[0]
    assert not problems, problems

def test_explore_list_and_about(site, browser):
    url, out = site
    page, problems = open_page(browser, url)
    page.click('#tabs button[data-view=explore]')
    page.select_option('#ex-device', 'Xeon')
    n_models = page.evaluate("new Set(GLOBE_DATA.rows.filter(r => r.device === 'Xeon' && r.mode === 'inference' && r.native).map(r => r.label)).size")
    assert page.locator('#ex-chart g.points circle').count() == n_models > 5
    page.select_option('#ex-kind', 'speedup')
    assert page.locator('#ex-chart rect').count() > 5
    # List: every device's best row per model, sorted by a column on a click
    page.click('#tabs button[data-view=list]')
    page.click('#ls-table th[data-key=params_M]')
    vals = [float(v) for v in page.eval_on_selector_all('#ls-table td[data-key=params_M]', 'els => els.map(e => e.dataset.value)') if v]
    assert len(vals) > 20 and vals == sorted(vals, reverse=True)
    page.click('#ls-table th[data-key=params_M]')
    vals = [float(v) for v in page.eval_on_selector_all('#ls-table td[data-key=params_M]', 'els => els.map(e => e.dataset.value)') if v]
    assert vals == sorted(vals)
    half = [float(v) for v in page.eval_on_selector_all('#ls-table td[data-key=ci]', 'els => els.map(e => e.dataset.value)') if v]
    assert half and min(half) >= 0, half   # an open interval (no upper end) shows no ±, not a negative one
    page.click('#ls-table th[data-key=display]')
    names = page.eval_on_selector_all('#ls-table td[data-key=display]', 'els => els.map(e => e.textContent.replace(" ⚠", ""))')
    assert names == sorted(names, key=lambda s: s.lower()) or names == sorted(names)
    page.click('#tabs button[data-view=about]')
    assert 'ISC' in page.inner_text('#view-about') and 'nvidia_h100_nvl.csv' in page.inner_text('#about-files')
    assert not problems, problems

def test_the_page_says_what_is_missing(tmp_path, browser):
    "A device whose rows all failed is named on the page, not silently dropped."
    failed = tmp_path / 'data' / 'cpu_failed.csv'; failed.parent.mkdir()
    failed.write_text('model_name,gpu_name,status,error,throughput_mean,precision,compile_mode,input_channels,input_size,batch_size\n'
                      'resnet18,Failing CPU,oom,out of memory,,fp32,none,3,224,8\nvit_tiny_patch16_224,Failing CPU,error,boom,,fp32,none,3,224,8\n')
    out = tmp_path / 'site'
    globe([str(SEED), str(failed)], str(out))
    page = browser.new_page()
    page.route('**/*', lambda r: r.continue_() if r.request.url.startswith('file:') else r.abort())
    page.goto(out.joinpath('index.html').as_uri())  # the page also opens from disk
    page.wait_for_function("window.globeRace && window.globeRace.cells() > 0")
    assert 'cpu_failed.csv: Failing CPU has no measured rows (1 oom, 1 error)' in page.inner_text('#notes')
    assert page.locator('#lane-0 dd[data-key=km2s]').count() == 1

@pytest.mark.parametrize('setup,msg', [
    (lambda d: None, 'no results files'),
    (lambda d: (d / 'empty.csv').write_text('model_name,status,throughput_mean\n'), 'nothing to draw'),
    (lambda d: (d / 'cpu.csv').write_text('model_name,gpu_name,status,error,throughput_mean\nresnet18,X CPU,oom,out of memory,\n'), 'X CPU has no measured rows'),
])
def test_globe_with_nothing_to_draw_is_one_line_and_exit_2(tmp_path, setup, msg, cli):
    d = tmp_path / 'in'; d.mkdir(); setup(d)
    r = cli('globe', str(d), '-o', str(tmp_path / 'site'), cwd=tmp_path)
    assert r.returncode == 2 and r.stderr.count('\n') == 1 and msg in r.stderr, r.stderr
    assert not (tmp_path / 'site').exists()

def test_strings_from_a_results_file_are_text_never_markup(tmp_path, browser):
    "A contributed file whose names carry script: the page shows them as text and runs none of it, in every view."
    df = pd.read_csv(OURS / 'cpu_intel_xeon_processor.csv', dtype=str, keep_default_na=False)
    df = df[df.status.eq('ok') & df['mode'].eq('inference')].head(2).copy()
    evil_model, evil_gpu = '<img src=x onerror="window.__pwned=1">', '<svg onload="window.__pwned=2">'
    df['model_name'] = [evil_model, 'resnet18']; df['display_name'] = [evil_model, 'ResNet-18']
    df['gpu_name'] = evil_gpu; df['model_family'] = '<b onmouseover="window.__pwned=3">fam</b>'
    df.to_csv(tmp_path / 'evil.csv', index=False)
    out = tmp_path / 'site'; globe([str(tmp_path / 'evil.csv')], str(out))
    with static_server(out) as url:
        page, problems = open_page(browser, url)
        page.select_option('#race-kind', 'models')
        page.select_option('#lane-0 .pick-model', index=0); page.select_option('#lane-1 .pick-model', index=1)
        page.click('#race-start'); page.wait_for_timeout(300)
        assert evil_model in page.locator('#lane-0').inner_text() or evil_model in page.locator('#lane-1').inner_text()
        for view in ('explore', 'list', 'race'): page.click(f'#tabs button[data-view={view}]'); page.wait_for_timeout(200)
        assert evil_gpu in page.locator('#view-race').inner_text() or evil_gpu in page.content().replace('&lt;', '<').replace('&gt;', '>')
        assert page.evaluate("window.__pwned") is None
        assert page.locator('#ls-table img, #lanes img, svg[onload], b[onmouseover]').count() == 0
        page.close()
    assert not [p for p in problems if 'page error' in p], problems

def test_a_mapping_run_races_end_to_end_against_the_model_alone(tmp_path, browser):
    "A `tbench map` row is two lanes: the pipeline's km²/s and the model's alone, each scaled to the picked GSD by (gsd / the raster's GSD)²."
    from throughput_bench.result import BenchResult
    from throughput_bench.analyse.store import ResultStore
    evil = '<img src=x onerror="window.__pwned=3">.tif'
    r = BenchResult(model_name='resnet18', display_name='ResNet-18', mode='mapping', precision='fp32', gpu_name='Test CPU', device='cpu', device_type='cpu',
                    batch_size=16, input_channels=10, input_size=224, throughput_mean=20.0, throughput_ci_low=18.0, throughput_ci_high=22.0,
                    km2_per_sec=2.0, km2_per_sec_ci_low=1.5, km2_per_sec_ci_high=2.5, model_km2_per_sec=3.0, model_throughput=30.0,
                    pipeline_share=2 / 3, gsd_m=10.0, overlap=0.5, raster_file=evil, bound_stage='model', tiles=100, area_km2=10.0,
                    map_options=f"overlap=0.5 workers=2 prefetch=2 raster={evil}")
    ResultStore(tmp_path / 'results', 'cpu_test', 'Test CPU').append(r)
    globe([str(tmp_path / 'results')], str(tmp_path / 'site'))
    with static_server(tmp_path / 'site') as url:
        page, problems = open_page(browser, url)
        page.select_option('#race-mode', 'mapping')
        page.select_option('#race-kind', 'models')
        page.select_option('#lane-0 .pick-model', 'resnet18 · end to end')
        page.select_option('#lane-1 .pick-model', 'resnet18 · model alone')
        for gsd in ('10', '30'):
            page.select_option('#race-gsd', gsd)
            f = (float(gsd) / 10) ** 2
            text, v, lo, hi = stat(page, 0, 'km2s')
            assert v == pytest.approx(2.0 * f) and lo == pytest.approx(1.5 * f) and hi == pytest.approx(2.5 * f), text
            text, v, lo, hi = stat(page, 1, 'km2s')
            assert v == pytest.approx(3.0 * f) and lo is None and 'no CI' in text, text
        assert 'end to end' in page.locator('#lane-0').inner_text() and evil in page.locator('#lane-0').inner_text()  # shown as text
        assert page.evaluate("window.__pwned === undefined")
        assert not problems, problems

@pytest.mark.parametrize('width', [1400, 390])
def test_every_view_fits_the_width_and_the_race_has_one_track(site, browser, width):
    "No sideways scroll at a desktop's or a phone's width; both lanes on one track with the finish line; the precision picker races that precision; family colours and device lists follow the data."
    url, _ = site
    page, problems = open_page(browser, url)
    page.set_viewport_size({'width': width, 'height': 900})
    fits = lambda: page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    assert fits()
    page.evaluate("globeRace.advance(3600)")
    bars = page.locator('#race-track .track-bar')
    assert bars.count() == 2
    lanes = page.evaluate("globeRace.state().lanes")
    for i in range(2): assert float(bars.nth(i).get_attribute('data-fraction')) == pytest.approx(lanes[i]['fraction'])
    assert 'sooner' in page.locator('#race-lead').inner_text() or 'Level' in page.locator('#race-lead').inner_text()
    page.select_option('#race-precision', 'fp32')
    assert all(l['variant'].startswith('fp32') for l in page.evaluate("globeRace.state().lanes") if l)
    for view in ('explore', 'list', 'about'):
        page.click(f"#tabs button[data-view={view}]")
        assert fits(), view
    # the List scrolls in its own box, and a mode lists only the devices with rows in it
    assert page.evaluate("getComputedStyle(document.querySelector('.table-box')).overflow") == 'auto'
    page.click("#tabs button[data-view=explore]")
    page.select_option('#ex-mode', 'training')
    offered = page.eval_on_selector_all('#ex-device option', "os => os.map(o => o.value)")
    assert offered == ['H200', 'Xeon'], offered  # the seed tool's H100 file has no training rows; the H200's has two
    page.select_option('#ex-mode', 'inference')
    colour = {}
    for dev in page.eval_on_selector_all('#ex-device option', "os => os.map(o => o.value)"):
        page.select_option('#ex-device', dev)
        for fam, fill in page.eval_on_selector_all('#ex-chart .legend circle', "cs => cs.map(c => [c.nextSibling.textContent, c.getAttribute('fill')])"):
            assert colour.setdefault(fam, fill) == fill, (fam, dev)  # one colour per family on every device
    assert len(colour) > 3
    assert not problems, problems

def test_explore_and_list_read_on_a_phone(site, browser):
    "At 390 px the Explore chart was a 900 px drawing scaled to 4 px text and the List showed no figure without scrolling."
    url, out = site
    page = browser.new_page(viewport={'width': 390, 'height': 800})
    page.goto(url)
    page.click('#tabs button[data-view=explore]'); page.select_option('#ex-device', 'Xeon')
    svg = page.eval_on_selector('#ex-chart svg', 'e => [e.getBoundingClientRect().width, +e.getAttribute("width")]')
    assert svg[0] <= 390 and svg[0] == pytest.approx(svg[1], abs=3)  # drawn at its width: text at its own size
    fills = set(page.eval_on_selector_all('#ex-chart g.points circle', 'els => els.map(e => e.getAttribute("fill"))'))
    assert 1 <= len(fills) <= 5  # one colour per kind of model, not one per family
    page.click('#tabs button[data-view=list]')
    heads = page.eval_on_selector_all('#ls-table th', 'els => els.map(e => [e.dataset.key, e.getBoundingClientRect().right])')
    right = dict(heads)
    assert right['img_s'] <= 390 and [k for k, _ in heads][:3] == ['display', 'img_s', 'ci']
    cis = page.eval_on_selector_all('#ls-table td[data-key=ci]', 'els => els.map(e => e.textContent)')
    assert any('%' in c for c in cis) and any(c == 'no CI' for c in cis), cis  # ours have an interval, the seed tool's none
    days = page.eval_on_selector_all('#ls-table td[data-key=days]', 'els => els.map(e => e.textContent)')
    assert not any(re.match(r'0\.0', d) for d in days), days  # "4 min 16 s", not "0.00297 days"
