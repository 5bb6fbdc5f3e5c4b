"`tbench map`: a raster on disk to a georeferenced raster on disk, every stage timed; stitching, georeference and area checked against their definitions; each bad input one line and exit 2 with nothing half-written."
import math, os, resource, signal, subprocess, sys
from pathlib import Path
import numpy as np
import pytest

rasterio = pytest.importorskip('rasterio')
from throughput_bench.studies.mapping import synthetic_scene, raster_facts, map_raster, stitch_reference, STAGES
from throughput_bench.analyse.store import read_results

def tbench(*args, cwd, limit_bytes=None):
    "Run `tbench` in a fresh process (optionally under a file-size limit: a disk that fills up)."
    def lim():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG instead of killing the process
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit_bytes, limit_bytes))
    env = os.environ | {'TB_CACHE_DIR': str(cwd / 'cache'), 'WANDB_MODE': 'disabled'}
    if limit_bytes:  # under the limit a module's bytecode would be written cut short, and break every later import
        env['PYTHONDONTWRITEBYTECODE'] = '1'
    return subprocess.run([sys.executable, '-c', 'from throughput_bench.cli import tbench; tbench()', 'map', *args], cwd=cwd, capture_output=True, text=True,
                          timeout=300, env=env, preexec_fn=lim if limit_bytes else None)

@pytest.fixture(scope='module')
def scene(tmp_path_factory):
    return synthetic_scene(192, 3, folder=tmp_path_factory.mktemp('scene'))

def write_raster(path, data, crs='EPSG:32632', nodata=None, transform=None):
    transform = transform or rasterio.transform.from_origin(500000, 4000000, 10, 10)
    with rasterio.open(path, 'w', driver='GTiff', width=data.shape[2], height=data.shape[1], count=data.shape[0], dtype=data.dtype,
                       crs=crs, transform=transform, nodata=nodata) as d: d.write(data)
    return path

def test_a_mapping_row_times_every_stage_and_stitches_as_tiles_alone(scene, tmp_path):
    out = tmp_path / 'map.tif'
    r = map_raster(scene, model='resnet18', size=64, overlap=0.5, batch_size=8, workers=1, passes=2, model_seconds=0.5, threads=1,
                   output_raster=out, results_dir=tmp_path / 'results', progress=False, quiet=True)
    assert r.status == 'ok', r.error
    for s in STAGES: assert getattr(r, f"stage_{s}_s") >= 0
    assert r.stage_model_s > 0 and r.stage_read_s > 0 and r.stage_write_s > 0 and r.bound_stage in STAGES
    # the rate is the raster's valid area over the passes' seconds, consistent with the tiles and the pass count
    passes = [float(x) for x in r.throughput_repeats.split(';')]
    assert len(passes) == r.repeats == 2 and r.iterations == 2 * r.tiles
    assert math.isclose(r.throughput_mean, np.mean(passes), rel_tol=1e-3)
    assert math.isclose(r.km2_per_sec / r.throughput_mean, r.area_km2 / r.tiles, rel_tol=1e-3)
    assert r.km2_per_sec_ci_low <= r.km2_per_sec <= r.km2_per_sec_ci_high
    assert math.isclose(r.pipeline_share, r.km2_per_sec / r.model_km2_per_sec, rel_tol=1e-9)
    assert math.isclose(r.days_to_map_land, 148.94e6 / r.km2_per_sec / 86400, rel_tol=1e-9)
    # area: the raster's valid pixels x 100 m², counted here from GDAL's own mask
    with rasterio.open(scene) as ds:
        valid = int((ds.dataset_mask() > 0).sum())
        assert math.isclose(r.area_km2, valid * 100 / 1e6, rel_tol=1e-9)
        assert 0 < valid < ds.width * ds.height  # the nodata wedge is left out
    # georeference kept; the stitched output equals each tile run alone through the same model, placed and averaged
    from throughput_bench.core import BenchSpec
    from throughput_bench.backends.model import build_model
    from throughput_bench.backends.base import get_backend
    import torch
    spec = BenchSpec('resnet18', input_channels=3, input_size=64, batch_size=1, threads=1)
    dev, _, net = build_model(spec); net.eval()
    run = get_backend('pytorch').prepare(net, spec, dev).output
    with torch.inference_mode(): ref = stitch_reference(scene, [1, 2, 3], 64, 0.5, run)
    with rasterio.open(out) as o, rasterio.open(scene) as i:
        assert (o.crs, o.transform, o.width, o.height, o.count) == (i.crs, i.transform, i.width, i.height, 3)
        got = o.read()
    assert (np.isnan(got) == np.isnan(ref)).all()
    ok = ~np.isnan(ref)
    assert np.allclose(got[ok], ref[ok], rtol=1e-4, atol=1e-4 * np.abs(ref[ok]).max())
    assert not list(tmp_path.glob('.*partial'))
    # the row reads back equal, and a second call finds it stored instead of measuring again
    df = read_results(tmp_path / 'results')
    row = df[df['mode'] == 'mapping'].iloc[0]
    assert row.bound_stage == r.bound_stage and math.isclose(row.km2_per_sec, r.km2_per_sec, rel_tol=1e-6) and row.tiles == r.tiles
    again = map_raster(scene, model='resnet18', size=64, overlap=0.5, batch_size=8, workers=1, passes=2, threads=1,
                       output_raster=out, results_dir=tmp_path / 'results', progress=False, quiet=True)
    assert math.isclose(again.km2_per_sec, r.km2_per_sec, rel_tol=1e-6) and len(read_results(tmp_path / 'results')) == 1

def test_geographic_crs_area_follows_latitude(tmp_path):
    "A 1° x 1° cell at the equator is about 12,364 km²; at 60° about half of that (cos 60°)."
    data = np.ones((1, 10, 10), np.uint8)
    eq = raster_facts(write_raster(tmp_path / 'eq.tif', data, 'EPSG:4326', transform=rasterio.transform.from_origin(0, 0.5, 0.1, 0.1)))
    n60 = raster_facts(write_raster(tmp_path / 'n60.tif', data, 'EPSG:4326', transform=rasterio.transform.from_origin(0, 60.5, 0.1, 0.1)))
    assert math.isclose(eq.area_km2, 12364, rel_tol=2e-3)
    assert math.isclose(n60.area_km2 / eq.area_km2, math.cos(math.radians(60)), rel_tol=2e-3)

@pytest.mark.parametrize('case', ['not a raster', 'truncated', 'smaller than a tile', 'bands', 'no CRS', 'all nodata', 'missing', 'empty name', 'overlap',
                                  'complex pixels', 'complex integer pixels', 'a backend that does not exist', 'a device not here'])
def test_bad_input_is_one_line_exit_2_and_nothing_written(case, scene, tmp_path):
    args, want = [], ''
    if case == 'not a raster': (tmp_path / 'x.tif').write_text('id,value\n1,2\n'); args, want = ['x.tif'], 'not a raster GDAL can read'
    elif case == 'truncated': (tmp_path / 'x.tif').write_bytes(Path(scene).read_bytes()[:3000]); args, want = ['x.tif'], 'x.tif'
    elif case == 'smaller than a tile': args, want = [str(scene), '--size', '256'], 'smaller than one 256 px tile'
    elif case == 'bands': args, want = [str(scene), '--model', 'croma_optical'], 'takes exactly 12 channels'
    elif case == 'no CRS': write_raster(tmp_path / 'x.tif', np.ones((3, 64, 64), np.uint16), crs=None); args, want = ['x.tif', '--size', '32'], 'has no CRS'
    elif case == 'all nodata': write_raster(tmp_path / 'x.tif', np.zeros((3, 64, 64), np.uint16), nodata=0); args, want = ['x.tif', '--size', '32'], 'every pixel is nodata'
    elif case == 'missing': args, want = ['nope.tif'], 'no such file'
    elif case == 'empty name': args, want = [''], 'raster must not be empty'  # the word the help names
    elif case == 'overlap': args, want = [str(scene), '--overlap', '1'], 'overlap 1.0: choose 0 to 0.95'
    elif case == 'complex pixels':  # its imaginary part would have been dropped, with a warning, and the map written
        write_raster(tmp_path / 'x.tif', np.ones((3, 64, 64), np.complex64)); args, want = ['x.tif', '--size', '32'], 'complex64 pixels'
    elif case == 'complex integer pixels':  # GDAL's CInt16, which NumPy has no type for: it was a traceback
        with rasterio.open(tmp_path / 'x.tif', 'w', driver='GTiff', width=64, height=64, count=3, dtype='complex_int16',
                           crs='EPSG:32632', transform=rasterio.transform.from_origin(500000, 4000000, 10, 10)) as d:
            d.write(np.ones((3, 64, 64), np.complex64))
        args, want = ['x.tif', '--size', '32'], 'complex_int16 pixels'
    elif case == 'a backend that does not exist': args, want = [str(scene), '--size', '32', '--backend', 'nosuch'], "unknown backend 'nosuch'"
    elif case == 'a device not here': args, want = [str(scene), '--size', '32', '--device', 'cuda:3'], "'cuda:3'"
    if case == 'bands' and not __import__('importlib').util.find_spec('torchgeo'): pytest.skip('the [geo] extra is not installed')
    model = [] if '--model' in args else ['--model', 'resnet18']
    r = tbench(*args, *model, '--results-dir', 'results', '--no-progress', cwd=tmp_path)
    err = r.stderr.strip().splitlines()
    assert r.returncode == 2 and len(err) == 1 and err[0].startswith('tbench map: error:') and want in err[0], r.stderr
    assert 'Traceback' not in r.stderr
    assert not (tmp_path / 'results').exists()  # not even its maps/ folder

def test_a_disk_that_fills_while_writing_leaves_no_file_that_looks_finished(scene, tmp_path):
    "Under a 20 kB file-size limit GDAL's last writes fail at close, silently: the read-back catches it."
    (tmp_path / 'results').mkdir()
    r = tbench(str(scene), '--model', 'resnet18', '--size', '32', '--overlap', '0.75', '--passes', '1', '--workers', '0',
               '--out-channels', '8', '--results-dir', 'results', '--no-progress', '--threads', '1', cwd=tmp_path, limit_bytes=20_000)
    assert r.returncode == 2, r.stdout + r.stderr
    assert 'tbench map: error: writing' in r.stderr and 'nothing was left behind' in r.stderr and 'Traceback' not in r.stderr
    assert not [p for p in (tmp_path / 'results').rglob('*') if p.suffix in ('.tif', '.partial') or 'partial' in p.name]

@pytest.mark.parametrize('how', ['same path', 'through ..', 'through a missing folder', 'hard link', 'symbolic link', 'the results file'])
def test_an_output_that_is_the_input_is_refused_before_anything_is_read(how, scene, tmp_path):
    "`--output-raster` naming the input (or the device's CSV) by any path: one line, exit 2, the file unchanged, no row."
    src = tmp_path / 'in.tif'; src.write_bytes(Path(scene).read_bytes()); before = src.read_bytes()
    (tmp_path / 'sub').mkdir()
    if how == 'same path': out = 'in.tif'
    elif how == 'through ..': out = './sub/../in.tif'
    elif how == 'through a missing folder': out = './nosuch/../in.tif'  # creating the output's folder would make it the input (it once did, and mapped over it)
    elif how == 'hard link': os.link(src, tmp_path / 'link.tif'); out = 'link.tif'
    elif how == 'symbolic link': (tmp_path / 'sym.tif').symlink_to(src); out = 'sym.tif'
    else:
        from throughput_bench.machine.hardware import device_slug
        from throughput_bench.machine.devices import resolve_device
        (tmp_path / 'results').mkdir(); csv = tmp_path / 'results' / f"{device_slug(resolve_device('cpu'))}.csv"
        csv.write_text('model_name,status\nx,ok\n'); out, before, src = str(csv), csv.read_bytes(), csv
    r = tbench('in.tif', '--model', 'resnet18', '--size', '32', '--output-raster', out, '--results-dir', 'results', '--device', 'cpu', '--no-progress', cwd=tmp_path)
    err = r.stderr.strip().splitlines()
    assert r.returncode == 2 and len(err) == 1 and ('is the input raster' in err[0] or 'is the results file' in err[0] or 'is not a GeoTIFF' in err[0]), r.stderr
    assert src.read_bytes() == before and not list(tmp_path.rglob('*.partial'))
    if how != 'the results file': assert not list(tmp_path.rglob('*.csv'))

def test_an_unwritable_output_folder_is_the_users_mistake(scene, tmp_path):
    "A folder that takes no files: one line, exit 2 and no row (not an `error` row with exit 1)."
    if os.geteuid() == 0: folder = Path('/proc/self')  # root writes through permissions: a read-only file system instead
    else: folder = tmp_path / 'ro'; folder.mkdir(); folder.chmod(0o555)
    r = tbench(str(scene), '--model', 'resnet18', '--size', '32', '--output-raster', str(folder / 'm.tif'), '--results-dir', 'results', '--no-progress', cwd=tmp_path)
    assert r.returncode == 2 and 'cannot write to' in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert not list(tmp_path.rglob('*.csv'))

def test_a_header_that_claims_a_huge_raster_is_refused_in_bounded_memory(tmp_path):
    "10^6 x 10^6 px in a 1 MB sparse file: refused from its header, before a pixel is read (RSS stays that of an idle process)."
    with rasterio.open(tmp_path / 'huge.tif', 'w', driver='GTiff', width=10**6, height=10**6, count=3, dtype='uint16', crs='EPSG:32632',
                       transform=rasterio.transform.from_origin(0, 0, 10, 10), tiled=True, blockxsize=4096, blockysize=4096, sparse_ok=True, BIGTIFF='YES'): pass
    code = ("import atexit, resource, sys, torch, timm, rasterio; import throughput_bench.studies.mapping; from throughput_bench.cli import tbench;"
            "rss = lambda: resource.getrusage(resource.RUSAGE_SELF).ru_maxrss; base = rss();"  # kB, after the imports every command pays
            "atexit.register(lambda: open('rss', 'w').write(str(rss() - base)));"
            "sys.argv = ['tbench', 'map', 'huge.tif', '--model', 'resnet18', '--results-dir', 'results', '--no-progress']; tbench()")
    r = subprocess.run([sys.executable, '-c', code], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert r.returncode == 2 and 'huge.tif is 1,000,000 x 1,000,000 px' in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert int((tmp_path / 'rss').read_text()) < 500_000  # kB past the imports: it reached 3.6 GB in 10 s, reading full-width block rows
    assert not list(tmp_path.rglob('*.csv'))

def test_a_killed_runs_partial_file_is_removed_by_the_next_run(scene, tmp_path):
    "SIGKILL leaves `.<name>.<pid>.partial`; the next run removes the partials of dead processes and keeps a live one's."
    maps = tmp_path / 'results' / 'maps'; maps.mkdir(parents=True)
    dead = subprocess.Popen([sys.executable, '-c', 'pass']); dead.wait()
    stale = maps / f".{Path(scene).stem}.resnet18.tif.{dead.pid}.partial"; stale.write_bytes(b'II*\x00 half a GeoTIFF')
    live = maps / f".other.tif.{os.getpid()}.partial"; live.write_bytes(b'in progress')
    map_raster(scene, model='resnet18', size=64, overlap=0, batch_size=8, workers=0, passes=1, model_seconds=0.3, threads=1,
               results_dir=tmp_path / 'results', progress=False, quiet=True)
    assert not stale.exists() and live.exists()

def test_an_impossible_share_is_a_measurement_error_never_an_ok_row(scene, tmp_path, monkeypatch):
    "The model alone measured (as once happened) cold and 46x slower than inside the passes: the row says so, is not `ok`, and the CLI exits 1."
    import throughput_bench.studies.mapping as M
    monkeypatch.setattr(M, '_model_alone', lambda *a, **k: (1.0, 0.9, 1.1))  # 1 tile/s: far below what the passes will show
    # four passes: with two, one slow pass on a busy host (t = 12.7) puts the interval's low end under zero, and nothing is beyond it
    r = map_raster(scene, model='resnet18', size=64, overlap=0, batch_size=8, workers=0, passes=4, threads=1,
                   results_dir=tmp_path / 'results', progress=False, quiet=True)
    assert r.status == 'error' and r.error.startswith('measurement error') and r.pipeline_share > 1, r
    assert r.busy_share is not None  # the contention check ran, as for an inference row
    df = read_results(tmp_path / 'results')
    assert (df.status == 'error').all() and not df.status.eq('ok').any()

def test_map_runs_with_the_allocator_it_names(scene, tmp_path):
    "`--allocator` of a preloaded one: the command starts itself again with it, and the row names it (checked in-process)."
    from throughput_bench.machine.allocator import library_path
    allocator = 'jemalloc' if library_path('jemalloc') else 'tcmalloc'
    if library_path(allocator) is None: pytest.skip("neither tcmalloc nor jemalloc is installed")
    r = tbench(str(scene), '--model', 'resnet18', '--size', '64', '--batch-size', '8', '--workers', '0', '--passes', '2',
               '--model-seconds', '0.3', '--threads', '1', '--allocator', allocator, '--results-dir', 'results',
               '--no-progress', cwd=tmp_path)
    row = read_results(tmp_path / 'results').iloc[0]
    # a host whose speed changed between the model-alone phase and the passes (a busy CI) gets the row that says so,
    # exit 1, as test_an_impossible_share_... checks; either way the row names the allocator it ran under
    busy = r.returncode == 1 and row.status == 'error' and row.error.startswith('measurement error')
    assert busy or (r.returncode == 0 and row.status == 'ok'), (r.stderr[-2000:], row.error)
    assert row.allocator == allocator, row.allocator
