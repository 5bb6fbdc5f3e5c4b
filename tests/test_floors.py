"Issue 41: a requirement installed below its declared floor stops a command with one line, never a traceback; CI's floors are settings.ini's."
import importlib.metadata as md
import subprocess, sys
from pathlib import Path
from conftest import ROOT

def test_a_requirement_below_its_floor_is_one_line_naming_the_fix(cli, tmp_path, monkeypatch):
    real = md.version
    monkeypatch.setattr(md, 'version', lambda name: '1.5.3' if name == 'pandas' else real(name))
    r = cli('models', cwd=tmp_path)
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert "pandas>=2.0.3 is needed, pandas 1.5.3 is installed: pip install 'pandas>=2.0.3'" in r.stderr, r.stderr

def test_the_floors_ci_installs_are_the_ones_settings_declares():
    out = subprocess.run([sys.executable, str(ROOT / '.ci' / 'floors.py')], capture_output=True, text=True, check=True).stdout
    pins = dict(l.split('==') for l in out.split() if '==' in l)
    from packaging.requirements import Requirement
    reqs = [Requirement(r) for r in md.requires('throughput_bench') if 'extra ==' not in r]
    declared = {r.name: s.version for r in reqs for s in r.specifier if s.operator == '>='}
    assert pins == {k: v for k, v in declared.items() if k not in ('torch', 'torchvision')}, (pins, declared)
