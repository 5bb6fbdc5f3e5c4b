#!/usr/bin/env bash
# Every requirement at its floor (settings.ini, pinned by .ci/floors.py) laid over the environment in .floors: the
# commands a user runs after a sweep, on the committed results and submissions, and the tier of the fast tests that
# reads, draws, checks and compares results (one real sweep among them). Run from the repository root, venv active.
set -euo pipefail
rm -rf .floors .floors-out; mkdir -p .floors-out
python .ci/floors.py > .floors-out/pins.txt
# uv where the environment has it (CI's does: 2 s against pip's 39 s here), pip otherwise
if command -v uv >/dev/null 2>&1; then inst=(uv pip install); else inst=(python -m pip install); fi
"${inst[@]}" -q --no-deps --only-binary=:all: --target .floors -r .floors-out/pins.txt
export PYTHONPATH="$PWD/.floors${PYTHONPATH:+:$PYTHONPATH}"
python - <<'PY'
import importlib.metadata as md
pins = [l.split('==') for l in open('.floors-out/pins.txt').read().split() if '==' in l]
got = {n: md.version(n) for n, _ in pins}
wrong = [f"{n} {got[n]} (floor {v})" for n, v in pins if not got[n].startswith(v)]
assert not wrong, f"not at the floor: {wrong}"
print('floors:', ', '.join(f"{n} {got[n]}" for n, _ in pins))
PY
# the report (about 13 s drawing, one core) beside the tier's tests below: the two together take what the tests alone do
tbench report results -o .floors-out/report --formats png >/dev/null & report=$!
trap 'kill $report 2>/dev/null || true' EXIT  # a step below that fails ends the script: the report with it, not orphaned
tbench history results --no-charts >/dev/null
tbench submit --check submissions/*
tbench leaderboard submissions -o .floors-out/board >/dev/null
# the checker's and the board's own tests (test_submit, test_trust4, test_rules_v3) run once, in the full run; under the
# floors, `tbench submit --check` and `tbench leaderboard` above run both on the committed submissions. The tier's one
# sweep is the history's re-run
python -m pytest -q -n 3 -m "not slow and not alone" tests/test_charts.py tests/test_history.py \
  tests/test_store.py tests/test_compare.py tests/test_wandb_report.py
wait $report || { echo "floors: tbench report failed on the committed results (exit $?)"; exit 1; }
trap - EXIT
