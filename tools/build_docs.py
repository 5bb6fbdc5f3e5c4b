"""Render the docs site offline: execute every notebook in nbs/ once and write static HTML to _site/.

Quarto (what `nbdev_docs` uses) cannot be installed everywhere; this renders the same notebooks with
nbconvert (execution by nbclient, HTML by nbconvert's lab template, minus its CDN scripts), hides
the cells nbdev hides (`#| hide`, `#| default_exp`), skips those it does not run (`#| eval: false`),
strips nbdev directives, and adds a navigation bar. The result needs no network: serve it with
`python -m http.server -d _site`.

Executing a notebook is also its test: a cell that raises fails the build (exit 1, naming the
notebook and the cell), as `nbdev_test` would, so CI runs each notebook once, here, not twice.

    python tools/build_docs.py [--out _site] [--no-execute] [--jobs 2]
"""
import argparse, html, re, shutil, sys, time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError
from nbconvert import HTMLExporter

ROOT = Path(__file__).resolve().parents[1]
NBS = ROOT / 'nbs'
TEMPLATE = Path(__file__).resolve().parent / 'site_template'

def directives(src:str)->set:
    "The nbdev directives (`#| hide`, `#| export`, ...) at the top of a code cell."
    return {m.group(1) for m in re.finditer(r'^#\|\s*(\w+)', src, re.M)}

def prepare(nb):
    "Drop hidden cells and directive lines, as nbdev's docs do."
    keep = []
    for c in nb.cells:
        if c.cell_type == 'code':
            d = directives(c.source)
            if d & {'hide', 'default_exp'}: continue
            c.source = re.sub(r'^#\|.*\n?', '', c.source, flags=re.M)
        keep.append(c)
    nb.cells = keep
    return nb

def title_of(nb, fallback:str)->str:
    for c in nb.cells:
        if c.cell_type == 'markdown':
            m = re.search(r'^#\s+(.+)$', c.source, re.M)
            if m: return m.group(1).strip()
    return fallback

def page_name(p:Path)->str: return 'index.html' if p.stem == 'index' else re.sub(r'^\d+[a-z]?_', '', p.stem) + '.html'

def skip_unevaluated(nb):
    "Cells marked `#| eval: false` are shown, not run (as nbdev and Quarto do): tagged for nbclient to skip."
    for c in nb.cells:
        if c.cell_type == 'code' and re.search(r'^#\|\s*eval:\s*false', c.source, re.M):
            c.metadata.setdefault('tags', []).append('skip-execution')
    return nb

def execute(p:Path, nb, timeout:int):
    "Run `nb` in a fresh kernel in nbs/; `(seconds, None)` or `(seconds, the error's text)`."
    t0 = time.monotonic()
    try:
        NotebookClient(skip_unevaluated(nb), timeout=timeout, kernel_name='python3', skip_cells_with_tag='skip-execution',
                       resources={'metadata': {'path': str(NBS)}}).execute()
        return time.monotonic() - t0, None
    except CellExecutionError as e: return time.monotonic() - t0, str(e)
    except Exception as e: return time.monotonic() - t0, f"{type(e).__name__}: {e}"

def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--out', default=str(ROOT / '_site')); ap.add_argument('--no-execute', action='store_true')
    ap.add_argument('--timeout', type=int, default=900, help="seconds a cell may run")
    ap.add_argument('--jobs', type=int, default=1, help="notebooks executed at once (each in its own kernel)")
    a = ap.parse_args()
    out = Path(a.out)
    if out.exists(): shutil.rmtree(out)
    out.mkdir(parents=True)
    paths = sorted(NBS.glob('*.ipynb'), key=lambda p: (p.stem != 'index', p.stem))
    nbs = {p: nbformat.read(p, as_version=4) for p in paths}
    pages = [(page_name(p), title_of(nb, p.stem)) for p, nb in nbs.items()]
    failed = []
    if not a.no_execute:
        # the results notebook writes the Globe Race page the site links to; the longest notebooks start first
        order = sorted(paths, key=lambda p: -p.stat().st_size)
        with ThreadPoolExecutor(max(1, a.jobs)) as ex:
            for p, (sec, err) in zip(order, ex.map(lambda p: execute(p, nbs[p], a.timeout), order)):
                print(f"{p.name}: {'ok' if err is None else 'FAILED'} ({sec:.0f} s)", flush=True)
                if err is not None: failed.append((p, err))
    exporter = HTMLExporter(extra_template_basedirs=[str(TEMPLATE.parent)], template_name=TEMPLATE.name, embed_images=True)
    for p, nb in nbs.items():
        name = page_name(p)
        nav = '<a class="brand" href="index.html">throughput_bench</a>' + ''.join(
            f'<a href="{n}"{" class=current" if n == name else ""}>{html.escape(t)}</a>' for n, t in pages if n != 'index.html') + \
            '<a href="globe/index.html">Globe Race</a>'
        body, _ = exporter.from_notebook_node(prepare(nb), resources={'tb_nav': nav, 'metadata': {'name': title_of(nb, p.stem)}})
        (out / name).write_text(body)
    for extra in (NBS / 'styles.css',):
        if extra.exists(): shutil.copy(extra, out / extra.name)
    if (NBS / 'globe' / 'index.html').exists():  # the Globe Race page the results notebook wrote
        shutil.copytree(NBS / 'globe', out / 'globe')
    print(f"site: {out} ({len(pages)} pages{', globe' if (out / 'globe').exists() else ''})")
    if failed:
        for p, err in failed: print(f"\n===== {p.name} failed =====\n{err[-3000:]}", file=sys.stderr)
        sys.exit(f"build_docs: {len(failed)} notebook(s) failed: {', '.join(p.name for p, _ in failed)}")

if __name__ == '__main__': main()
