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
    links = page.eval_on_selector_all('#tb-side a', 'els => els.map(e => e.getAttribute("href"))')
    assert {'core.html', 'results.html', 'measure_timing.html'} <= set(links)
    assert not problems, problems

def test_home_page_runs_the_python_example(server, browser):
    "The home page (the README) shows the Python example with its real output: the rows table and a chart."
    page, problems = visit(browser, f"{server}/index.html")
    text = page.inner_text('body')
    assert 'from throughput_bench import infer' in text and 'resnet18' in text and 'vit_tiny_patch16_224' in text
    bars = page.eval_on_selector_all('.tb-progress progress', 'els => els.map(e => [e.value, e.max])')
    if "This example's output is not shown: the machine that built this page was busy" in text:
        # built on a busy host (a CI machine beside other work): no figure of the example, only the note saying why
        assert not bars, bars
    else:
        assert '95% CI' in text and 'processes' in text and 'measured' in text
        # the progress widget, in its final state (drawn from the saved widget state, no widget JavaScript)
        assert bars and all(v == m for v, m in bars), bars
        sizes = page.eval_on_selector_all('img', 'els => els.map(e => [e.naturalWidth, e.naturalHeight])')
        assert any(w > 200 and h > 80 for w, h in sizes), sizes
    assert not problems, problems
    page, problems = visit(browser, f"{server}/api.html")
    assert 'infer' in page.inner_text('body') and not problems, problems
    page, problems = visit(browser, f"{server}/scale_launch.html")  # the sweep's defaults, printed from the code
    text = page.inner_text('body')
    assert 'repeats' in text and 'worker processes per configuration' in text
    assert not problems, problems

def test_api_page(server, browser):
    page, problems = visit(browser, f"{server}/core.html")
    text = page.inner_text('body')
    assert 'BenchSpec' in text and 'BenchResult' in text and '#| export' not in text
    assert not problems, problems
    # nbdev's processing: an exported cell shows its signature and docments (show_doc), not its source
    page, problems = visit(browser, f"{server}/studies_mapping.html")
    text = page.inner_text('main')
    assert 'def tile_offsets(' in text and "share of a tile its neighbour also covers" in text
    assert 'stride = max(1' not in text and 'offs.append' not in text  # the body stays in the package
    assert not problems, problems

PAGES = ('index.html', 'api.html', 'cli.html', 'studies_mapping.html', 'results.html', 'analyse_charts.html')

@pytest.mark.parametrize('width', [1400, 390])
def test_every_page_fits_and_every_nav_link_is_visible_and_clickable(server, browser, width):
    page = browser.new_page(viewport={'width': width, 'height': 900})
    for name in PAGES:
        assert page.goto(f"{server}/{name}").status == 200
        assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth"), (name, width)  # no sideways scroll
    page.goto(f"{server}/index.html")
    if width < 800: page.click('#tb-menu')  # a phone: the sidebar is behind the menu button
    links = page.locator('#tb-side a')
    assert links.count() >= 30
    hrefs = [links.nth(i).get_attribute('href') for i in range(links.count())]
    for i in range(links.count()): assert links.nth(i).is_visible(), hrefs[i]
    for sec in ('Measure', 'Serve', 'Scale', 'Analyse', 'Reference'): assert page.locator('#tb-side h2', has_text=sec).count() == 1
    links.filter(has_text='mapping').first.click()
    page.wait_for_url('**/studies_mapping.html')
    if width >= 1200: assert page.locator('#tb-toc a').count() > 5  # the page's contents beside it

def test_search_works_offline(server, browser):
    page = browser.new_page()
    page.goto(f"{server}/cli.html")
    for query, want in (('compare', 'studies_compare.html'), ('tbench map', 'studies_mapping.html'), ('successive halving', 'studies_tune.html')):
        page.fill('#tb-search', query)
        hrefs = page.eval_on_selector_all('#tb-results a', 'els => els.map(e => e.getAttribute("href"))')
        assert want in [h.split('#')[0] for h in hrefs[:3]], (query, hrefs)  # the page, or a section of it
    # a section: its heading's anchor, and Enter lands on it
    page.fill('#tb-search', 'default_batch')
    hrefs = page.eval_on_selector_all('#tb-results a', 'els => els.map(e => e.getAttribute("href"))')
    assert hrefs[0] == 'scale_launch.html#default_batch', hrefs
    page.press('#tb-search', 'Enter'); page.wait_for_url('**/scale_launch.html#default_batch')
    page.goto(f"{server}/cli.html")
    page.fill('#tb-search', 'zzqxv nothing')
    assert 'Nothing found' in page.inner_text('#tb-results')
    page.fill('#tb-search', 'compare'); page.press('#tb-search', 'Enter')
    page.wait_for_url('**/studies_compare.html')
    # on a phone the box has a row of its own: its placeholder was cut to "Search th" at 390 px
    phone = browser.new_page(viewport={'width': 390, 'height': 800})
    phone.goto(f"{server}/cli.html")
    box = phone.eval_on_selector('#tb-search', 'e => e.getBoundingClientRect().width')
    assert box > 300, box

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
    page, problems = visit(browser, f"{server}/backbones_geo.html")
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
    devices = {'Xeon', 'AMD EPYC', 'H200'}  # the committed results' devices: a race of two models on one of them
    assert all(l and l['km2s'] > 0 and l['device'] in devices for l in lanes) and lanes[0]['device'] == lanes[1]['device'], lanes
    assert not [p for p in problems if 'favicon' not in p], problems

def test_publish_refuses_an_example_measured_on_a_busy_host():
    "`build_docs.py --publish` reads the home example's own verdict (a hidden cell prints `TB_EXAMPLE: ...`)."
    import importlib.util, nbformat
    spec = importlib.util.spec_from_file_location('build_docs', ROOT / 'tools' / 'build_docs.py')
    bd = importlib.util.module_from_spec(spec); spec.loader.exec_module(bd)
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell('x')])
    out = lambda t: [nbformat.v4.new_output('stream', name='stdout', text=t)]
    nb.cells[0].outputs = out('TB_EXAMPLE: ok\n')
    assert bd.busy_example(nb) == ''
    nb.cells[0].outputs = out('TB_EXAMPLE: resnet18: measured on a busy host\n')
    assert bd.busy_example(nb) == 'resnet18: measured on a busy host'
    home = nbformat.read(ROOT / 'nbs' / 'index.ipynb', as_version=4)  # the home notebook carries the check that prints it
    assert any('TB_EXAMPLE' in c.source and c.source.startswith('#| hide') for c in home.cells)

def test_a_busy_home_example_is_withheld_not_shown():
    "A site built on a busy host (CI) shows no figure rather than intervals like 0.0–100.3: the outputs become a note."
    import importlib.util, nbformat
    spec = importlib.util.spec_from_file_location('build_docs', ROOT / 'tools' / 'build_docs.py')
    bd = importlib.util.module_from_spec(spec); spec.loader.exec_module(bd)
    out = lambda t: [nbformat.v4.new_output('stream', name='stdout', text=t)]
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell('df = infer(...)'), nbformat.v4.new_code_cell('#| hide\ncheck'),
                                         nbformat.v4.new_code_cell('plot(df)'), nbformat.v4.new_markdown_cell('text')])
    nb.cells[0].outputs = out('resnet18  10.7 [0.0–28.4]\n')
    nb.cells[1].outputs = out('TB_EXAMPLE: resnet18: measured on a busy host\n')
    nb.cells[2].outputs = [nbformat.v4.new_output('display_data', data={'image/png': 'iVBOR'})]
    why = bd.busy_example(nb)
    bd.withhold_example(nb, why)
    for c in (nb.cells[0], nb.cells[2]):
        assert len(c.outputs) == 1 and 'not shown' in c.outputs[0].text and why in c.outputs[0].text
    assert '0.0–28.4' not in str(nb) and bd.busy_example(nb) == why  # the hidden verdict stays for --publish
