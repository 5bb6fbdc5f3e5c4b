"The offline docs site in headless Chromium: pages load from a plain static server, charts render, no console errors."
from pathlib import Path
import pytest
from conftest import need, static_server  # the `browser` fixture is in conftest.py

pytestmark = pytest.mark.slow  # servers, browsers, launches: the full run, not the fast tier

ROOT = Path(__file__).resolve().parents[1]
SITE = ROOT / '_site'

@pytest.fixture(scope='module')
def server():
    need((SITE / 'index.html').exists(), 'no _site: run python tools/build_docs.py first')
    with static_server(SITE) as url: yield url

def visit(browser, url):
    "Open `url`; return the page and every console error, page error and failed request."
    page = browser.new_page()
    problems = []
    page.on('console', lambda m: problems.append(f"console {m.type}: {m.text}") if m.type == 'error' else None)
    page.on('pageerror', lambda e: problems.append(f"page error: {e}"))
    page.on('requestfailed', lambda r: problems.append(f"request failed: {r.url}"))
    page.on('response', lambda r: problems.append(f"HTTP {r.status}: {r.url}") if r.status >= 400 else None)
    resp = page.goto(url, wait_until='load')
    assert resp.status == 200, url
    return page, problems

def test_home_page(server, browser):
    page, problems = visit(browser, f"{server}/index.html")
    assert 'throughput_bench' in page.title() + page.inner_text('body')
    assert 'tbench infer' in page.inner_text('body')
    links = page.eval_on_selector_all('nav a', 'els => els.map(e => e.getAttribute("href"))')
    assert {'core.html', 'results.html', 'timing.html'} <= set(links)
    assert not problems, problems

def test_home_page_runs_the_python_example(server, browser):
    "The home page (the README) shows the Python example with its real output: the rows table and a chart."
    page, problems = visit(browser, f"{server}/index.html")
    text = page.inner_text('body')
    assert 'from throughput_bench import infer' in text and 'throughput_repeats' in text and 'measured' in text
    assert 'resnet18' in text and 'vit_tiny_patch16_224' in text
    sizes = page.eval_on_selector_all('img', 'els => els.map(e => [e.naturalWidth, e.naturalHeight])')
    assert any(w > 200 and h > 80 for w, h in sizes), sizes
    assert not problems, problems
    page, problems = visit(browser, f"{server}/api.html")
    text = page.inner_text('body')
    assert 'infer' in text and 'repeats' in text and 'worker processes per configuration' in text
    assert not problems, problems

def test_api_page(server, browser):
    page, problems = visit(browser, f"{server}/core.html")
    text = page.inner_text('body')
    assert 'BenchSpec' in text and 'BenchResult' in text and '#| export' not in text
    assert not problems, problems

def test_results_page_charts(server, browser):
    page, problems = visit(browser, f"{server}/results.html")
    sizes = page.eval_on_selector_all('img', 'els => els.map(e => [e.naturalWidth, e.naturalHeight])')
    assert len(sizes) >= 5, sizes                      # throughput, speed-up, coverage, geo-compare, MFU at least
    assert all(w > 100 and h > 100 for w, h in sizes), sizes
    text = page.inner_text('body')
    assert 'Every measured configuration' in text and 'img/s' in text
    assert 'Geospatial encoders against timm baselines' in text and 'olmoearth_large' in text
    assert not problems, problems

def test_geo_page(server, browser):
    page, problems = visit(browser, f"{server}/geo.html")
    text = page.inner_text('body')
    assert 'OlmoEarthEncoder' in text and 'Not available: SenPaMAE' in text and 'olmoearth-pretrain-minimal' in text
    assert not problems, problems

def test_globe_race_is_published_with_the_results(server, browser):
    "The results page links the Globe Race page, which loads from the site with every request on the loopback and races the committed rows."
    page, problems = visit(browser, f"{server}/results.html")
    assert page.locator('a[href="globe/index.html"]').count() >= 1
    page.click('main a[href="globe/index.html"], #notebook a[href="globe/index.html"], .jp-RenderedMarkdown a[href="globe/index.html"]')
    page.wait_for_function("window.globeRace && window.globeRace.cells() > 0")
    assert page.url.endswith('/globe/index.html')
    lanes = page.evaluate("globeRace.state()")['lanes']
    assert all(l and l['km2s'] > 0 and l['device'] == 'Xeon' for l in lanes), lanes
    assert not [p for p in problems if 'favicon' not in p], problems
