"""Pausing the cyclic garbage collector while a bulk step allocates."""
from __future__ import annotations

import gc
from contextlib import contextmanager


@contextmanager
def collections_paused():
    """No cyclic garbage collection inside the block. Loading the MUTT sets or scoring a grid allocates hundreds
    of thousands of containers (parsed JSON records, cache keys, reference lists) that reference counting frees;
    each few hundred of them would trigger a collection that walks the process's objects and finds nothing
    (~0.2 s of a cold grid run). Cycles made inside are collected once collection is back on. Nested or
    concurrent blocks leave collection as the outermost found it."""
    paused = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if paused:
            gc.enable()
