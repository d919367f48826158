"""Loops and conds inside shard_map with check_vma: a scan/fori_loop/
while_loop carry that leaves the body varying over other manual axes than
it came in with, and cond/switch branches that vary differently, raise
JAX 0.10.2's TypeErrors (the types with their {V:...}, its ``pcast``
advice); with ``pcast`` or ``check_vma=False`` they run, with JAX's values;
a scan's ys keep the body's varying axes. Traced under jit and eagerly, on
2 and 4 CPU devices, against JAX's stored outcomes
(tests/data/vma_leftovers/: cases.py, generate.py, expected.json)."""
import importlib.util
import json
import pathlib
import re

import pytest

import openjax as jax
from tests.test_pmap import cpu_devices

DATA = pathlib.Path(__file__).parent / "data" / "vma_leftovers"
EXPECTED = json.loads((DATA / "expected.json").read_text())


def load_cases():
  spec = importlib.util.spec_from_file_location("vma_leftovers_cases", DATA / "cases.py")
  module = importlib.util.module_from_spec(spec)
  spec.loader.exec_module(module)
  return module


CASES = load_cases()


def same_paths(text: str) -> str:
  # Messages name the branch functions' file, which JAX saw elsewhere.
  return re.sub(r"at \S*cases\.py:", "at cases.py:", text)


@pytest.fixture(scope="module", params=[2, 4], ids=lambda n: f"{n}dev")
def outcomes(request):
  with cpu_devices(request.param):
    return request.param, CASES.vma_cases(jax, request.param)


@pytest.mark.parametrize("name", sorted(EXPECTED["4"]["vma"]))
def test_loop_and_cond_vma_as_jax(outcomes, name):
  n, got = outcomes
  assert same_paths(got[name]) == same_paths(EXPECTED[str(n)]["vma"][name])


def test_carry_error_is_a_type_error():
  with cpu_devices(4):
    P = jax.sharding.PartitionSpec
    mesh = jax.make_mesh((2, 2), ("i", "j"),
                         axis_types=(jax.sharding.AxisType.Auto,) * 2)

    def body(x):
      return jax.lax.fori_loop(0, 2, lambda i, c: c + x, jax.numpy.zeros(2))
    f = jax.jit(jax.shard_map(body, mesh=mesh, in_specs=P("i"), out_specs=P("i")))
    with pytest.raises(TypeError, match=r"jax\.lax\.pcast\(\.\.\., \('i',\), to='varying'\)"):
      f(jax.numpy.ones(4))


@pytest.mark.parametrize("executor", ["interpreter", "iree"])
@pytest.mark.parametrize("n", [2, 4])
def test_jit_of_shard_map_places_results_as_jax(n, executor):
  # Interpreted or compiled, jit of shard_map hands back Arrays laid out
  # over the mesh (one shard per device), as JAX's are.
  with cpu_devices(n), jax.config.override("openjax_executor", executor):
    got = CASES.placement_cases(jax, n)
  assert got == EXPECTED[str(n)]["placement"]


@pytest.mark.parametrize("executor", ["interpreter", "iree"])
@pytest.mark.parametrize("n", [2, 4])
def test_partially_manual_body_typed_along_explicit_axes(n, executor):
  # shard_map manual over some axes of an Explicit mesh: the body's values
  # are typed with the other axes they are split over (f32[4,4@j]{V:i}),
  # sharding rules apply inside, eagerly and traced, and the results are
  # laid out over the whole mesh along those axes too.
  with cpu_devices(n), jax.config.override("openjax_executor", executor):
    got = CASES.partial_explicit_cases(jax, n)
  assert got == EXPECTED[str(n)]["partial_explicit"]
