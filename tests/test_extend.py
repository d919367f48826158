"""The JAX-internal interfaces libraries import (found running optax/flax under
``alias_jax``): ``jax.extend`` (core, linear_util, source_info_util),
``jax.interpreters.partial_eval``, ``jax._src.traceback_util``,
``jax.experimental.layout`` and ``jax.dtypes``' extended-dtype helpers."""
import numpy as np
import pytest

import openjax as jax
import openjax.numpy as jnp
from openjax import dtypes
from openjax._src import traceback_util
from openjax._src.dtypes import supports_inf
from openjax._src.core import ShapedArray
from openjax.experimental.layout import Format, Layout
from openjax.extend import core as jex_core
from openjax.extend import linear_util as lu
from openjax.interpreters import partial_eval as pe


def test_opaque_trace_state_tells_traces_apart():
  outside = jex_core.get_opaque_trace_state(convention="flax")
  assert outside == jex_core.get_opaque_trace_state()
  inside = []
  jax.jit(lambda x: inside.append(jex_core.get_opaque_trace_state()) or x)(1.0)
  assert inside[0] != outside


def test_mapped_and_unmapped_avals():
  aval = ShapedArray((3, 4), np.dtype(np.float32))
  assert jex_core.mapped_aval(3, 0, aval).shape == (4,)
  assert jex_core.unmapped_aval(5, 1, aval).shape == (3, 5, 4)
  assert jex_core.mapped_aval(3, None, aval) is aval
  with pytest.raises(ValueError, match="has size 4, not 3"):
    jex_core.mapped_aval(3, 1, aval)


def test_wrap_init_calls_with_params():
  f = lu.wrap_init(lambda x, *, scale: x * scale, {"scale": 3})
  assert f.call_wrapped(2) == 6 and f.__name__ == "<lambda>"


def test_trace_to_jaxpr_nounits_runs_known_parts():
  f = lu.wrap_init(lambda x, y: [jnp.sin(x) * 2, x + y, jnp.ones(3) * 5])
  jaxpr, out_pvals, residuals = pe.trace_to_jaxpr_nounits(
      f, [pe.PartialVal.known(jnp.float32(1.0)),
          pe.PartialVal.unknown(ShapedArray((), np.dtype(np.float32)))])
  assert str(jaxpr) == "{ lambda a:f32[]; b:f32[]. let c:f32[] = add a b in (c,) }"
  assert out_pvals[0].is_known() and not out_pvals[1].is_known()
  np.testing.assert_allclose(out_pvals[0].get_known(), 2 * np.sin(1.0), rtol=1e-6)
  np.testing.assert_array_equal(out_pvals[2].get_known(), [5, 5, 5])
  assert out_pvals[1].get_aval().shape == () and len(residuals) == 1


def test_traceback_util_and_source_info_record_exclusions():
  assert traceback_util.api_boundary(len) is len
  assert traceback_util.api_boundary(repro_api_name="x")(len) is len
  from openjax.extend import source_info_util
  source_info_util.register_exclusion("/some/lib.py")
  assert "/some/lib.py" in traceback_util._exclude_paths


def test_layout_and_format():
  assert Format().layout is None and Format(Layout.AUTO).layout is Layout.AUTO
  assert Layout((1, 0)) == Layout((1, 0)) and hash(Layout((0,))) == hash(Layout((0,)))
  with pytest.raises(ValueError, match="Sharding has to be concrete"):
    Format(Layout((0,)))
  with pytest.raises(TypeError, match="Invalid value received for the layout"):
    Format("row-major")


def test_dtype_helpers_match_jax():
  # JAX 0.10.2: 4 64 8 float int bool; fn float8s have no inf.
  assert dtypes.itemsize_bits(jnp.int4) == 4 and dtypes.itemsize_bits(jnp.complex64) == 64
  assert dtypes.itemsize_bits(bool) == 8
  assert dtypes.scalar_type_of(jnp.bfloat16(1)) is float
  assert dtypes.scalar_type_of(jnp.ones(2, jnp.int4)) is int
  assert dtypes.scalar_type_of(True) is bool and dtypes.scalar_type_of(1j) is complex
  assert not supports_inf(jnp.float8_e4m3fn) and supports_inf(jnp.float16)
  assert not supports_inf(jnp.int32)


# ------------------------------- primitives written with JAX's conventions and tables
from openjax.interpreters import ad, batching, mlir  # noqa: E402
from openjax._src.core import registry  # noqa: E402


@pytest.fixture(autouse=True)
def _restore_registry():
  # Primitives made here must not reach tests/test_registry.py's checks of
  # openjax's own primitives (a later test in the same process).
  before = set(registry)
  yield
  for name in set(registry) - before:
    del registry[name]


def _make_scaled_sin():
  """A primitive as libraries (equinox) define it against JAX."""
  p = jex_core.Primitive("test_scaled_sin")
  p.def_impl(lambda x, *, scale: jnp.sin(x) * scale)
  p.def_abstract_eval(lambda x, *, scale: ShapedArray(x.shape, x.dtype))

  def jvp(primals, tangents, *, scale):
    (x,), (t,) = primals, tangents
    out = p.bind(x, scale=scale)
    if type(t) is ad.Zero:
      return out, ad.Zero.from_primal_value(out)
    return out, jnp.cos(x) * scale * t

  def batch(vals, dims, *, scale):
    return p.bind(vals[0], scale=scale), dims[0]

  ad.primitive_jvps[p] = jvp
  batching.primitive_batchers[p] = batch
  mlir.register_lowering(p, mlir.lower_fun(lambda x, *, scale: jnp.sin(x) * scale,
                                           multiple_results=False))
  return p


def test_extend_primitive_with_jax_conventions_transforms():
  p = _make_scaled_sin()
  x = jnp.array([0.1, 0.5, 1.0])
  out = p.bind(x, scale=2.0)  # a bare result, as in JAX
  np.testing.assert_allclose(out, 2 * np.sin(np.asarray(x)), rtol=1e-6)
  np.testing.assert_allclose(jax.jit(lambda v: p.bind(v, scale=2.0))(x), out, rtol=1e-6)
  np.testing.assert_allclose(jax.grad(lambda v: p.bind(v, scale=3.0).sum())(x),
                             3 * np.cos(np.asarray(x)), rtol=1e-6)
  np.testing.assert_allclose(jax.vmap(lambda v: p.bind(v, scale=2.0))(x.reshape(3, 1)),
                             np.asarray(out).reshape(3, 1), rtol=1e-6)
  assert "test_scaled_sin" in str(jax.make_jaxpr(lambda v: p.bind(v, scale=2.0))(x))


def test_extend_primitive_compiles_through_lower_fun():
  p = _make_scaled_sin()
  x = jnp.array([0.25, 2.0])
  with jax.config.override("openjax_executor", "iree"), \
       jax.config.override("openjax_tiered_compilation", False):
    compiled = jax.jit(lambda v: p.bind(v, scale=0.5))(x)
  assert compiled._buffer is not None  # ran compiled by IREE
  np.testing.assert_allclose(compiled, 0.5 * np.sin(np.asarray(x)), rtol=1e-6)


def test_mlir_api_lowering_raises_when_needed():
  p = jex_core.Primitive("test_mlir_only")
  p.def_impl(lambda x: x)
  p.def_abstract_eval(lambda x: x)
  mlir.register_lowering(p, lambda ctx, x: [x])
  np.testing.assert_array_equal(p.bind(jnp.ones(2)), [1, 1])
  with pytest.raises(NotImplementedError, match="JAX's MLIR Python API"):
    jax.jit(lambda v: p.bind(v)).lower(jnp.ones(2)).as_text()


def test_multiple_results_and_transpose_table():
  p = jex_core.Primitive("test_swap")
  p.multiple_results = True
  p.def_impl(lambda x, y: (y, x))
  p.def_abstract_eval(lambda x, y: [y, x])
  ad.primitive_jvps[p] = lambda primals, tangents: (p.bind(*primals), p.bind(
      *(ad.instantiate_zeros(t) for t in tangents)))
  ad.primitive_transposes[p] = lambda cts, x, y: p.bind(*(ad.instantiate_zeros(c) for c in cts))
  a, b = p.bind(jnp.ones(2), jnp.zeros(2))
  np.testing.assert_array_equal(a, [0, 0])
  g = jax.grad(lambda x, y: (p.bind(x, y)[0] * jnp.arange(2.0)).sum(), argnums=(0, 1))(
      jnp.ones(2), jnp.ones(2))
  np.testing.assert_array_equal(g[0], [0, 0])
  np.testing.assert_array_equal(g[1], [0, 1])


def test_api_util_flattens_wrapped_functions():
  from openjax import api_util, tree_util
  fun = lu.wrap_init(lambda a, b: {"sum": a + b["x"], "pair": (a, b["x"])})
  in_tree = tree_util.tree_structure((1.0, {"x": 2.0}))
  flat, out_tree = api_util.flatten_fun_nokwargs(fun, in_tree)
  with pytest.raises(ValueError, match="known only after"):
    out_tree()
  leaves = flat.call_wrapped(jnp.float32(1.0), jnp.float32(2.0))
  assert tree_util.tree_unflatten(out_tree(), leaves)["pair"][1] == 2.0
  assert [float(v) for v in leaves] == [1.0, 2.0, 3.0]
  kw_tree = tree_util.tree_structure(((1.0,), {"b": {"x": 2.0}}))
  flat_kw, out_kw = api_util.flatten_fun(fun, kw_tree)
  assert len(flat_kw.call_wrapped(1.0, 2.0)) == 3 and out_kw().num_leaves == 3
  info = api_util.debug_info("scan", len, (), {})
  assert info.func_name == "len"
  assert api_util.shaped_abstractify(jnp.ones((2, 3))).shape == (2, 3)
  assert issubclass(ShapedArray, jax.core.AbstractValue)
