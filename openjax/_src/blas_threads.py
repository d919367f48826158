"""NumPy's OpenBLAS, which eager matrix products call, keeps its threads
spinning for a while after each call (``OPENBLAS_THREAD_TIMEOUT``, 2**n
cycles; its default is ~0.1 s): on a machine with few cores they hold the
cores that compiled programs then run on. A pmap MLP train step (2 devices)
right after an eager op-by-op step took 14.1 ms, 7.4 ms with threads that
sleep at once (5.9 ms after another pmap step); the price is a thread
wake-up (~10-50 us) on the next multithreaded eager product.

OpenBLAS reads the variable when it loads, so this takes effect when openjax
is imported before NumPy (``python -m openjax script.py`` always is); a
value set by the user is kept.
"""
import os

os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")
