"""Write README.md from nbs/index.ipynb (what `nbdev_readme` does with Quarto): markdown cells as they are, code cells fenced.

    python tools/readme.py [--check]     # --check: exit 1 if README.md differs from what the notebook gives
"""
import json, sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

def render()->str:
    nb = json.loads((ROOT / 'nbs' / 'index.ipynb').read_text())
    parts = []
    for c in nb['cells']:
        src = ''.join(c['source']).strip('\n')
        if c['cell_type'] == 'markdown': parts.append(src)
        elif c['cell_type'] == 'code' and not src.startswith('#| hide'): parts.append(f"```python\n{src}\n```")
    return '\n\n'.join(parts) + '\n'

if __name__ == '__main__':
    text = render()
    if '--check' in sys.argv: sys.exit(0 if (ROOT / 'README.md').read_text() == text else 1)
    (ROOT / 'README.md').write_text(text)
