"""Varying manual axes (JAX 0.10.2's vma types) in shard_map with
check_vma: the jaxprs and types JAX prints (``f32[4]{V:i}``, ``pvary``,
``psum_invariant``), its errors, and the values of grads that go through
``pvary``/``psum``, all against JAX's stored output
(tests/data/shard_map_vma/: cases.py, generate.py, expected.json). Also
the explicit-mesh in_specs check and dot_general's one-sided contracting
sharding."""
import importlib.util
import json
import pathlib
import re

import numpy as np
import pytest

import openjax as jax
import openjax.numpy as jnp
from openjax import lax
from openjax.sharding import Mesh, NamedSharding, PartitionSpec as P
from tests.ops.rows_vma import ragged_layout, ragged_reference
from tests.test_pmap import CASES, _cases, cpu_devices

DATA = pathlib.Path(__file__).parent / "data" / "shard_map_vma"
EXPECTED = json.loads((DATA / "expected.json").read_text())


def _cases_module():
  spec = importlib.util.spec_from_file_location("shard_map_vma_cases", DATA / "cases.py")
  module = importlib.util.module_from_spec(spec)
  spec.loader.exec_module(module)
  return module


VMA_CASES = _cases_module()


@pytest.fixture(scope="module", params=["interpreter", "iree"])
def printed(request):
  # Interpreted or compiled, jit of shard_map lays results out as JAX does.
  with cpu_devices(4), jax.config.override("openjax_executor", request.param):
    return VMA_CASES.cases(jax)


@pytest.mark.parametrize("name", sorted(EXPECTED["printed"]))
def test_prints_what_jax_prints(printed, name):
  # Python sets of strings print in an order that varies from run to run.
  assert _sets_sorted(printed[name]) == _sets_sorted(EXPECTED["printed"][name])


def _sets_sorted(text: str) -> str:
  return re.sub(r"\{('[^'{}]*'(?:, '[^'{}]*')*)\}",
                lambda m: "{" + ", ".join(sorted(m.group(1).split(", "))) + "}", text)


@pytest.mark.parametrize("name", sorted(EXPECTED["values"]))
def test_values_match_jax(name):
  with cpu_devices(4):
    got = VMA_CASES.values(jax)[name]
  want = EXPECTED["values"][name]
  for g, w in zip(got if isinstance(want[0], list) else [got],
                  want if isinstance(want[0], list) else [want]):
    np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-5)


@pytest.mark.parametrize("n", [2, 4, 8])
def test_pvary_grad_sums_device_cotangents(n):
  # d/dw sum_k (w * x_k) = sum_k x_k: pvary's transpose sums over devices.
  with cpu_devices(n) as devs:
    mesh = Mesh(np.array(devs), ("i",))
    x = np.arange(2.0 * n, dtype=np.float32)
    f = jax.shard_map(lambda w, b: lax.pcast(w, "i", to="varying") * b, mesh=mesh,
                      in_specs=(P(), P("i")), out_specs=P("i"))
    for run in (jax.grad(lambda w: f(w, x).sum()), jax.jit(jax.grad(lambda w: f(w, x).sum()))):
      np.testing.assert_allclose(float(run(np.float32(3.0))), x.sum(), rtol=1e-5)


@pytest.mark.parametrize("n", [2, 4, 8])
def test_check_vma_false_has_no_types(n):
  with cpu_devices(n) as devs:
    mesh = Mesh(np.array(devs), ("i",))
    seen = []

    def body(b):
      seen.append(str(jax.typeof(b)))
      y = lax.pcast(b, "i", to="varying")   # a no-op without types, as in JAX
      return lax.psum(y, "i")
    f = jax.shard_map(body, mesh=mesh, in_specs=P("i"), out_specs=P(), check_vma=False)
    x = np.arange(2.0 * n, dtype=np.float32)
    text = str(jax.make_jaxpr(f)(x))
    assert seen == ["float32[2]"] and "pvary" not in text and "psum[" in text
    np.testing.assert_allclose(np.asarray(f(x)), x.reshape(n, 2).sum(0), rtol=1e-5)


def test_psum_groups_need_check_vma_false():
  # As JAX 0.10.2: NotImplementedError with check_vma, the grouped sums without.
  with cpu_devices(4) as devs:
    mesh = Mesh(np.array(devs), ("i",))
    x = np.arange(4.0, dtype=np.float32)
    body = lambda a: lax.psum(a, "i", axis_index_groups=[[0, 1], [2, 3]])
    with pytest.raises(NotImplementedError):
      jax.shard_map(body, mesh=mesh, in_specs=P("i"), out_specs=P("i"))(x)
    f = jax.shard_map(body, mesh=mesh, in_specs=P("i"), out_specs=P("i"), check_vma=False)
    for run in (f, jax.jit(f)):
      np.testing.assert_array_equal(np.asarray(run(x)), [1, 1, 5, 5])


def test_explicit_mesh_in_specs_must_match_layout():
  with cpu_devices(2):
    mesh = jax.make_mesh((2,), ("i",))   # Explicit axes
    f = jax.shard_map(lambda a: a * 2, mesh=mesh, in_specs=P("i"), out_specs=P("i"))
    with pytest.raises(ValueError, match=r"in_specs passed to shard_map: P\('i',\) does not "
                       r"match the specs of the input: P\(None,\) for arg: float32\[6\]"):
      f(np.arange(6.0, dtype=np.float32))
    x = jax.device_put(np.arange(6.0, dtype=np.float32), NamedSharding(mesh, P("i")))
    np.testing.assert_array_equal(np.asarray(f(x)), 2 * np.arange(6.0))
    np.testing.assert_array_equal(np.asarray(jax.jit(f)(x)), 2 * np.arange(6.0))


@pytest.mark.parametrize("specs", [(P(None, "x"), P()), (P(), P("x", None))])
def test_dot_contracting_split_on_one_side(specs):
  # JAX's rule: the result is whole along the summed dimension (an all-reduce).
  with cpu_devices(4):
    mesh = jax.make_mesh((4,), ("x",))
    rng = np.random.default_rng(0)
    a = rng.standard_normal((8, 16)).astype(np.float32)
    b = rng.standard_normal((16, 4)).astype(np.float32)
    A = jax.device_put(a, NamedSharding(mesh, specs[0]))
    B = jax.device_put(b, NamedSharding(mesh, specs[1]))
    for out in ((A @ B), jax.jit(lambda u, v: u @ v)(A, B)):
      assert str(jax.typeof(out)) == "float32[8,4]"
      np.testing.assert_allclose(np.asarray(out), a @ b, rtol=1e-4, atol=1e-4)
    with pytest.raises(Exception, match="ambiguous"):
      jax.device_put(a, NamedSharding(mesh, P(None, "x"))) @ jax.device_put(
          b, NamedSharding(mesh, P("x", None)))


def test_jnp_dot_out_sharding():
  with cpu_devices(8):
    mesh = jax.make_mesh((4, 2), ("x", "y"))
    a = jax.device_put(np.arange(128.0, dtype=np.float32).reshape(8, 16),
                       NamedSharding(mesh, P("x", "y")))
    b = jax.device_put(np.arange(64.0, dtype=np.float32).reshape(16, 4),
                       NamedSharding(mesh, P("y", None)))
    want = np.asarray(a) @ np.asarray(b)
    for out in (jnp.dot(a, b, out_sharding=NamedSharding(mesh, P("x", None))),
                jax.jit(lambda u, v: jnp.dot(u, v, out_sharding=NamedSharding(
                    mesh, P("x", None))))(a, b)):
      assert str(jax.typeof(out)) == "float32[8@x,4]"
      np.testing.assert_allclose(np.asarray(out), want, rtol=1e-5)


# ------------------------------------------------------------ ragged_all_to_all


def test_ragged_all_to_all_docstring_example():
  # JAX's docstring: members 0 and 1 end with [1, 3, 0, 0] and [2, 2, 4, 0].
  with cpu_devices(2) as devs:
    mesh = Mesh(np.array(devs), ("i",))
    i32 = lambda v: np.array(v, np.int32)
    args = (np.array([1, 2, 2, 3, 4, 0], np.float32), np.zeros(8, np.float32),
            i32([0, 1, 0, 1]), i32([1, 2, 1, 1]), i32([0, 0, 1, 2]), i32([1, 1, 2, 1]))
    f = jax.shard_map(lambda *a: lax.ragged_all_to_all(*a, axis_name="i"), mesh=mesh,
                      in_specs=P("i"), out_specs=P("i"))
    for run in (f, jax.jit(f)):
      np.testing.assert_array_equal(np.asarray(run(*args)), [1, 3, 0, 0, 2, 2, 4, 0])


@pytest.mark.parametrize("n,per_member", [(2, 1), (2, 3), (4, 1), (4, 2), (8, 1)])
@pytest.mark.parametrize("mode", ["shard_map", "jit", "pmap", "jit_pmap"])
def test_ragged_all_to_all_matches_numpy(n, per_member, mode):
  rows = 2 * n * per_member
  layout = ragged_layout(n, per_member, seed=n + per_member)
  rng = np.random.default_rng(n)
  operand = rng.standard_normal((n, rows, 3)).astype(np.float32)
  output = rng.standard_normal((n, rows, 3)).astype(np.float32)
  want = ragged_reference(operand, output, *layout)
  with cpu_devices(n) as devs:
    if mode.endswith("pmap"):
      f = jax.pmap(lambda *a: lax.ragged_all_to_all(*a, axis_name="i"), axis_name="i")
    else:
      mesh = Mesh(np.array(devs), ("i",))
      f = jax.shard_map(lambda *a: lax.ragged_all_to_all(*(b[0] for b in a), axis_name="i")[None],
                        mesh=mesh, in_specs=P("i"), out_specs=P("i"))
    if mode.startswith("jit"):
      f = jax.jit(f)
    np.testing.assert_array_equal(np.asarray(f(operand, output, *layout)), want)


@pytest.mark.parametrize("n", [2, 4, 8])
def test_ragged_all_to_all_grad(n):
  # d/d(operand, output) of sum(w * result): a received row's weight goes
  # back to its sender's row; unwritten output rows keep theirs.
  per_member = 1
  rows = 2 * n * per_member
  layout = ragged_layout(n, per_member, seed=3)
  rng = np.random.default_rng(0)
  operand = rng.standard_normal((n, rows)).astype(np.float32)
  output = rng.standard_normal((n, rows)).astype(np.float32)
  w = rng.standard_normal((n, rows)).astype(np.float32)
  index = np.arange(n * rows, dtype=np.float32).reshape(n, rows)
  moved = ragged_reference(index, np.full((n, rows), -1.0, np.float32), *layout)
  want_operand = np.zeros((n, rows), np.float32)
  for (d, r), src in np.ndenumerate(moved):
    if src >= 0:
      want_operand.flat[int(src)] += w[d, r]
  want_output = np.where(moved < 0, w, 0)
  with cpu_devices(n) as devs:
    mesh = Mesh(np.array(devs), ("i",))
    f = jax.shard_map(lambda *a: lax.ragged_all_to_all(*(b[0] for b in a), axis_name="i")[None],
                      mesh=mesh, in_specs=P("i"), out_specs=P("i"))
    loss = lambda a, b: jnp.sum(f(a, b, *layout) * w)
    for grad in (jax.grad(loss, (0, 1)), jax.jit(jax.grad(loss, (0, 1)))):
      g_operand, g_output = grad(operand, output)
      np.testing.assert_allclose(np.asarray(g_operand), want_operand, rtol=1e-6)
      np.testing.assert_allclose(np.asarray(g_output), want_output, rtol=1e-6)


def test_ragged_all_to_all_checks_its_operands():
  with cpu_devices(2) as devs:
    mesh = Mesh(np.array(devs), ("i",))
    f = jax.shard_map(lambda *a: lax.ragged_all_to_all(*a, axis_name="i"), mesh=mesh,
                      in_specs=P("i"), out_specs=P("i"))
    ints = np.zeros(4, np.int32)
    with pytest.raises(ValueError, match="input_offsets must be integer type"):
      f(np.zeros(4, np.float32), np.zeros(4, np.float32), np.zeros(4, np.float32), ints, ints,
        ints)


# ------------------------------------------- jit around pmap/shard_map, compiled


@pytest.fixture
def compiled():
  jax.config.update("openjax_executor", "iree")
  try:
    yield
  finally:
    jax.config.update("openjax_executor", "interpreter")


@pytest.mark.parametrize("n", [1, 2, 4, 8])
def test_jit_of_pmap_runs_one_program_per_device(compiled, n):
  with cpu_devices(n) as devs:
    for case in CASES:
      f, x, ref = _cases(n)[case]
      out = jax.jit(jax.pmap(f, axis_name="i"))(x)
      np.testing.assert_allclose(np.asarray(out), ref(x), rtol=1e-5, atol=1e-5, err_msg=case)
      # Each device holds its own result row (not one program's output on device 0).
      assert [s.device for s in out.addressable_shards] == list(devs[:n]), case


@pytest.mark.parametrize("n", [2, 4, 8])
def test_jit_of_shard_map_between_other_operations(compiled, n):
  with cpu_devices(n) as devs:
    mesh = Mesh(np.array(devs), ("i",))
    sm = jax.shard_map(lambda v: lax.psum(v, "i") * v, mesh=mesh, in_specs=P("i"),
                       out_specs=P("i"))
    x = np.arange(4.0 * n, dtype=np.float32)
    want = (x + 1).reshape(n, 4).sum(0).repeat(1)[None].repeat(n, 0).reshape(-1) * (x + 1) * 2
    f = jax.jit(lambda v: sm(v + 1.0) * 2.0)
    np.testing.assert_allclose(np.asarray(f(x)), want, rtol=1e-5)
    inner = jax.jit(sm)(x + 1.0)
    assert [s.device for s in inner.addressable_shards] == list(devs)
    g = jax.jit(jax.grad(lambda v: jnp.sum(sm(v))))(x)
    np.testing.assert_allclose(np.asarray(g), jax.grad(lambda v: jnp.sum(sm(v)))(x), rtol=1e-5)
