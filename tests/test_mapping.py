"`tbench map`: a raster on disk to a georeferenced raster on disk, every stage timed; stitching, georeference and area checked against their definitions; each bad input one line and exit 2 with nothing half-written."
import math, os, resource, signal, subprocess, sys
from pathlib import Path
import numpy as np
import pytest

rasterio = pytest.importorskip('rasterio')
from throughput_bench.mapping import synthetic_scene, raster_facts, map_raster, stitch_reference, STAGES
from throughput_bench.store import read_results

def tbench(*args, cwd, limit_bytes=None):
    "Run `tbench` in a fresh process (optionally under a file-size limit: a disk that fills up)."
    def lim():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG instead of killing the process
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit_bytes, limit_bytes))
    env = os.environ | {'TB_CACHE_DIR': str(cwd / 'cache'), 'WANDB_MODE': 'disabled'}
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
    from throughput_bench.backend import build_model
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

@pytest.mark.parametrize('case', ['not a raster', 'truncated', 'smaller than a tile', 'bands', 'no CRS', 'all nodata', 'missing', 'empty name', 'overlap'])
def test_bad_input_is_one_line_exit_2_and_nothing_written(case, scene, tmp_path):
    args, want = [], ''
    if case == 'not a raster': (tmp_path / 'x.tif').write_text('id,value\n1,2\n'); args, want = ['x.tif'], 'not a raster GDAL can read'
    elif case == 'truncated': (tmp_path / 'x.tif').write_bytes(Path(scene).read_bytes()[:3000]); args, want = ['x.tif'], 'x.tif'
    elif case == 'smaller than a tile': args, want = [str(scene), '--size', '256'], 'smaller than one 256 px tile'
    elif case == 'bands': args, want = [str(scene), '--model', 'croma_optical'], 'takes exactly 12 channels'
    elif case == 'no CRS': write_raster(tmp_path / 'x.tif', np.ones((3, 64, 64), np.uint16), crs=None); args, want = ['x.tif', '--size', '32'], 'has no CRS'
    elif case == 'all nodata': write_raster(tmp_path / 'x.tif', np.zeros((3, 64, 64), np.uint16), nodata=0); args, want = ['x.tif', '--size', '32'], 'every pixel is nodata'
    elif case == 'missing': args, want = ['nope.tif'], 'no such file'
    elif case == 'empty name': args, want = [''], 'empty'
    elif case == 'overlap': args, want = [str(scene), '--overlap', '1'], 'overlap 1.0: choose 0 to 0.95'
    if case == 'bands' and not __import__('importlib').util.find_spec('torchgeo'): pytest.skip('the [geo] extra is not installed')
    model = [] if '--model' in args else ['--model', 'resnet18']
    r = tbench(*args, *model, '--results-dir', 'results', '--no-progress', cwd=tmp_path)
    err = r.stderr.strip().splitlines()
    assert r.returncode == 2 and len(err) == 1 and err[0].startswith(('tbench map: error:', 'tbench: error:')) and want in err[0], r.stderr
    assert 'Traceback' not in r.stderr
    assert not list(tmp_path.rglob('*.csv')) and not list(tmp_path.rglob('maps/*'))

def test_a_disk_that_fills_while_writing_leaves_no_file_that_looks_finished(scene, tmp_path):
    "Under a 20 kB file-size limit GDAL's last writes fail at close, silently: the read-back catches it."
    (tmp_path / 'results').mkdir()
    r = tbench(str(scene), '--model', 'resnet18', '--size', '32', '--overlap', '0.75', '--passes', '1', '--workers', '0',
               '--out-channels', '8', '--results-dir', 'results', '--no-progress', '--threads', '1', cwd=tmp_path, limit_bytes=20_000)
    assert r.returncode == 2, r.stdout + r.stderr
    assert 'tbench map: error: writing' in r.stderr and 'nothing was left behind' in r.stderr and 'Traceback' not in r.stderr
    assert not [p for p in (tmp_path / 'results').rglob('*') if p.suffix in ('.tif', '.partial') or 'partial' in p.name]
