"""glibc's allocator, tuned for ``wagon fit`` (``keep_freed_memory``): NumPy temporaries of a
few hundred kB to tens of MB are allocated and freed thousands of times (the likelihoods'
quadrature grids, the parser's gathers). By default glibc maps each large block afresh and
returns freed memory to the kernel, so every reuse faults its pages in again (45,000 page
faults and 0.08 CPU-s of a 0.28 s fit of the session gaps); with blocks up to 32 MiB taken from
the heap and the heap kept, the same fit takes none after its first pass (docs/benchmarks.md).
What a process keeps that way it hands back (``give_back_freed_memory``) before it forks
workers, which would inherit it, and a fit worker after each of its tasks (else it held what the
arrival check of a month's 3.4M session starts leaves, 290 MB, while the other worker ran);
parse and partition workers keep it between tasks (handing it back after each made the next
fault it in again)."""
from __future__ import annotations

import ctypes

M_TRIM_THRESHOLD = -1            # mallopt(3) parameters (malloc.h)
M_MMAP_THRESHOLD = -3
MMAP_THRESHOLD = 32 << 20        # glibc's largest (HEAP_MAX_SIZE / 2 on 64-bit)
TRIM_THRESHOLD = 1 << 30         # freed heap kept up to this much, for the next temporaries


def _libc(name: str):
    """The C library's function ``name`` (None where it has none: not glibc)."""
    try:
        return getattr(ctypes.CDLL(None), name)
    except (OSError, AttributeError, TypeError):          # TypeError: no CDLL(None) (Windows)
        return None


def keep_freed_memory() -> bool:
    """Tune malloc for this process and the workers it forks; False where the C library has no
    ``mallopt`` (not glibc). Python's own small objects are unaffected."""
    mallopt = _libc("mallopt")
    if mallopt is None:
        return False
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    return bool(mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and bool(
        mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD))


def give_back_freed_memory() -> None:
    """Return the heap's free pages to the kernel (glibc's ``malloc_trim``; elsewhere
    nothing)."""
    trim = _libc("malloc_trim")
    if trim is not None:
        trim(0)
