"""IREE's task workers (runtime/iree_device.py ``_task_hal``): one per physical
core, and free to run on any core this process may use (IREE's default pins
worker i to core i, which makes a call wait for a core another process holds)."""
import os
import pathlib
import subprocess
import sys
import textwrap

import pytest

from openjax._src.runtime import iree_device

_SCRIPT = textwrap.dedent("""
    import glob, os
    import numpy as np
    import openjax as jax
    from openjax._src.config import config
    config.update("openjax_executor", "iree")
    config.update("openjax_tiered_compilation", False)
    x = np.ones((300, 300), np.float32)
    import time
    from openjax._src.runtime import iree_device
    np.asarray(jax.jit(lambda a: a @ a + 1)(x))      # big enough for the task queue
    # A worker names itself once it first runs: on a busy machine that may
    # come after the call returns.
    want = iree_device._physical_cores(os.sched_getaffinity(0))
    deadline = time.monotonic() + 10
    while True:
      workers = [t for t in glob.glob(f"/proc/{os.getpid()}/task/*")
                 if open(t + "/comm").read().startswith("iree-worker")]
      if len(workers) >= want or time.monotonic() > deadline:
        break
      time.sleep(0.05)
    for t in workers:
      status = open(t + "/status").read()
      print(status.split("Cpus_allowed_list:")[1].split()[0])
""")


def _cpu_list(cpus) -> str:
  """``{0, 1, 2, 5}`` as Linux prints it: ``0-2,5``."""
  out, run = [], []
  for c in sorted(cpus):
    if run and c == run[-1] + 1:
      run.append(c)
      continue
    if run:
      out.append(f"{run[0]}-{run[-1]}" if len(run) > 1 else str(run[0]))
    run = [c]
  out.append(f"{run[0]}-{run[-1]}" if len(run) > 1 else str(run[0]))
  return ",".join(out)


@pytest.mark.skipif(not pathlib.Path("/proc/self/task").exists(), reason="needs Linux /proc")
def test_workers_are_not_pinned_to_one_core():
  env = dict(os.environ, PYTHONPATH=str(pathlib.Path(__file__).parents[1]))
  env.pop("OPENJAX_CPU_THREADS", None)
  out = subprocess.run([sys.executable, "-c", _SCRIPT], env=env, capture_output=True,
                       text=True, timeout=300, check=True).stdout.split()
  allowed = os.sched_getaffinity(0)
  assert len(out) == iree_device._physical_cores(allowed)
  assert set(out) == {_cpu_list(allowed)}


def test_physical_cores_counts_sibling_sets():
  cpus = os.sched_getaffinity(0)
  assert 1 <= iree_device._physical_cores(cpus) <= len(cpus)
  assert iree_device._physical_cores({10 ** 6}) == 1   # no topology file: one per CPU
