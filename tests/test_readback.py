"""Issue 53: the configuration became a tree, and nothing stored may read differently. Every committed results file
(ours, the submissions', the seed tool's) is read by the code as it was before the tree (`fixtures/readback.json`,
written by `snapshot` at c2bcd51) and as it is: each row's resume key (plain and with the seed tool's wildcards), the
key a drift record stores, the configuration `tbench submit`'s audit rebuilds from a row, and every column of the file
as `read_results` gives it, must be the same."""
import csv, hashlib, json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = ROOT / 'tests' / 'fixtures' / 'readback.json'

def stored_files()->list:
    "The committed results files, as paths relative to the checkout."
    found = [*ROOT.glob('results/*.csv'), *ROOT.glob('submissions/*/*.csv'), *ROOT.glob('tests/fixtures/throughput-bench/*.csv')]
    return sorted(str(p.relative_to(ROOT)) for p in found)

def _digest(text:str)->str: return hashlib.sha256(text.encode()).hexdigest()[:16]

def snapshot(files)->dict:
    "What the package reads from each file, as digests: its rows' keys, drift keys, rebuilt configurations' keys, and each column."
    from throughput_bench.core import config_key
    from throughput_bench.analyse.store import row_key, read_results
    from throughput_bench.analyse.audit import spec_of_row
    out = {}
    for name in files:
        with open(ROOT / name, newline='', encoding='utf-8-sig') as f: rows = list(csv.DictReader(f))
        frame = read_results(ROOT / name)
        own = [c for c in rows[0] if c in frame.columns] if rows else []
        specs = []
        for r in rows:
            try: specs.append(list(spec_of_row(r).key()) if r.get('status') == 'ok' and r.get('mode', 'inference') == 'inference' else None)
            except Exception as e: specs.append(type(e).__name__)
        lists = dict(keys=[list(row_key(r)) for r in rows], wild=[list(row_key(r, wildcards=True)) for r in rows],
                     drift=['|'.join(config_key(r)) for r in rows], specs=specs)
        out[name] = dict(rows=len(rows), **{k: _digest(json.dumps(v)) for k, v in lists.items()},
                         columns={c: _digest(frame[c].astype(str).to_csv(index=False)) for c in own})
    return out

def test_every_committed_results_file_reads_back_as_before_the_tree():
    before = json.loads(FIXTURE.read_text())
    assert sorted(before) == stored_files(), "a results file was added or removed: write the fixture again (snapshot)"
    now = snapshot(stored_files())
    for name in before:
        for what in ('rows', 'keys', 'wild', 'drift', 'specs', 'columns'):
            assert now[name][what] == before[name][what], (name, what)
    assert sum(v['rows'] for v in before.values()) > 100  # the files hold rows: the test compares something
