"""jit's error for arguments committed to different devices (or to devices
other than its out_shardings'), with the arguments named as JAX 0.10.2
names them (parameter name and key path: ``x``, ``t['q'][0]``,
``args[0]``, ``kw['z']``; static arguments skipped; the function's
qualified name), interpreted and compiled, on 2 and 4 CPU devices, against
JAX's stored texts (tests/data/vma_leftovers/)."""
import pytest

import openjax as jax
from tests.test_pmap import cpu_devices
from tests.test_vma_leftovers import CASES, EXPECTED


@pytest.fixture(scope="module", params=[(2, "interpreter"), (4, "interpreter"), (4, "iree")],
                ids=lambda p: f"{p[0]}dev-{p[1]}")
def outcomes(request):
  n, executor = request.param
  with cpu_devices(n), jax.config.override("openjax_executor", executor):
    return n, CASES.device_error_cases(jax, n)


@pytest.mark.parametrize("name", sorted(EXPECTED["4"]["device_errors"]))
def test_device_errors_name_arguments_as_jax(outcomes, name):
  n, got = outcomes
  assert got[name] == EXPECTED[str(n)]["device_errors"][name]
