"""Vendor the Globe Race page's JavaScript and land geometry from the npm registry, at pinned versions.

The page must work offline and from a plain `pip install`, so its libraries live in the package
(`throughput_bench/globe_assets/vendor/`), each with its licence; nothing is fetched from a CDN.
This script is how they got there, and how to check that they are exactly what npm serves:

    python tools/vendor_js.py           # download (npm pack), verify npm's integrity hash, copy the files
    python tools/vendor_js.py --check   # download again and compare byte for byte with the committed files
"""
import argparse, base64, hashlib, json, shutil, subprocess, sys, tarfile, tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
VENDOR = ROOT / 'throughput_bench' / 'globe_assets' / 'vendor'
sys.path.insert(0, str(ROOT))
from throughput_bench.analyse.globe import VENDORED  # {package: (version, [files in the package])}

def pack(pkg:str, version:str, tmp:Path)->Path:
    "`npm pack pkg@version` into `tmp`; the tarball, its integrity checked against what npm reports."
    r = subprocess.run(['npm', 'pack', f'{pkg}@{version}', '--json', '--pack-destination', str(tmp)], capture_output=True, text=True, timeout=300)
    if r.returncode: sys.exit(f"npm pack {pkg}@{version} failed: {r.stderr.strip().splitlines()[-1:]}")
    info = json.loads(r.stdout)[0]
    tgz = tmp / info['filename']
    algo, want = info['integrity'].split('-', 1)
    got = base64.b64encode(hashlib.new(algo, tgz.read_bytes()).digest()).decode()
    if got != want: sys.exit(f"{pkg}@{version}: integrity mismatch ({algo})")
    return tgz

def files_of(pkg:str, version:str, files:list, tmp:Path)->dict:
    "`{relative path: bytes}` of `files` in the npm tarball of `pkg@version`."
    with tarfile.open(pack(pkg, version, tmp)) as t:
        return {f: t.extractfile(f'package/{f}').read() for f in files}

def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--check', action='store_true', help="compare the committed files with npm's, change nothing")
    a = ap.parse_args()
    bad = []
    with tempfile.TemporaryDirectory() as d:
        for pkg, (version, files) in VENDORED.items():
            for f, data in files_of(pkg, version, files, Path(d)).items():
                dest = VENDOR / pkg / Path(f).name
                if a.check:
                    if not dest.exists() or dest.read_bytes() != data: bad.append(str(dest.relative_to(ROOT)))
                else:
                    dest.parent.mkdir(parents=True, exist_ok=True); dest.write_bytes(data)
            print(f"{pkg}@{version}: {', '.join(files)}" + (' (checked)' if a.check else ' -> ' + str((VENDOR / pkg).relative_to(ROOT))))
    if bad: sys.exit(f"vendored files differ from npm's: {', '.join(bad)}; run python tools/vendor_js.py")

if __name__ == '__main__': main()
