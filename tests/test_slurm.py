"Sweeps through submitit: jobs with the LocalExecutor (no SLURM needed), collected into the per-device CSV; the sbatch script for SLURM."
import os, signal, time
from pathlib import Path
import psutil, pytest
from conftest import FAST_API
from throughput_bench.api import infer, collect
from throughput_bench.core import BenchError
from throughput_bench.analyse.store import read_results, ResultStore, row_key
from throughput_bench.scale.slurm import load_manifest, make_executor, sbatch_parameters

pytestmark = pytest.mark.slow  # servers, browsers, launches: the full run, not the fast tier

MODELS = ['resnet18', 'mobilenetv3_small_100']  # two jobs: each is a fresh process importing torch and timm
LOCAL = dict(slurm='debug', slurm_executor='local', slurm_group_by='config')

def keys_of(folder):
    rows = [r for f in Path(folder).glob('*.csv') for r in ResultStore(folder, f.stem).rows()]
    return [row_key(r) for r in rows]

def test_jobs_collect_into_what_a_local_sweep_writes_and_a_second_submission_submits_nothing(tmp_path):
    local = infer(MODELS, results_dir=tmp_path / 'here', isolate=False, **FAST_API)  # the keys a local sweep writes
    assert (local.status == 'ok').all()
    jobs = infer(MODELS, results_dir=tmp_path / 'cluster', slurm_wait=True, **LOCAL, **FAST_API)
    assert len(jobs) == 2 and jobs.new.all() and (jobs.state == 'COMPLETED').all(), jobs
    got = keys_of(tmp_path / 'cluster')
    assert sorted(got) == sorted(keys_of(tmp_path / 'here')) and len(set(got)) == 2   # the same keys, one row each
    df = read_results(tmp_path / 'cluster')
    assert (df.status == 'ok').all() and (df.throughput_mean > 0).all()
    # collecting again adds nothing; a second submission submits nothing
    assert collect(tmp_path / 'cluster', quiet=True)['added'] == 0
    again = infer(MODELS, results_dir=tmp_path / 'cluster', slurm_wait=True, **LOCAL, **FAST_API)
    assert len(again) == 2 and not again.new.any()
    assert len(load_manifest(tmp_path / 'cluster')['submissions']) == 1 and len(keys_of(tmp_path / 'cluster')) == 2

def test_a_killed_job_takes_its_workers_with_it_and_leaves_one_error_row(tmp_path):
    "`kill -KILL` of the job alone (the local executor's controller): its task and workers end too, so no orphan stores a row beside the error row."
    out = tmp_path / 'results'
    jobs = infer(['resnet18'], results_dir=out, **LOCAL, **(FAST_API | {'timed_seconds': 600}))
    job = int(jobs.job_id[0])   # a local job's id is its process id
    assert psutil.pid_exists(job)
    deadline = time.monotonic() + 120   # until the job's worker measures (its task, the fork server and the worker are up)
    while time.monotonic() < deadline and len(psutil.Process(job).children(recursive=True)) < 3: time.sleep(0.5)
    tree = [psutil.Process(job)] + psutil.Process(job).children(recursive=True)
    assert len(tree) >= 4, tree
    os.kill(job, signal.SIGKILL)
    gone, alive = psutil.wait_procs(tree, timeout=60)
    assert not alive, [(p.pid, p.name()) for p in alive]
    counts = collect(out, quiet=True)
    assert counts['errors'] == 1 and counts['pending'] == 0
    df = read_results(out)
    assert len(df) == 1 and df.status[0] == 'error' and f"job {job} ENDED" in df.error[0] and 'log ' in df.error[0], df.error[0]
    assert collect(out, quiet=True)['errors'] == 0 and len(read_results(out)) == 1   # recorded once, and nothing beside it
    # the error row went where the device's rows go (it once went to slurm_debug.csv, a partition's name)
    from throughput_bench.machine.hardware import device_slug
    from throughput_bench.machine.devices import resolve_device
    assert [f.name for f in out.glob('*.csv')] == [f"{device_slug(resolve_device('cpu'))}.csv"]
    # measured again: the ok row supersedes the error row, which stays as history and is never counted as a failure
    again = infer(['resnet18'], results_dir=out, retry_failed=True, slurm_wait=True, **LOCAL, **FAST_API)
    assert again.new.sum() == 1 and (again[again.new].state == 'COMPLETED').all(), again
    df = read_results(out)
    assert df.status.tolist() == ['error', 'ok'] and len({row_key(r) for r in ResultStore(out, df.source[0][:-4]).rows()}) == 1
    from throughput_bench.analyse.store import superseded
    from throughput_bench.analyse.charts import summary_markdown, best_rows
    assert superseded(df).tolist() == [True, False]
    md = summary_markdown(df, best_rows(df))
    assert '0 failed, 1 failed before and measured since' in md and '## Not measured' not in md, md[:400]

def test_the_sbatch_script_submitit_would_write(tmp_path, monkeypatch):
    params = sbatch_parameters('gpu', gpus_per_node=8, time_min=90, account='proj42', constraint='h100', array_parallelism=4)
    with pytest.raises(BenchError, match='cannot submit to SLURM here'):  # no srun on this machine
        monkeypatch.setenv('PATH', str(tmp_path)); make_executor('slurm', tmp_path / 'logs', params)
    srun = tmp_path / 'srun'; srun.write_text('#!/bin/sh\nexit 0\n'); srun.chmod(0o755)   # submitit only checks that srun exists
    ex = make_executor('slurm', tmp_path / 'logs', params)
    text = ex._make_submission_file_text('python -m throughput_bench.x', 'uid')
    for line in ('#SBATCH --partition=gpu', '#SBATCH --gpus-per-node=8', '#SBATCH --time=90', '#SBATCH --account=proj42',
                 '#SBATCH --constraint=h100', '#SBATCH --nodes=1', '#SBATCH --job-name=tbench'):
        assert line in text, (line, text)
    assert ex.parameters['array_parallelism'] == 4
