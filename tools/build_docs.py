"""Render the docs site offline: execute every notebook in nbs/ and write static HTML to _site/.

Quarto (what `nbdev_docs` uses) cannot be installed everywhere; this renders the same notebooks with
nbconvert (execution by nbclient, HTML by nbconvert's lab template, minus its CDN scripts), hides
the cells nbdev hides (`#| hide`, `#| default_exp`), strips nbdev directives, and adds a navigation bar.
The result needs no network: serve it with `python -m http.server -d _site`.

    python tools/build_docs.py [--out _site] [--no-execute]
"""
import argparse, html, re, shutil, sys
from pathlib import Path
import nbformat
from nbclient import NotebookClient
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

def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--out', default=str(ROOT / '_site')); ap.add_argument('--no-execute', action='store_true')
    ap.add_argument('--timeout', type=int, default=900)
    a = ap.parse_args()
    out = Path(a.out)
    if out.exists(): shutil.rmtree(out)
    out.mkdir(parents=True)
    paths = sorted(NBS.glob('*.ipynb'), key=lambda p: (p.stem != 'index', p.stem))
    nbs = {p: nbformat.read(p, as_version=4) for p in paths}
    pages = [(page_name(p), title_of(nb, p.stem)) for p, nb in nbs.items()]
    exporter = HTMLExporter(extra_template_basedirs=[str(TEMPLATE.parent)], template_name=TEMPLATE.name, embed_images=True)
    for p, nb in nbs.items():
        name = page_name(p)
        if not a.no_execute:
            NotebookClient(nb, timeout=a.timeout, kernel_name='python3', resources={'metadata': {'path': str(NBS)}}).execute()
        nav = '<a class="brand" href="index.html">throughput_bench</a>' + ''.join(
            f'<a href="{n}"{" class=current" if n == name else ""}>{html.escape(t)}</a>' for n, t in pages if n != 'index.html') + \
            '<a href="globe/index.html">Globe Race</a>'
        body, _ = exporter.from_notebook_node(prepare(nb), resources={'tb_nav': nav, 'metadata': {'name': title_of(nb, p.stem)}})
        (out / name).write_text(body)
        print(f"{p.name} -> {out / name}", flush=True)
    for extra in (NBS / 'styles.css',):
        if extra.exists(): shutil.copy(extra, out / extra.name)
    if (NBS / 'globe' / 'index.html').exists():  # the Globe Race page the results notebook wrote
        shutil.copytree(NBS / 'globe', out / 'globe')
        print(f"globe -> {out / 'globe'}")
    print(f"site: {out} ({len(pages)} pages)")

if __name__ == '__main__': main()
