"Issue 35: the C allocator is a dimension of a configuration, and a worker really runs the one its row names."
import ctypes, multiprocessing, os
from pathlib import Path
import pytest
from conftest import FAST_API
from throughput_bench import infer
from throughput_bench.scale import sweep
from throughput_bench.machine.allocator import LIBRARIES, library_path, apply
from throughput_bench.core import ALLOCATORS

def _available(a):
    "The allocators this machine has (CI installs them all: TB_REQUIRE_ALLOCATORS=1 makes a missing one a failure)."
    if a in LIBRARIES and library_path(a) is None:
        if os.environ.get('TB_REQUIRE_ALLOCATORS'): pytest.fail(f"{a} is not installed ({LIBRARIES[a][0]})")
        pytest.skip(f"{a} is not installed here")
    return a

BLOCK = 64 << 20  # above glibc's largest dynamic mmap threshold (32 MiB): mapped at its defaults, kept when retained

def probe(conn, allocator):
    """In a worker: do what a worker does first (`apply`), then look at the process with nothing of the package: the
    allocator libraries `/proc/self/maps` lists, and whether glibc maps a 64 MiB block (mallinfo2's hblkhd)."""
    apply(allocator)
    maps = Path('/proc/self/maps').read_text().splitlines()
    libs = sorted({l.split()[-1] for l in maps if 'malloc' in l.split()[-1] and '.so' in l.split()[-1]})
    libc = ctypes.CDLL(None)
    class Info(ctypes.Structure):  # glibc's struct mallinfo2
        _fields_ = [(f, ctypes.c_size_t)
                    for f in 'arena ordblks smblks hblks hblkhd usmblks fsmblks uordblks fordblks keepcost'.split()]
    libc.mallinfo2.restype = Info
    libc.malloc.restype, libc.malloc.argtypes, libc.free.argtypes = ctypes.c_void_p, [ctypes.c_size_t], [ctypes.c_void_p]
    before = libc.mallinfo2().hblkhd
    p = libc.malloc(BLOCK); grew = libc.mallinfo2().hblkhd - before; libc.free(p)
    conn.send(dict(libs=libs, mapped=grew >= BLOCK, pid=os.getpid(), server=os.getppid(),
                   env={k: v for k, v in os.environ.items() if k.startswith(('MALLOC_', 'LD_PRELOAD'))}))
    conn.close()

def in_worker(allocator):
    "What `probe` sees in a worker started for `allocator`, as a sweep starts it."
    recv, send = multiprocessing.Pipe(duplex=False)
    p = sweep.worker_process(allocator, probe, (send, allocator))
    with sweep._no_main(): p.start()
    send.close()
    got = recv.recv(); p.join()
    return got

@pytest.mark.parametrize('allocator', ALLOCATORS)
def test_a_worker_runs_the_allocator_its_row_names(allocator, monkeypatch):
    "Read back inside the worker: the preloaded library mapped, glibc's mmap threshold as set; nothing else preloaded."
    _available(allocator)
    # the shell's own allocator settings never reach a glibc worker
    monkeypatch.setenv('MALLOC_MMAP_THRESHOLD_', str(1 << 30))
    got = in_worker(allocator)
    if allocator in LIBRARIES:
        assert [os.path.realpath(l) for l in got['libs']] == [os.path.realpath(library_path(allocator))], got
        assert got['env']['LD_PRELOAD'].split(':')[0] == library_path(allocator)
    else:
        assert got['libs'] == [], got
        # glibc at its defaults maps the block and hands it back; told to retain, it keeps it in its heap
        assert got['mapped'] == (allocator == 'glibc'), got

def test_two_allocators_in_one_sweep_never_share_a_worker_or_a_server(tmp_path):
    """A sweep over two allocators: each row names the allocator its worker read back, each worker is its own process,
    forked from its allocator's own server."""
    two = ['glibc-retain', _available('jemalloc' if library_path('jemalloc') else 'tcmalloc')]
    df = infer(['resnet18'], allocators=two, results_dir=str(tmp_path), **FAST_API)
    assert sorted(df.allocator) == sorted(two) and df.status.eq('ok').all(), df[['allocator', 'status', 'error']]
    assert (df.throughput_mean > 0).all()
    servers = {a: sweep._servers[a].pid() for a in two}
    assert len(set(servers.values())) == 2 and all(servers.values())
    # a worker of each, started as the sweep starts them: from its own allocator's server, in a process of its own
    seen = {a: in_worker(a) for a in two}
    assert {a: s['server'] for a, s in seen.items()} == servers
    assert len({s['pid'] for s in seen.values()}) == 2

def test_an_allocator_missing_here_is_a_skipped_row_naming_the_package(tmp_path, monkeypatch):
    "A preloaded allocator whose library is not on the system: no worker starts; the plan says what to install."
    monkeypatch.setattr('throughput_bench.machine.allocator.library_path', lambda a: None)
    from throughput_bench.core import BenchSpec
    why = sweep.skip_reason(BenchSpec('resnet18', input_channels=3, input_size=32, allocator='tcmalloc'))
    assert 'libtcmalloc' in why and 'install' in why
