"""Printed shardings as JAX 0.10.2 prints them (issue 16), interpreted and
compiled, on 2 and 4 CPU devices, against JAX's stored outcomes
(tests/data/sharding_leftovers10/: cases.py, generate.py, expected.json):

- ``jnp.zeros``/``ones``/``empty``/``full`` with ``out_sharding`` inside a
  shard_map body manual over 'i' of an Explicit ('i', 'j') mesh, eagerly
  and under jit, are typed split along 'j' (``f32[4,4@j]`` over the body's
  (Manual, Explicit) mesh) and results come out split along it; under jit
  with a context mesh likewise; JAX's errors for Manual/Auto axes, a
  foreign mesh and a PartitionSpec without a mesh.
- where a jit call's results lie: SingleDeviceSharding with no mesh (also
  when the only sharded arguments are never read), over the context mesh
  under ``jax.set_mesh``, ``P()`` for values whose type names no mesh.
- ``jax.typeof`` of a jit argument made off the mesh names the empty mesh
  under ``jax.set_mesh``; values computed inside name the context mesh."""
import importlib.util
import json
import pathlib

import pytest

import openjax as jax
from tests.test_pmap import cpu_devices

DATA = pathlib.Path(__file__).parent / "data" / "sharding_leftovers10"
EXPECTED = json.loads((DATA / "expected.json").read_text())


def load_cases():
  spec = importlib.util.spec_from_file_location("sharding_leftovers10_cases", DATA / "cases.py")
  module = importlib.util.module_from_spec(spec)
  spec.loader.exec_module(module)
  return module


CASES = load_cases()
GROUPS = {"creation": CASES.creation_cases, "placement": CASES.placement_cases,
          "typeof": CASES.typeof_cases}


@pytest.fixture(scope="module", params=[(2, "interpreter"), (4, "interpreter"), (2, "iree"),
                                        (4, "iree")], ids=lambda p: f"{p[0]}dev-{p[1]}")
def outcomes(request):
  n, executor = request.param
  with cpu_devices(n), jax.config.override("openjax_executor", executor):
    return n, {group: run(jax, n) for group, run in GROUPS.items()}


@pytest.mark.parametrize("group,name", [(g, name) for g in GROUPS
                                        for name in sorted(EXPECTED["4"][g])])
def test_printed_as_jax(outcomes, group, name):
  n, got = outcomes
  assert got[group][name] == EXPECTED[str(n)][group][name]
