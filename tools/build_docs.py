"""Render the docs site offline: execute every notebook in nbs/ once and write static HTML to _site/.

Quarto (what `nbdev_docs` uses) cannot be installed everywhere; this renders the same notebooks with
nbconvert (execution by nbclient, HTML by nbconvert's lab template, minus its CDN scripts) and does what
nbdev's processing does to them: hides the cells nbdev hides (`#| hide`, `#| default_exp`), skips those it
does not run (`#| eval: false`), strips directives, and shows each exported cell as nbdev's `show_doc` of
what it defines (the signature with its docments), not its source. Each page gets a sidebar grouped by
what a user does, a search box that works offline (an index written as a script), and its table of
contents; a progress widget is shown in its final state. The result needs no network: serve it with
`python -m http.server -d _site` (or open the files).

`--publish` refuses to write a site whose home example ran on a busy host (its rows contended, or an
interval with a zero end): re-run on a quiet machine. Without it (the test), that is a warning.

Executing a notebook is also its test: a cell that raises fails the build (exit 1, naming the
notebook and the cell), as `nbdev_test` would, so CI runs each notebook once, here, not twice.

Where the time goes: the notebooks start longest first (`tools/notebook_seconds.json`, the seconds each took
in the last build; the build writes the new ones to `notebook_seconds.json` in its output, `--save-seconds`
keeps them), each page is rendered as soon as its notebook has run (beside the notebooks still running, not
all at the end), each of the `--jobs` kernels running at once gets its share of the cores (`OMP_NUM_THREADS`; the
home example, alone, all of them), each job keeps its kernel from notebook to notebook, reset between them (names,
environment, working folder), as `nbdev_test`'s worker processes are: Python's start and the imports of torch and
timm once a job, not once a notebook (`--fresh-kernels`: a kernel each), and the build prints how long executing and
rendering took.

    python tools/build_docs.py [--out _site] [--no-execute] [--jobs 2] [--fresh-kernels]
"""
import argparse, ast, html, importlib, inspect, json, os, queue, re, shutil, sys, threading, time
from html.parser import HTMLParser
from pathlib import Path
import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError
from nbconvert import HTMLExporter

ROOT = Path(__file__).resolve().parents[1]
NBS = ROOT / 'nbs'
TEMPLATE = Path(__file__).resolve().parent / 'site_template'
SECONDS = Path(__file__).resolve().parent / 'notebook_seconds.json'  # what each notebook took in the last build

SECTIONS = {  # the sidebar: one section a folder of the package, its pages listed first, then the folder's others
    'Measure': ['measure_inference', 'measure_training', 'measure_timing', 'measure_flops', 'measure_drift'],
    'Studies': ['studies_compare', 'studies_tune', 'studies_mapping'],
    'Runtimes': ['backends_base', 'backends_model', 'backends_pytorch', 'backends_export', 'backends_ort', 'backends_ov',
                 'write_a_backend'],
    'Serve': ['serve_serving', 'serve_loadgen'],
    'Scale': ['scale_sweep', 'scale_launch', 'scale_distributed', 'ddp', 'scale_slurm'],
    'Analyse': ['results', 'analyse_store', 'analyse_charts', 'analyse_timeline', 'analyse_tracking'],
    'Machine': ['machine_devices', 'machine_hardware', 'machine_peaks'],
    'Backbones': ['backbones_registry', 'backbones_geo'],
    'Reference': ['api', 'cli', 'core', 'result', 'options', 'stats', 'text'],
}
FOLDERS = {'measure': 'Measure', 'studies': 'Studies', 'backends': 'Runtimes', 'serve': 'Serve', 'scale': 'Scale',
           'analyse': 'Analyse', 'machine': 'Machine', 'backbones': 'Backbones'}  # a page's folder: its section

def directives(src:str)->set:
    "The nbdev directives (`#| hide`, `#| export`, ...) at the top of a code cell."
    return {m.group(1) for m in re.finditer(r'^#\|\s*(\w+)', src, re.M)}

def patched_class(f:ast.FunctionDef)->str:
    "The class a function decorated with fastcore's `@patch` is a method of (its first parameter's annotation), or ''."
    names = [ast.unparse(d.func if isinstance(d, ast.Call) else d) for d in f.decorator_list]
    args = f.args.posonlyargs + f.args.args
    if 'patch' not in names or not args or args[0].annotation is None: return ''
    a = args[0].annotation
    return a.value if isinstance(a, ast.Constant) else ast.unparse(a)

def defined_names(src:str)->list:
    "The public functions and classes a cell defines (a class with its public methods), in order."
    try: tree = ast.parse(re.sub(r'^#\|.*$', '', src, flags=re.M))
    except SyntaxError: return []
    out = []
    for n in tree.body:
        if isinstance(n, ast.FunctionDef) and (cls := patched_class(n)):  # fastcore's @patch: a method of `cls`
            if not n.name.startswith('_'): out.append((cls, n.name))
            continue
        if isinstance(n, (ast.FunctionDef, ast.ClassDef)) and not n.name.startswith('_'):
            out.append((n.name, None))
            if isinstance(n, ast.ClassDef):
                out += [(n.name, m.name) for m in n.body if isinstance(m, ast.FunctionDef) and not m.name.startswith('_')]
    return out

_findsource, _sources, _sources_lock = inspect.findsource, {}, threading.Lock()

def findsource(obj):
    """`inspect.findsource`, once per object: show_doc's docments asks for the same source many times, and for a class
    Python parses its whole module each time (most of the rendering's time went there)."""
    try: hash(obj)
    except TypeError: return _findsource(obj)
    with _sources_lock: got = _sources.get(obj)
    if got is None:
        got = _findsource(obj)
        with _sources_lock: _sources[obj] = got
    return got[0][:], got[1]

inspect.findsource = findsource

def show_docs(module, src:str)->str:
    "nbdev's `show_doc` (signature and docments, as Markdown) of what an exported cell defines; '' where it defines nothing public."
    from nbdev.showdoc import show_doc
    parts = []
    for name, meth in defined_names(src):
        obj = getattr(module, name, None)
        if obj is not None and meth: obj = getattr(obj, meth, None)
        if obj is None: continue
        try: md = show_doc(obj, title_level=3 if not meth else 4)._repr_markdown_()
        except Exception:  # an annotation that names what the module imports lazily ('torch.Tensor'): the signature as written
            import inspect
            try: sig = str(inspect.signature(obj))
            except (TypeError, ValueError): sig = '(...)'
            head = '#' * (3 if not meth else 4)
            md = f"{head} {name if not meth else f'{name}.{meth}'}\n\n```python\ndef {meth or name}{sig}\n```\n\n*{inspect.getdoc(obj) or ''}*"
        md = re.sub(r'^\[source\]\(.*$\n?', '', md, flags=re.M)  # a Quarto link to GitHub (its line number unknown here)
        parts.append(md.strip())
    return '\n\n'.join(parts)

def prepare(nb):
    "As nbdev's processing does: drop hidden cells and directive lines; an exported cell shows `show_doc` of what it defines, not its source."
    import nbformat.v4 as v4
    exp = next((m.group(1) for c in nb.cells if c.cell_type == 'code' for m in [re.search(r'^#\|\s*default_exp\s+(\S+)', c.source, re.M)] if m), None)
    module = importlib.import_module(f"throughput_bench.{exp}") if exp else None
    keep = []
    for c in nb.cells:
        if c.cell_type == 'code':
            d = directives(c.source)
            if d & {'hide', 'default_exp'}: continue
            if 'export' in d and module is not None:
                md = show_docs(module, c.source)
                if md: keep.append(v4.new_markdown_cell(md))
                continue  # the source is in the package; the page shows what it defines
            if re.search(r'^#\|\s*echo:\s*false', c.source, re.M):  # its output only, as Quarto shows it
                c.metadata['transient'] = {'remove_source': True}
            c.source = re.sub(r'^#\|.*\n?', '', c.source, flags=re.M)
        keep.append(c)
    nb.cells = keep
    return nb

def _text(v:str)->str:
    "Widget HTML (tqdm's) as plain text."
    return html.unescape(re.sub(r'<[^>]*>', '', v or '')).replace('\xa0', ' ').strip()

def static_widgets(nb):
    "A progress bar widget (tqdm in a notebook) becomes its final state, drawn as HTML from the saved widget state: text stays text."
    state = nb.metadata.get('widgets', {}).get('application/vnd.jupyter.widget-state+json', {}).get('state', {})
    for c in nb.cells:
        for o in c.get('outputs', []):
            view = o.get('data', {}).get('application/vnd.jupyter.widget-view+json')
            if not view: continue
            box = state.get(view.get('model_id'), {}).get('state', {})
            kids = [state.get(k.replace('IPY_MODEL_', ''), {}) for k in box.get('children', [])]
            bar = next((k['state'] for k in kids if k.get('model_name') == 'FloatProgressModel'), None)
            texts = [_text(k['state'].get('value', '')) for k in kids if k.get('model_name') == 'HTMLModel']
            if bar is None: continue
            left, right = (texts + ['', ''])[:2]
            o['data'] = {'text/html': f'<div class="tb-progress"><span>{html.escape(left)}</span><progress value="{float(bar.get("value", 0))}" '
                                      f'max="{float(bar.get("max", 1) or 1)}"></progress><span>{html.escape(right)}</span></div>',
                         'text/plain': f"{left} {right}"}
    return nb

def busy_example(nb)->str:
    "What is wrong with the home example's rows ('' if nothing): a hidden cell prints `TB_EXAMPLE:` and what it found."
    for c in nb.cells:
        for o in c.get('outputs', []):
            t = o.get('text', '') if o.get('output_type') == 'stream' else ''
            m = re.search(r'TB_EXAMPLE: (.+)', t)
            if m and m.group(1).strip() != 'ok': return m.group(1).strip()
    return ''

def search_entry(nb, url:str, title:str)->dict:
    "What search looks through on one page: its title, headings and prose (code and outputs left out)."
    heads, text = [], []
    for c in nb.cells:
        if c.cell_type != 'markdown': continue
        for line in c.source.splitlines():
            m = re.match(r'^#{2,4}\s+(.+)', line)
            if m: heads.append(re.sub(r'[`*_]', '', m.group(1)).strip())
            else: text.append(line)
    prose = re.sub(r'\s+', ' ', re.sub(r'[`*_>#|]', ' ', ' '.join(text))).strip()
    summary = next((l[1:].strip() for c in nb.cells if c.cell_type == 'markdown' for l in c.source.splitlines() if l.startswith('>')), prose[:140])
    return dict(url=url, title=title, headings=heads, text=prose[:20000], summary=re.sub(r'[`*]', '', summary)[:200])

class Sections(HTMLParser):
    """The sections of a rendered page, for search to land on the part that matches: each h2-h4 with an id (nbconvert
    and show_doc give every heading one), its text, and the prose under it up to the next heading (code left out)."""
    HEADS, SKIP = ('h2', 'h3', 'h4'), ('pre', 'script', 'style', 'nav', 'header', 'aside')

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.sections, self.in_main, self.head, self.skip = [], False, None, 0

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == 'main': self.in_main = True
        elif tag in self.SKIP: self.skip += 1
        elif self.in_main and tag in self.HEADS and a.get('id'):
            self.head = tag; self.sections.append(dict(id=a['id'], head='', text=''))

    def handle_endtag(self, tag):
        if tag == 'main': self.in_main = False
        elif tag in self.SKIP: self.skip = max(0, self.skip - 1)
        elif tag == self.head: self.head = None

    def handle_data(self, data):
        if not self.in_main or self.skip or not self.sections: return
        s = self.sections[-1]
        if self.head: s['head'] += data
        elif len(s['text']) < 3000: s['text'] += data

def page_sections(body:str)->list:
    "`Sections` of the HTML `body`, whitespace collapsed and the heading's ¶ anchor dropped."
    p = Sections(); p.feed(body[max(body.find('<main'), 0):])  # what comes before <main> (the inline CSS) holds none
    norm = lambda t: re.sub(r'\s+', ' ', t).replace('¶', '').strip()
    return [dict(id=s['id'], head=norm(s['head']), text=norm(s['text'])[:1000]) for s in p.sections if norm(s['head'])]

def withhold_example(nb, why:str):
    """The home example ran on a busy host: its outputs (a table and a chart of intervals nobody should trust) are
    replaced by a line saying so, so that a site built on a busy machine shows no figure instead of a wrong one."""
    note = (f"(This example's output is not shown: the machine that built this page was busy when it ran ({why}). "
            "On a quiet machine its intervals are a few percent wide: run it yourself.)\n")
    for c in nb.cells:
        if c.cell_type == 'code' and c.get('outputs') and not c.source.startswith('#| hide'):
            c.outputs = [nbformat.v4.new_output('stream', name='stdout', text=note)]
    return nb

def sidebar(pages:list, current:str)->str:
    "The sidebar's HTML: Home, then each section's pages (titles escaped), the Globe Race with Analyse."
    by_stem = {n[:-5]: (n, t) for n, t in pages if n != 'index.html'}
    listed = {s for ss in SECTIONS.values() for s in ss}
    section = lambda stem: FOLDERS.get(stem.split('_')[0], 'Reference')
    placed = listed | {k for k in by_stem if section(k) != 'Reference'}
    cur = ' class="current"'
    link = lambda n, t: f'<a href="{n}"{cur if n == current else ""}>{html.escape(t)}</a>'
    out = [link('index.html', 'Home')]
    for sec, stems in SECTIONS.items():
        items = [by_stem[s] for s in stems if s in by_stem]
        if sec != 'Reference': items += [v for k, v in sorted(by_stem.items()) if k not in listed and section(k) == sec]
        if sec == 'Reference': items += [v for k, v in sorted(by_stem.items()) if k not in placed]
        if not items and sec != 'Analyse': continue
        out.append(f'<h2>{sec}</h2>' + ''.join(link(n, t) for n, t in items) + ('<a href="globe/index.html">Globe Race</a>' if sec == 'Analyse' else ''))
    return ''.join(out)

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

# What runs before each notebook in a kernel that ran another: its names gone (`%reset`), and as the kernel started its
# environment, working folder, import path and warning filters; where torch is imported, its threads (the kernel's
# `OMP_NUM_THREADS`), default dtype and gradient mode. Not reset (as in `nbdev_test`'s workers): what a notebook patched
# in a module, other libraries' options (matplotlib's, pandas', NumPy's), and a thread it left running.
# the reset ends by freezing what the kernel holds (torch, timm and the package: about 700,000 objects, none of it
# the next notebook's garbage): each garbage collection in the notebook then walks only the objects it made (the two
# shared kernels spent 52 s of CPU in 107 full collections of a build)
RESET = """import os as _os, sys as _sys, warnings as _warnings
if not hasattr(_sys, '_tb_env'): _sys._tb_env, _sys._tb_path, _sys._tb_warn = dict(_os.environ), list(_sys.path), list(_warnings.filters)
_os.environ.clear(); _os.environ.update(_sys._tb_env); _os.chdir({nbs!r})
_sys.path[:] = _sys._tb_path; _warnings.filters[:] = _sys._tb_warn
if 'torch' in _sys.modules:
    _t = _sys.modules['torch']; _t.set_default_dtype(_t.float32); _t.set_grad_enabled(True)
    if _os.environ.get('OMP_NUM_THREADS', '').isdigit(): _t.set_num_threads(int(_os.environ['OMP_NUM_THREADS']))
get_ipython().run_line_magic('reset', '-f')
import gc as _gc; _gc.collect(); _gc.freeze(); del _gc"""

# notebooks whose examples are about the process itself, each in a kernel of its own: what it imports first (preload),
# its memory's high-water mark (devices; inference's memory guard, which predicts a batch's peak from those of batches
# 2 and 4): in a kernel that ran other notebooks, memory it already holds serves small allocations, and the high-water
# mark does not rise (64 MiB more did not raise it after the model notebook; the guard predicted no peak)
# named without their number (a renumbering once left all three in shared kernels, and preload's check then failed
# wherever timm had been imported before it); a name that matches no notebook stops the build
FRESH = {'scale_preload', 'machine_devices', 'measure_inference'}

def fresh(p:Path)->bool:
    "Whether notebook `p` runs in a kernel of its own (`FRESH`: its name after the number)."
    return p.stem.split('_', 1)[-1] in FRESH

class Kernel:
    """One job's kernel, kept for notebook after notebook and reset between them (as `nbdev_test`'s worker processes
    are): the interpreter's start and the imports of torch and timm (about 9 s of CPU here) once a job, not once a
    notebook. `threads`: its OpenMP threads (`OMP_NUM_THREADS`, which its worker processes inherit; 0: PyTorch's
    default, every core). `fresh`: a new kernel for each notebook. A kernel that failed a notebook is not reused."""
    def __init__(self, threads:int=0, fresh:bool=False):
        self.env = dict(os.environ) | ({'OMP_NUM_THREADS': str(threads)} if threads else {})
        self.km, self.fresh = None, fresh

    def execute(self, nb, timeout:int):
        "Run `nb` in nbs/; `(seconds, None)` or `(seconds, the error's text)`."
        import nbformat.v4 as v4
        t0 = time.monotonic()
        nb.cells.insert(0, v4.new_code_cell(RESET.format(nbs=str(NBS))))
        c = NotebookClient(skip_unevaluated(nb), km=self.km, timeout=timeout, kernel_name='python3',
                           skip_cells_with_tag='skip-execution', store_widget_state=True,
                           resources={'metadata': {'path': str(NBS)}})
        err = None
        try: c.execute(env=self.env, cwd=str(NBS), cleanup_kc=False)
        except CellExecutionError as e: err = str(e)
        except Exception as e: err = f"{type(e).__name__}: {e}"
        finally:
            del nb.cells[0]
            for cell in nb.cells:  # nbclient numbers the cells it ran, the reset first: the page's prompts from 1
                if cell.get('execution_count'): cell.execution_count -= 1
                for o in cell.get('outputs', []):
                    if o.get('execution_count'): o.execution_count -= 1
            if c.kc is not None: c.kc.stop_channels()
            self.km = c.km
        if err is not None or self.fresh: self.close()
        return time.monotonic() - t0, err

    def close(self):
        "Shut the kernel down (in the thread that runs it: its sockets belong to this thread's event loop)."
        if self.km is not None and self.km.has_kernel:
            from jupyter_core.utils import run_sync
            try: run_sync(self.km.shutdown_kernel)(now=True)
            except Exception: pass
        self.km = None

def share_of_cores(jobs:int)->int:
    """The threads each of `jobs` notebooks executing at once gets: its share of the cores (0: all, when one runs).
    Two kernels each running PyTorch on every core of a 2-core machine fight over it: an OpenMP parallel region waits
    for its descheduled thread, and a small model's steps took several times as long as on one thread each."""
    return 0 if jobs <= 1 else max(1, (os.cpu_count() or 1) // jobs)

def longest_first(paths:list, seconds:dict)->list:
    """`paths` in the order to start them: the longest (as the last build measured) first, so that no long notebook
    starts last while the other job idles; a notebook not yet measured first of all (it may be long)."""
    unknown = max(seconds.values(), default=0) + 1
    return sorted(paths, key=lambda p: -seconds.get(p.stem, unknown))

_local = threading.local()

def render(p:Path, nb, pages:list)->tuple:
    "Page `p` as HTML: `(file name, HTML, its search entry)`; an exporter per thread (pages render beside each other)."
    if not hasattr(_local, 'exporter'):
        _local.exporter = HTMLExporter(extra_template_basedirs=[str(TEMPLATE.parent)], template_name=TEMPLATE.name,
                                       embed_images=True)
    name, title = page_name(p), title_of(nb, p.stem)
    res = {'tb_nav': sidebar(pages, name), 'metadata': {'name': title}}
    body, _ = _local.exporter.from_notebook_node(static_widgets(prepare(nb)), resources=res)
    return name, body, search_entry(nb, name, title) | dict(sections=page_sections(body))

def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--out', default=str(ROOT / '_site')); ap.add_argument('--no-execute', action='store_true')
    ap.add_argument('--timeout', type=int, default=900, help="seconds a cell may run")
    ap.add_argument('--jobs', type=int, default=1,
                    help="notebooks executed at once (each job in a kernel of its own, on its share of the cores)")
    ap.add_argument('--fresh-kernels', action='store_true',
                    help="a new kernel for each notebook (a job's kernel is otherwise reset and reused)")
    ap.add_argument('--publish', action='store_true', help="refuse to write a site whose home example ran on a busy host")
    ap.add_argument('--save-seconds', action='store_true',
                    help=f"keep what each notebook took in tools/{SECONDS.name} (the next build's order)")
    a = ap.parse_args()
    t_start = time.monotonic()
    out = Path(a.out)
    if out.exists(): shutil.rmtree(out)
    out.mkdir(parents=True)
    paths = sorted(NBS.glob('*.ipynb'), key=lambda p: (p.stem != 'index', p.stem))
    lost = FRESH - {p.stem.split('_', 1)[-1] for p in paths}
    if lost: sys.exit(f"build_docs: FRESH names no notebook: {', '.join(sorted(lost))}")
    nbs = {p: nbformat.read(p, as_version=4) for p in paths}
    pages = [(page_name(p), title_of(nb, p.stem)) for p, nb in nbs.items()]  # titles: what execution does not change
    failed, rendered, took, render_s = [], {}, {}, {}
    seconds = json.loads(SECONDS.read_text()) if SECONDS.exists() else {}
    home = next((p for p in paths if p.stem == 'index'), None)
    render_lock = threading.Lock()
    def run(p:Path, kernel:Kernel):
        "Execute `p` (unless --no-execute, or it already ran), then render it: a page is made while others still run."
        if not a.no_execute and p not in took:
            k = Kernel(share_of_cores(a.jobs), fresh=True) if fresh(p) else kernel
            took[p] = k.execute(nbs[p], a.timeout)
        with render_lock:  # one page at a time: Python 3.11's ast is not thread-safe (two threads parsing at once
            # raise "AST constructor recursion depth mismatch"; CPython gh-106905), and rendering holds the GIL anyway
            t0 = time.monotonic()
            rendered[p] = render(p, nbs[p], pages)
            render_s[p] = time.monotonic() - t0
    def report(p:Path):
        sec, err = took.get(p, (0.0, None))
        if not a.no_execute: print(f"{p.name}: {'ok' if err is None else 'FAILED'} ({sec:.0f} s)", flush=True)
        if err is not None: failed.append((p, err))
    if not a.no_execute and home:
        # the home page's example measures first, alone (a notebook executing beside it would make its host busy), on
        # every core, in a kernel of its own; then the rest, `jobs` at once, each job's kernel on its share of the cores
        solo = Kernel(fresh=True)
        sec, err = took[home] = solo.execute(nbs[home], a.timeout)
        report(home)
        why = busy_example(nbs[home]) if err is None else ''
        if why and a.publish: failed.append((home, f"the home example ran on a busy host ({why}): re-run the build on a quiet machine before publishing"))
        elif why:
            print(f"build_docs: warning: the home example ran on a busy host ({why}): its output is withheld on the page; "
                  "--publish would refuse this site", flush=True)
            withhold_example(nbs[home], why)
    # then the rest, the longest first, each page rendered as soon as its notebook has run (the home page's among them);
    # the results notebook writes the Globe Race page the site links to. Each job takes the next notebook in its kernel.
    todo, done, unrendered = queue.SimpleQueue(), queue.SimpleQueue(), []  # a page that failed to render: failed
    for p in ([home] if home else []) + longest_first([p for p in paths if p != home], seconds): todo.put(p)
    def job():
        kernel = Kernel(share_of_cores(a.jobs), fresh=a.fresh_kernels)
        try:
            while True:
                try: p = todo.get_nowait()
                except queue.Empty: return
                try: run(p, kernel)
                except BaseException as e: unrendered.append((p, f"rendering failed: {type(e).__name__}: {e}"))
                done.put(p)
        finally: kernel.close()
    workers = [threading.Thread(target=job, name=f'build_docs-job{i}', daemon=True) for i in range(max(1, a.jobs))]
    for w in workers: w.start()
    for _ in range(len(paths)):
        p = done.get()
        if p != home: report(p)
    for w in workers: w.join()
    failed.extend(unrendered)
    t_exec = time.monotonic() - t_start
    index = []
    for p in paths:  # pages in their order (the search index's order)
        if p not in rendered: continue  # its rendering failed (named below)
        name, body, entry = rendered[p]
        index.append(entry)
        (out / name).write_text(body)
    (out / 'search.js').write_text('window.TB_SEARCH = ' + json.dumps(index, ensure_ascii=False).replace('</', '<\\/') + ';\n')
    for extra in (NBS / 'styles.css', TEMPLATE / 'site.css', TEMPLATE / 'site.js'):
        if extra.exists(): shutil.copy(extra, out / extra.name)
    if (NBS / 'globe' / 'index.html').exists():  # the Globe Race page the results notebook wrote
        shutil.copytree(NBS / 'globe', out / 'globe')
    if took:
        got = json.dumps({p.stem: round(sec) for p, (sec, err) in sorted(took.items()) if err is None}, indent=1) + '\n'
        (out / SECONDS.name).write_text(got)
        if a.save_seconds: SECONDS.write_text(got)
        print(f"executed {len(took)} notebooks ({sum(sec for sec, _ in took.values()):.0f} notebook-seconds, "
              f"{a.jobs} at once; "
              f"{sum(render_s.values()):.0f} s rendering pages beside them) in {t_exec:.0f} s; the whole build "
              f"{time.monotonic() - t_start:.0f} s", flush=True)
    print(f"site: {out} ({len(pages)} pages{', globe' if (out / 'globe').exists() else ''})")
    if failed:
        for p, err in failed: print(f"\n===== {p.name} failed =====\n{err[-3000:]}", file=sys.stderr)
        sys.exit(f"build_docs: {len(failed)} notebook(s) failed: {', '.join(p.name for p, _ in failed)}")

if __name__ == '__main__': main()
