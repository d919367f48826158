"""Named-axis collectives (lax.psum and friends) inside vmap: values against
NumPy statements of each collective's semantics, nested axes, gradients,
jit, make_jaxpr's axis_env and JAX's errors for unbound names."""
import re

import numpy as np
import pytest

import openjax as jax
import openjax.numpy as jnp
from openjax import lax
from openjax._src.core import check_jaxpr
from openjax._src.primitives.collectives.collectives import extend_axis_env
from tests.ops.rows_collectives import batching_passes_axis_data

if not batching_passes_axis_data():
  pytest.skip("batching.py does not yet hand collective batch rules their axis as "
              "axis_data", allow_module_level=True)

RNG = np.random.default_rng(0)


def _x(*shape, dtype=np.float32):
  return RNG.standard_normal(shape).astype(dtype)


def vmap_i(f, **kw):
  return jax.vmap(f, axis_name="i", **kw)


def members(x, axis=0):
  """The per-member values of ``x`` mapped along ``axis``."""
  return [np.take(x, k, axis=axis) for k in range(x.shape[axis])]


def close(a, b, rtol=1e-5):
  np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=rtol, atol=1e-5)


# --------------------------------------------------------------- reductions
@pytest.mark.parametrize("name,ref", [("psum", np.sum), ("pmax", np.max), ("pmin", np.min),
                                      ("pmean", np.mean)])
@pytest.mark.parametrize("in_axis", [0, 1])
def test_allreduce(name, ref, in_axis):
  x = _x(4, 3, 2)
  out = vmap_i(lambda v: getattr(lax, name)(v, "i"), in_axes=in_axis)(x)
  expected = np.broadcast_to(ref(x, axis=in_axis), (x.shape[in_axis],) +
                             tuple(np.delete(x.shape, in_axis)))
  assert out.shape == expected.shape and out.dtype == np.float32
  close(out, expected)


def test_psum_jaxpr_is_a_positional_psum():
  jaxpr = jax.make_jaxpr(vmap_i(lambda v: lax.psum(v, "i")))(np.ones((4, 3), np.float32))
  check_jaxpr(jaxpr.jaxpr)
  assert str(jaxpr) == (
      "{ lambda ; a:f32[4,3]. let\n"
      "    b:f32[3] = psum[axes=(0,) axis_index_groups=None] a\n"
      "    c:f32[4,3] = broadcast_in_dim[broadcast_dimensions=(1,)] b\n"
      "  in (c,) }")


def test_psum_of_ints_bools_and_pytrees():
  x = np.arange(8, dtype=np.int32).reshape(4, 2)
  out = vmap_i(lambda v: lax.psum({"a": v, "b": v > 3}, "i"))(x)
  close(out["a"], np.broadcast_to(x.sum(0), (4, 2)))
  assert out["a"].dtype == np.int32 and out["b"].dtype == np.int32
  close(out["b"], np.broadcast_to((x > 3).sum(0), (4, 2)))


def test_pmean_of_ints_is_float():
  out = vmap_i(lambda v: lax.pmean(v, "i"))(np.arange(4, dtype=np.int32))
  assert out.dtype == np.float32
  close(out, np.full(4, 1.5))


def test_unmapped_operand_and_constants():
  seen = {}

  def f(v):
    seen["one"] = lax.psum(1, "i")
    seen["two"] = lax.psum(2.0, "i")
    seen["size"] = lax.axis_size("i")
    seen["mean"] = lax.pmean(1, "i")
    return lax.psum(jnp.ones(3), "i") + 0 * v
  out = vmap_i(f)(_x(5, 3))
  close(out, np.full((5, 3), 5.0))
  assert seen == {"one": 5, "two": 10.0, "size": 5, "mean": 1.0}
  assert type(seen["one"]) is int and type(seen["two"]) is float


def test_positional_psum_outside_vmap():
  x = _x(3, 4)
  close(lax.psum(x, 0), x.sum(0))
  close(lax.pmax(x, (0, 1)), x.max())
  close(jax.jit(lambda v: lax.psum(v, (1,)))(x), x.sum(1))


def test_psum_over_named_and_positional_axes():
  x = _x(4, 3)
  out = vmap_i(lambda v: lax.psum(v, ("i", 0)))(x)
  close(out, np.full(4, x.sum()))


# ------------------------------------------------------------- nested axes
def vmap_ij(f):
  return jax.vmap(jax.vmap(f, axis_name="j"), axis_name="i")


def test_nested_psum_over_both_names():
  x = _x(2, 3, 4)
  close(vmap_ij(lambda v: lax.psum(v, ("i", "j")))(x),
        np.broadcast_to(x.sum((0, 1)), x.shape))
  close(vmap_ij(lambda v: lax.pmean(v, ("i", "j")))(x),
        np.broadcast_to(x.mean((0, 1)), x.shape))
  close(vmap_ij(lambda v: lax.pmax(v, ("j", "i")))(x),
        np.broadcast_to(x.max((0, 1)), x.shape))


@pytest.mark.parametrize("name,axis", [("i", 0), ("j", 1)])
def test_nested_psum_over_one_name(name, axis):
  x = _x(2, 3, 4)
  close(vmap_ij(lambda v: lax.psum(v, name))(x),
        np.broadcast_to(x.sum(axis, keepdims=True), x.shape))
  assert vmap_ij(lambda v: lax.axis_size(name) + 0 * v)(x)[0, 0, 0] == x.shape[axis]


def test_nested_axis_index():
  x = _x(2, 3)
  close(vmap_ij(lambda v: lax.axis_index("i"))(x), np.repeat(np.arange(2)[:, None], 3, 1))
  close(vmap_ij(lambda v: lax.axis_index("j"))(x), np.repeat(np.arange(3)[None], 2, 0))
  out = vmap_ij(lambda v: lax.axis_index(("i", "j")))(x)
  assert out.dtype == np.int32
  close(out, np.arange(6).reshape(2, 3))


def test_same_name_binds_the_innermost_axis():
  x = _x(2, 3)
  f = jax.vmap(jax.vmap(lambda v: lax.psum(v, "i"), axis_name="i"), axis_name="i")
  close(f(x), np.broadcast_to(x.sum(1, keepdims=True), x.shape))


# --------------------------------------------------------------- all_gather
@pytest.mark.parametrize("in_axis", [0, 1])
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_all_gather(in_axis, axis):
  x = _x(4, 3) if in_axis == 0 else _x(3, 4)
  out = vmap_i(lambda v: lax.all_gather(v, "i", axis=axis), in_axes=in_axis)(x)
  stacked = np.stack(members(x, in_axis), axis=axis)
  close(out, np.broadcast_to(stacked, (4,) + stacked.shape))


@pytest.mark.parametrize("axis", [0, 1])
def test_all_gather_tiled(axis):
  x = _x(4, 2, 3)
  out = vmap_i(lambda v: lax.all_gather(v, "i", axis=axis, tiled=True))(x)
  cat = np.concatenate(members(x), axis=axis)
  close(out, np.broadcast_to(cat, (4,) + cat.shape))


def test_all_gather_of_unmapped_value():
  c = np.arange(3, dtype=np.float32)
  out = vmap_i(lambda v: lax.all_gather(c, "i") + 0 * v)(_x(4, 1))
  close(out, np.broadcast_to(c, (4, 4, 3)))


def test_all_gather_outer_name_from_inner_vmap():
  x = _x(2, 3, 4)
  out = vmap_ij(lambda v: lax.all_gather(v, "i"))(x)
  # member (i, j) sees x[:, j]
  expected = np.stack([np.stack([x[:, j] for j in range(3)]) for _ in range(2)])
  close(out, expected)


# ------------------------------------------------------------ psum_scatter
@pytest.mark.parametrize("scatter_dimension", [0, 1])
def test_psum_scatter(scatter_dimension):
  x = _x(4, 4, 4)
  out = vmap_i(lambda v: lax.psum_scatter(v, "i", scatter_dimension=scatter_dimension))(x)
  total = x.sum(0)
  close(out, np.stack([np.take(total, k, axis=scatter_dimension) for k in range(4)]))


def test_psum_scatter_tiled():
  x = _x(4, 8, 3)
  out = vmap_i(lambda v: lax.psum_scatter(v, "i", tiled=True))(x)
  total = x.sum(0)
  close(out, np.stack([total[2 * k:2 * k + 2] for k in range(4)]))


def test_psum_scatter_of_unmapped_value():
  out = vmap_i(lambda v: lax.psum_scatter(jnp.ones(4), "i") + 0 * v)(_x(4))
  close(out, np.full(4, 4.0))


def test_psum_scatter_outer_name_from_inner_vmap():
  x = _x(4, 4, 3)   # (i, scattered, j)
  f = jax.vmap(jax.vmap(lambda v: lax.psum_scatter(v, "i"), in_axes=1, axis_name="j"),
               axis_name="i")
  close(f(x), x.sum(0))


def test_psum_scatter_size_error():
  with pytest.raises(ValueError, match="reduce_scatter operand scatter dimension size 3 must "
                                       "match shard count 4"):
    vmap_i(lambda v: lax.psum_scatter(v, "i"))(_x(4, 3))


# ------------------------------------------------------------ permutations
def test_ppermute_cyclic_shift():
  x = _x(4, 3)
  perm = [(k, (k + 1) % 4) for k in range(4)]
  out = vmap_i(lambda v: lax.ppermute(v, "i", perm))(x)
  close(out, np.roll(x, 1, axis=0))
  out = vmap_i(lambda v: lax.ppermute(v, "i", perm), in_axes=1, out_axes=1)(x.T)
  close(out, np.roll(x, 1, axis=0).T)


def test_ppermute_partial_fills_zeros():
  x = _x(4, 3)
  out = vmap_i(lambda v: lax.ppermute(v, "i", [(0, 2), (1, 3)]))(x)
  close(out, np.concatenate([np.zeros((2, 3)), x[:2]]))
  c = np.float32(2.0)
  close(vmap_i(lambda v: lax.ppermute(c, "i", [(0, 2)]) + 0 * v)(x[:, 0]), [0, 0, 2, 0])


def test_pshuffle():
  x = _x(4, 2)
  out = vmap_i(lambda v: lax.pshuffle(v, "i", [2, 0, 3, 1]))(x)
  close(out, x[[2, 0, 3, 1]])
  with pytest.raises(ValueError, match="does not represent a permutation"):
    vmap_i(lambda v: lax.pshuffle(v, "i", [0, 0, 1, 2]))(x)


def test_pbroadcast():
  x = _x(4, 3)
  close(vmap_i(lambda v: lax.pbroadcast(v, "i", 2))(x), np.broadcast_to(x[2], x.shape))


def _all_to_all_ref(xs, split_axis, concat_axis, tiled):
  n = len(xs)
  outs = []
  for j in range(n):
    if tiled:
      chunks = [np.split(xm, n, axis=split_axis)[j] for xm in xs]
      outs.append(np.concatenate(chunks, axis=concat_axis))
    else:
      chunks = [np.take(xm, j, axis=split_axis) for xm in xs]
      outs.append(np.stack(chunks, axis=concat_axis))
  return np.stack(outs)


@pytest.mark.parametrize("split_axis,concat_axis", [(0, 0), (0, 1), (1, 0), (1, 2), (2, 1)])
def test_all_to_all(split_axis, concat_axis):
  shape = [2, 3, 5]
  shape[split_axis] = 4
  x = _x(4, *shape)
  out = vmap_i(lambda v: lax.all_to_all(v, "i", split_axis, concat_axis))(x)
  close(out, _all_to_all_ref(members(x), split_axis, concat_axis, False))


@pytest.mark.parametrize("split_axis,concat_axis", [(0, 0), (0, 1), (1, 0)])
def test_all_to_all_tiled(split_axis, concat_axis):
  x = _x(4, 8, 4)
  out = vmap_i(lambda v: lax.all_to_all(v, "i", split_axis, concat_axis, tiled=True))(x)
  close(out, _all_to_all_ref(members(x), split_axis, concat_axis, True))


def test_all_to_all_batched_off_front_and_unmapped():
  x = _x(4, 4, 3)
  out = vmap_i(lambda v: lax.all_to_all(v, "i", 0, 1), in_axes=1)(x.transpose(1, 0, 2))
  close(out, _all_to_all_ref(members(x), 0, 1, False))
  c = _x(4, 3)
  out = vmap_i(lambda v: lax.all_to_all(c, "i", 0, 0) + 0 * v)(_x(4, 1, 1))
  close(out, _all_to_all_ref([c] * 4, 0, 0, False))


def test_all_to_all_over_two_names():
  x = _x(2, 3, 12, 2)
  out = vmap_ij(lambda v: lax.all_to_all(v, ("i", "j"), 0, 0, tiled=True))(x)
  flat = [x[i, j] for i in range(2) for j in range(3)]
  close(out, _all_to_all_ref(flat, 0, 0, True).reshape(out.shape))


def test_all_to_all_outer_name_from_inner_vmap():
  x = _x(4, 3, 4, 2)   # (i, j, split, rest)
  out = vmap_ij(lambda v: lax.all_to_all(v, "i", 0, 1))(x)
  for j in range(3):
    close(out[:, j], _all_to_all_ref([x[m, j] for m in range(4)], 0, 1, False))


def test_pswapaxes():
  x = _x(4, 4, 2)
  out = vmap_i(lambda v: lax.pswapaxes(v, "i", 0))(x)
  close(out, _all_to_all_ref(members(x), 0, 0, False))


def test_all_to_all_size_error():
  with pytest.raises(ValueError, match="all_to_all requires the size of the mapped axis "
                                       "axis_name to equal x.shape"):
    vmap_i(lambda v: lax.all_to_all(v, "i", 0, 0))(_x(4, 3))


def test_axis_index():
  out = vmap_i(lambda v: lax.axis_index("i"))(_x(5, 2))
  assert out.dtype == np.int32
  close(out, np.arange(5))
  out = jax.vmap(lambda v: v * lax.axis_index("k"), axis_name="k", in_axes=1,
                 out_axes=1)(np.ones((2, 3), np.float32))
  close(out, np.tile(np.arange(3.0), (2, 1)))


# -------------------------------------------------------------- gradients
def test_grad_through_psum():
  x = _x(4, 3)

  def loss(x):
    return (vmap_i(lambda v: v * lax.psum(v, "i"))(x) ** 2).sum()
  s = x.sum(0)
  # d/dx_k sum_m (x_m * s)^2 = 2 x_k s^2 + sum_m 2 x_m^2 s
  expected = 2 * x * s ** 2 + 2 * (x ** 2).sum(0) * s
  close(jax.grad(loss)(x), expected)


def test_vmap_of_grad_through_psum():
  x = _x(4, 3)
  g = vmap_i(jax.grad(lambda v: (lax.psum(v, "i") ** 2).sum()))(x)
  close(g, np.broadcast_to(2 * 4 * x.sum(0), x.shape))   # psum transposes to psum


def test_jvp_through_collectives():
  x, t = _x(4, 3), _x(4, 3)

  def f(x):
    return vmap_i(lambda v: lax.all_gather(lax.ppermute(v, "i", [(0, 1), (1, 0), (2, 3),
                                                                 (3, 2)]), "i"))(x)
  y, ty = jax.jvp(f, (x,), (t,))
  close(y, f(x))
  close(ty, f(t))   # linear


@pytest.mark.parametrize("fn", [
    lambda v: lax.all_gather(v, "i", axis=1),
    lambda v: lax.all_gather(v, "i", tiled=True),
    lambda v: lax.psum_scatter(v, "i", scatter_dimension=0),
    lambda v: lax.psum_scatter(v, "i", tiled=True),
    lambda v: lax.ppermute(v, "i", [(0, 1), (1, 2), (2, 3), (3, 0)]),
    lambda v: lax.all_to_all(v, "i", 0, 1),
    lambda v: lax.pbroadcast(v, "i", 1),
    lambda v: lax.pmean(v, "i"),
], ids=["all_gather", "all_gather_tiled", "psum_scatter", "psum_scatter_tiled", "ppermute",
        "all_to_all", "pbroadcast", "pmean"])
def test_vjp_of_linear_collectives_inside_vmap(fn):
  # <fn(x), w> == <x, fn^T(w)> with the transpose computed per member by vjp.
  x = _x(4, 4, 4)
  y, vjp = jax.vjp(vmap_i(fn), x)
  w = _x(*y.shape)
  ct, = vjp(w)
  close(np.vdot(np.asarray(y), w), np.vdot(x, np.asarray(ct)), rtol=1e-4)
  inner = vmap_i(lambda v, u: jax.vjp(fn, v)[1](u)[0])(x, w)
  close(inner, ct)


def test_pmax_has_no_derivative():
  with pytest.raises(NotImplementedError, match="Differentiation rule for 'pmax' not "
                                                "implemented"):
    jax.grad(lambda x: vmap_i(lambda v: lax.pmax(v, "i"))(x).sum())(_x(4))


def test_check_grads_psum():
  x = _x(3, 2).astype(np.float64)
  with jax.enable_x64():
    jax.test_util.check_grads(vmap_i(lambda v: jnp.sin(lax.psum(v * v, "i"))), (x,), order=2,
                              modes=("fwd", "rev"))


# -------------------------------------------------------------------- jit
def test_jit_of_vmap_with_psum():
  x = _x(4, 3)
  f = jax.jit(vmap_i(lambda v: v / lax.psum(v, "i")))
  close(f(x), x / x.sum(0))


def test_vmap_of_jit_with_psum():
  x = _x(4, 3)

  @jax.jit
  def g(v):
    return v - lax.pmean(v, "i") + lax.axis_index("i")
  close(vmap_i(g)(x), x - x.mean(0) + np.arange(4)[:, None])
  # the jit cache entry traced under an axis of size 4 is not reused for size 2
  close(vmap_i(g)(x[:2]), x[:2] - x[:2].mean(0) + np.arange(2)[:, None])


# ---------------------------------------------------------------- errors
UNBOUND = "unbound axis name: i"
FOUND = "Found an unbound axis name: i. To fix this, please call {} under `jax.shard_map`."


@pytest.mark.parametrize("fn,api", [
    (lambda v: lax.psum(v, "i"), "psum"), (lambda v: lax.pmax(v, "i"), "psum"),
    (lambda v: lax.pmean(v, "i"), "psum"), (lambda v: lax.axis_index("i"), "axis_index"),
    (lambda v: lax.ppermute(v, "i", [(0, 1)]), "ppermute")])
def test_unbound_axis_name_under_jit(fn, api):
  with pytest.raises(NameError, match=re.escape(FOUND.format(api))):
    jax.jit(fn)(_x(3))
  with pytest.raises(NameError, match=re.escape(FOUND.format(api))):
    jax.vmap(fn, axis_name="j")(_x(2, 3))


@pytest.mark.parametrize("fn", [
    lambda v: lax.psum(v, "i"), lambda v: lax.pmean(v, "i"), lambda v: lax.all_gather(v, "i"),
    lambda v: lax.psum_scatter(v, "i"), lambda v: lax.all_to_all(v, "i", 0, 0),
    lambda v: lax.axis_size("i")])
def test_unbound_axis_name_eager(fn):
  with pytest.raises(NameError, match=UNBOUND):
    fn(np.ones(3, np.float32))


def test_unbound_axis_index_eager():
  with pytest.raises(NameError, match=re.escape(FOUND.format("axis_index"))):
    lax.axis_index("i")


# ---------------------------------------------------- make_jaxpr(axis_env)
AXIS_ENV = [("i", 4), ("j", 2)]


def _pp(f, *args):
  jaxpr = jax.make_jaxpr(f, axis_env=AXIS_ENV)(*args)
  with extend_axis_env(AXIS_ENV):   # the names stay bound for the checker
    check_jaxpr(jaxpr.jaxpr)
  return str(jaxpr)


def test_make_jaxpr_axis_env():
  x = np.ones((4, 2), np.float32)
  assert _pp(lambda v: lax.psum(v, ("i", "j")), x) == (
      "{ lambda ; a:f32[4,2]. let\n"
      "    b:f32[4,2] = psum[axes=('i', 'j') axis_index_groups=None] a\n"
      "  in (b,) }")
  assert _pp(lambda v: lax.psum(1, "i"), x) == "{ lambda ; a:f32[4,2]. let  in (4:i32[],) }"
  assert _pp(lambda v: lax.axis_index("i"), x) == (
      "{ lambda ; a:f32[4,2]. let b:i32[] = axis_index[axis_name=i]  in (b,) }")
  assert _pp(lambda v: lax.all_gather(v, "i", tiled=True, axis=1), x) == (
      "{ lambda ; a:f32[4,2]. let\n"
      "    b:f32[4,8] = all_gather[\n"
      "      all_gather_dimension=1\n"
      "      axis_index_groups=None\n"
      "      axis_name=('i',)\n"
      "      axis_size=4\n"
      "      tiled=True\n"
      "    ] a\n"
      "  in (b,) }")
  assert _pp(lambda v: lax.pshuffle(v, "i", [1, 2, 3, 0]), x) == (
      "{ lambda ; a:f32[4,2]. let\n"
      "    b:f32[4,2] = ppermute[\n"
      "      axis_name=('i',)\n"
      "      perm=((1, 0), (2, 1), (3, 2), (0, 3))\n"
      "    ] a\n"
      "  in (b,) }")
  assert _pp(lambda v: lax.psum_scatter(v, "i", tiled=True), x) == (
      "{ lambda ; a:f32[4,2]. let\n"
      "    b:f32[1,2] = reduce_scatter[\n"
      "      axis_index_groups=None\n"
      "      axis_name=('i',)\n"
      "      axis_size=4\n"
      "      scatter_dimension=0\n"
      "      tiled=True\n"
      "    ] a\n"
      "  in (b,) }")
  assert _pp(lambda v: lax.all_to_all(v, "i", 0, 1, tiled=True), x) == (
      "{ lambda ; a:f32[4,2]. let\n"
      "    b:f32[1,8] = all_to_all[\n"
      "      axis_index_groups=None\n"
      "      axis_name=i\n"
      "      concat_axis=1\n"
      "      split_axis=0\n"
      "      tiled=True\n"
      "    ] a\n"
      "  in (b,) }")


def test_make_jaxpr_axis_env_grad():
  x = np.ones((3,), np.float32)
  text = _pp(jax.grad(lambda v: lax.all_gather(v, "i").sum()), x)
  assert "reduce_scatter" in text and "all_gather" in text
