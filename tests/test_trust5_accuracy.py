"""Issue 51, the accuracy check: its interval of a drop holds the true drop at least 93% of the time (7); its cached
fp32 answers follow the images' contents (2); every image mode Pillow opens is read at its true range or refused by
name (5); bad --images/--weights stop a sweep before it starts, naming what is wrong (12); a folder too small to check
says so (16)."""
import sys, numpy as np, pytest
from pathlib import Path
from throughput_bench.measure.inference import paired_drop, drop_interval

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / 'bench'))
import accuracy_interval as sim

# ---- 7: the drop's interval ----
# cells of (fp32 accuracy, drop in points, agreement, images): the first three are where Newcombe's method 10 held the
# true drop 78-88% of the time (2,000 trials); the last is the adjusted Wald interval's own weakest kind of cell (every
# disagreement a loss, a few hundred images)
CELLS = [(0.6, 1, 0.99, 40), (0.6, 1, 0.99, 200), (0.6, 2, 0.95, 40), (0.95, 2, 0.98, 300), (0.8, 3, 0.9, 500)]

@pytest.mark.parametrize('acc,drop,agreement,n', CELLS)
def test_the_drop_interval_holds_the_true_drop_at_least_93_percent_of_the_time(acc, drop, agreement, n):
    assert sim.coverage(acc, drop, agreement, n, reps=4000) >= 0.93

def test_the_interval_of_paired_answers_is_that_of_their_counts_and_holds_the_estimate():
    rng = np.random.default_rng(0)
    for n in (1, 7, 40, 300):
        ref, cfg = rng.random(n) < 0.7, rng.random(n) < 0.6
        d, lo, hi = paired_drop(ref, cfg)
        lost, won = (ref & ~cfg).sum(), (~ref & cfg).sum()
        assert d == pytest.approx(100 * (ref.mean() - cfg.mean()))
        assert (lo, hi) == pytest.approx(tuple(100 * np.array(drop_interval(lost, won, n))))
        assert -100 <= lo <= d <= hi <= 100
    same = paired_drop(np.ones(40, bool), np.ones(40, bool))  # 40 images, none changed: a few points are not ruled out
    assert same[0] == 0 and same[1] < -3 and same[2] > 3

# ---- a classifier whose answer is each image's strongest colour: the fp32 answers differ where the pictures do ----
import torch
from PIL import Image
from throughput_bench.core import BenchSpec, BenchError
from throughput_bench.result import BenchResult
from throughput_bench.backends.export import (files_digest, weights_digest, read_images, check_images, image_files,
                                              open_image)
from throughput_bench.measure.inference import accuracy_reference, judge_accuracy, folder_labels, top1

class Colour(torch.nn.Module):
    "Three classes: red, green, blue; the logits are the image's mean of each channel."
    num_classes = 3
    def forward(self, x): return x.mean((2, 3))

COLOURS = [(200, 30, 30), (30, 200, 30)]

def folder(root, per_class=4, colours=COLOURS):
    "Class `k`'s folder holds pictures of colour `k`, uncompressed (every file the same size)."
    for k, c in enumerate(colours):
        (root / str(k)).mkdir(parents=True, exist_ok=True)
        for i in range(per_class):
            Image.new('RGB', (12, 12), c).save(root / str(k) / f"{i}.png", compress_level=0)
    return str(root)

def bf16(images, tmp_path):
    return BenchSpec('resnet18', input_channels=3, input_size=8, num_classes=3, precision='bf16', images=images,
                     weights='w.safetensors', cache_dir=str(tmp_path / 'cache'))

def test_the_cached_fp32_answers_follow_what_the_images_hold(tmp_path):
    images = folder(tmp_path / 'images')
    s, model = bf16(images, tmp_path), Colour()
    first = accuracy_reference(model, s, 'cpu')
    assert (first['top1'] == first['labels']).all()  # fp32 eager is right on every picture
    before = sorted((p, p.stat().st_size) for p in Path(images).rglob('*.png'))
    folder(tmp_path / 'images', colours=COLOURS[::-1])  # rewritten in place: each class holds the other's pictures
    assert sorted((p, p.stat().st_size) for p in Path(images).rglob('*.png')) == before  # names and sizes equal
    again = accuracy_reference(model, s, 'cpu')
    fresh = top1(lambda x: model(x), again['files'], 8, 64)
    assert (again['top1'] == fresh).all() and (again['top1'] != again['labels']).all()

def test_the_fingerprints_are_of_contents():
    m = torch.nn.Linear(4, 4)
    d = weights_digest(m)
    with torch.no_grad(): m.weight.copy_(m.weight.flip(0))  # the same numbers elsewhere: the same sum
    assert weights_digest(m) != d

def test_a_16_bit_grey_png_reads_as_the_same_picture_at_8_bits(tmp_path):
    grey = np.linspace(10, 240, 30 * 20).reshape(20, 30).astype(np.uint8)
    Image.fromarray(grey).save(tmp_path / '8.png')
    Image.fromarray(grey.astype(np.uint16) * 257).save(tmp_path / '16.png')
    assert Image.open(tmp_path / '16.png').mode == 'I;16'
    a, b = read_images([tmp_path / '16.png'], 16), read_images([tmp_path / '8.png'], 16)
    assert np.abs(a - b).max() < 0.03  # 1/255 of a channel's range is 0.018 here

def test_a_one_image_folder_says_the_image_went_to_calibration(tmp_path):
    images = folder(tmp_path / 'images', per_class=1, colours=COLOURS[:1])
    s = bf16(images, tmp_path)
    acc = accuracy_reference(Colour(), s, 'cpu')
    r = judge_accuracy(BenchResult(), s, acc, None, 2)
    assert r.accuracy_check == 'accuracy unchecked: --images holds 1 image, which calibrates; none left to check'

def test_a_class_folder_of_a_unicode_digit_is_no_class_and_no_crash(tmp_path):
    images = folder(tmp_path / 'images', colours=COLOURS[:1])
    (tmp_path / 'images' / '0').rename(tmp_path / 'images' / '²')
    assert folder_labels(image_files(images), images, 3) is None  # int('²') is a ValueError
    with pytest.raises(BenchError, match="class folder '²'"): check_images(images)

# ---- 12: bad input named by the user stops the sweep before it starts ----
from conftest import FAST

@pytest.mark.parametrize('case', ['a corrupt image', 'a unicode digit class', 'unreadable weights'])
def test_bad_images_or_weights_exit_2_in_one_line_before_anything_runs(cli, tmp_path, case):
    images = folder(tmp_path / 'images')
    if case == 'a corrupt image':
        (tmp_path / 'images' / '1' / '2.png').write_bytes(b'\x89PNG\r\n\x1a\n' + b'\0' * 40)
        args, want = ['--images', images], "1/2.png' cannot be read as an image"
    elif case == 'a unicode digit class':
        (tmp_path / 'images' / '1').rename(tmp_path / 'images' / '²')
        args, want = ['--images', images], "class folder '²' is not a number"
    else:
        (tmp_path / 'w.safetensors').write_bytes(b'\x08\0\0\0\0\0\0\0{"a":1}')
        args, want = ['--weights', tmp_path / 'w.safetensors'], "w.safetensors': not a weights file"
    r = cli('infer', '--models', 'resnet18', *FAST, *args, cwd=tmp_path)
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2 and len(lines) == 1 and len(lines[0]) < 200, r.stdout + r.stderr
    assert want in lines[0] and 'Traceback' not in r.stderr, lines
    assert not list(tmp_path.rglob('*.csv')) and not list(tmp_path.rglob('*_drift.tsv'))  # nothing measured or stored

# ---- the image-folder reader against folders a person feeds: odd names, modes, sizes, empty and corrupt files ----
import io, tempfile
from hypothesis import given, settings, HealthCheck, strategies as st
from throughput_bench.backends.export import MEAN, STD

NAMES = st.text(st.characters(blacklist_categories=('Cs',), blacklist_characters='/\0'), min_size=1, max_size=10)
# (mode, format): what Pillow writes; the last two are TIFFs under a .png name (Pillow opens a file by its content)
KINDS = [('1', 'PNG'), ('L', 'PNG'), ('LA', 'PNG'), ('P', 'PNG'), ('RGB', 'PNG'), ('RGBA', 'PNG'), ('I;16', 'PNG'),
         ('L', 'JPEG'), ('RGB', 'JPEG'), ('CMYK', 'JPEG'), ('RGB', 'WEBP'), ('RGBA', 'WEBP'), ('F', 'TIFF'), ('I', 'TIFF')]
SUFFIX = {'PNG': '.png', 'JPEG': '.jpg', 'WEBP': '.webp', 'TIFF': '.png'}

@st.composite
def picture(draw):
    "`(file name suffix, bytes, readable)`: an image of some mode and size, or an empty, cut or foreign file."
    mode, fmt = draw(st.sampled_from(KINDS))
    w, h = draw(st.integers(1, 40)), draw(st.integers(1, 40))
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 16)))
    if mode == 'F': a, ok = rng.uniform(0, draw(st.sampled_from([1.0, 3.0])), (h, w)).astype(np.float32), None
    elif mode == 'I': a, ok = rng.integers(0, draw(st.sampled_from([65536, 2 ** 31 - 1])), (h, w)).astype(np.int32), None
    elif mode == 'I;16': a, ok = rng.integers(0, 65536, (h, w)).astype(np.uint16), True
    else: a, ok = None, True
    im = Image.fromarray(a) if a is not None else Image.fromarray(rng.integers(0, 256, (h, w, 3), np.uint8)).convert(mode)
    if ok is None: ok = bool(a.max() <= (1.0 if mode == 'F' else 65535))  # a range the reader can know
    buf = io.BytesIO(); im.save(buf, fmt); data = buf.getvalue()
    harm = draw(st.sampled_from(['none'] * 4 + ['empty', 'cut', 'text']))
    if harm == 'empty': data, ok = b'', False
    elif harm == 'cut': data, ok = data[:len(data) // 3], False
    elif harm == 'text': data, ok = 'a picture\n'.encode(), False
    return SUFFIX[fmt], data, ok

@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(NAMES, NAMES, picture()), min_size=1, max_size=5))
def test_the_image_folder_reader_reads_what_it_can_and_names_what_it_cannot(files):
    with tempfile.TemporaryDirectory() as d:
        written = {}
        for cls, name, (suffix, data, ok) in files:
            if cls in ('.', '..') or name in ('.', '..'): continue
            p = Path(d) / cls / (name + suffix)
            try: p.parent.mkdir(exist_ok=True); p.write_bytes(data)
            except OSError: continue  # a name this file system refuses (too long in bytes)
            written[p] = ok and not (cls.isdigit() and not cls.isascii())
        if not written: return
        try: got = check_images(d)
        except BenchError as e:
            said = str(e)
            assert '\n' not in said and len(said) < 180, said
            assert not all(written.values()), said  # refused only what is bad, and said so in one line
            return
        assert all(written.values()) and set(got) == set(written)
        x = read_images(got, 8)
        low, high = (0 - np.array(MEAN)) / STD, (1 - np.array(MEAN)) / STD
        assert x.shape == (len(got), 3, 8, 8) and np.isfinite(x).all()
        assert (x >= low[:, None, None] - 1e-4).all() and (x <= high[:, None, None] + 1e-4).all()  # each in its range
        folder_labels(got, d, 10)  # names of any kind: classes or None, never an exception
