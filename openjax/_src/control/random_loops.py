"""Random samplers built on rejection loops: ``random_gamma`` (JAX's
primitive: Marsaglia-Tsang, one independent loop per element) and the loops
of JAX's Poisson (Knuth; Hormann's transformed rejection) and binomial
(inversion; BTRS) samplers.

JAX writes the latter as ``lax.while_loop``s inside jitted functions; here
each loop is a primitive, so it runs eagerly, under ``jit`` (a
``stablehlo.while``) and under ``vmap`` without a while primitive. A loop is
described by ``init(*operands) -> state``, ``cond(*state) -> pred`` and
``body(*state) -> state`` written with lax wrappers on values whose leading
dimensions index independent problems: ``pred`` has that problem shape, the
loop runs while any problem is active, and a step updates only active
problems (the semantics of a batched ``while_loop``). So batching just moves
batch dimensions to the front and binds again, and every problem draws the
same values as it would alone.
"""
from __future__ import annotations

import math
from typing import Callable

import numpy as np

from openjax._src import dtypes
from openjax._src.core import (Primitive, ShapedArray, eval_trace, get_aval,
                               set_current_trace)
from openjax._src.core.sharding_rules import replicated_rule
from openjax._src.interpreters.staging import trace_to_jaxpr
from openjax._src.primitives.base.convert import convert_element_type
from openjax._src.primitives.elementwise import arithmetic, special, transcendental
from openjax._src.primitives.elementwise.arithmetic import add, ceil, div, floor, mul, neg
from openjax._src.primitives.elementwise.logic import (bitcast_convert_type, bitwise_and,
                                                       bitwise_not, bitwise_or, clamp, eq, ge, gt,
                                                       le, lt, ne, select, shift_right_logical)
from openjax._src.primitives.elementwise.transcendental import exp, log, log1p, sqrt
from openjax._src.primitives.base.ad_util import Zero, defjvp_zero
from openjax._src.primitives.base.batch_util import axis_size, bdim_at_front
from openjax._src.primitives.random_bits.random_bits import random_bits, random_split
from openjax._src.primitives.reduce.reductions import reduce_or
from openjax._src.primitives.base.structural import broadcast_in_dim, reshape
from openjax._src.primitives.shape.shape import full_like, index_in_dim

__all__ = ["random_gamma_p", "random_gamma", "random_poisson_knuth_p",
           "random_poisson_rejection_p", "random_binomial_inversion_p",
           "random_binomial_btrs_p", "key_draws"]

_U32 = np.dtype(np.uint32)


# ------------------------------------------------------ draws from key arrays
def _c(x, val):
  """``val`` as a constant of ``x``'s dtype (``lax._const``)."""
  return np.array(val, get_aval(x).dtype)


def split_keys(keys, num: int) -> list:
  """``num`` new keys per key of ``keys`` (``u32[*k, 2]``), as JAX's
  ``split(key, num)`` unpacked."""
  parts = random_split(keys, (num,))
  axis = get_aval(parts).ndim - 2
  return [index_in_dim(parts, i, axis, keepdims=False) for i in range(num)]


def key_draws(keys, shape, dtype, minval=0., maxval=1.):
  """JAX's ``uniform(key, shape, dtype, minval, maxval)`` for each key of
  ``keys`` (``u32[*k, 2]`` -> ``dtype[*k, *shape]``)."""
  dtype = np.dtype(dtype)
  finfo = dtypes.finfo(dtype)
  nbits, nmant = finfo.bits, finfo.nmant
  rng_bits = 8 if nmant < 8 else nbits
  uint_dtype = np.dtype(f"uint{nbits}")
  bits = random_bits(keys, rng_bits, shape)
  if rng_bits != nbits:
    bits = convert_element_type(bits, uint_dtype)
  float_bits = shift_right_logical(bits, np.array(rng_bits - nmant, uint_dtype))
  float_bits = bitwise_or(float_bits, np.array(1.0, dtype).view(uint_dtype))
  floats = arithmetic.sub(bitcast_convert_type(float_bits, dtype), np.array(1., dtype))
  minval = np.array(minval, dtype)
  maxval = np.array(maxval, dtype)
  return arithmetic.max(minval, add(mul(floats, arithmetic.sub(maxval, minval)), minval))


def _normal_draws(keys, dtype):
  """JAX's scalar ``normal(key, (), dtype)`` for each key of ``keys``."""
  dtype = np.dtype(dtype)
  lo = np.nextafter(np.array(-1., dtype), np.array(0., dtype), dtype=dtype)
  u = key_draws(keys, (), dtype, lo, 1.)
  return mul(np.array(np.sqrt(2), dtype), special.erf_inv(u))


def _exponential_draws(keys, dtype):
  u = key_draws(keys, (), dtype)
  return neg(log1p(neg(u)))


# -------------------------------------------------------------- loop runner
def _select_active(pred, new, old):
  aval = get_aval(new)
  pshape = get_aval(pred).shape
  if aval.shape != pshape:
    pred = broadcast_in_dim(pred, aval.shape, tuple(range(len(pshape))))
  return select(pred, new, old)


class _Loop:
  """One loop: ``init(*operands)``, ``cond(*state)``, ``body(*state)``."""

  def __init__(self, init: Callable, cond: Callable, body: Callable):
    self.init, self.cond, self.body = init, cond, body

  def masked_body(self, *state):
    pred = self.cond(*state)
    new = self.body(*state)
    return [_select_active(pred, n, s) for n, s in zip(new, state)]

  def run_eager(self, operands):
    state = list(self.init(*operands))
    while True:
      pred = np.asarray(self.cond(*state))
      if not pred.any():
        return state
      new = self.body(*state)
      if pred.all():
        state = list(new)
      else:
        state = [_select_active(pred, n, s) for n, s in zip(new, state)]

  def any_active(self, *state):
    pred = self.cond(*state)
    nd = get_aval(pred).ndim
    return [reduce_or(pred, tuple(range(nd))) if nd else pred]


def _trace(fun, avals):
  return trace_to_jaxpr(lambda *xs: list(fun(*xs)), list(avals))


def _lower_loop(ctx, loop: _Loop, operands, avals_in):
  jaxpr, consts = _trace(loop.init, avals_in)
  state = ctx.lower_jaxpr_inline(jaxpr, list(operands), consts)
  state_avals = [v.aval for v in jaxpr.outvars]
  types = [ctx.aval_type(a) for a in state_avals]
  with ctx.region(types) as cond_region:
    jc, cc = _trace(loop.any_active, state_avals)
    ctx.ret(ctx.lower_jaxpr_inline(jc, cond_region.args, cc))
  with ctx.region(types) as body_region:
    jb, bc = _trace(loop.masked_body, state_avals)
    ctx.ret(ctx.lower_jaxpr_inline(jb, body_region.args, bc))
  return ctx.op("stablehlo.while", list(state), types, regions=[cond_region, body_region]), \
      state_avals


class LoopSampler:
  """A sampler primitive made of one rejection loop and a final step
  ``finish(operands, state, **params) -> output``."""

  def __init__(self, prim: Primitive, loop: Callable, finish: Callable, out_aval: Callable):
    self.prim, self.loop, self.finish, self.out_aval = prim, loop, finish, out_aval
    prim.def_impl(self.impl)
    prim.def_abstract_eval(lambda *avals, **params: [out_aval(*avals, **params)])
    prim.def_lower(self.lower)
    prim.def_batch(self.batch)

  def impl(self, *operands, **params):
    with set_current_trace(eval_trace):
      loop = self.loop(**params)
      state = loop.run_eager(operands)
      out = self.finish(operands, state, **params)
    return [np.asarray(getattr(out, "_value", out))]

  def lower(self, ctx, *operands, **params):
    loop = self.loop(**params)
    state, state_avals = _lower_loop(ctx, loop, operands, ctx.avals_in)
    n = len(operands)
    jaxpr, consts = _trace(lambda *xs: [self.finish(xs[:n], list(xs[n:]), **params)],
                           list(ctx.avals_in) + state_avals)
    return ctx.lower_jaxpr_inline(jaxpr, list(operands) + list(state), consts)

  def batch(self, vals, dims, **params):
    size = axis_size(vals, dims)
    vals = [bdim_at_front(v, d, size) for v, d in zip(vals, dims)]
    return self.prim.bind(*vals, **params), [0]


# ------------------------------------------------------------ random_gamma
random_gamma_p = Primitive("random_gamma")
random_gamma_p.def_sharding_rule(replicated_rule)


def _gamma_element_keys(keys, a):
  """JAX's ``_gamma_impl`` keys: each key of ``keys`` (``[*k, 2]``) split into
  one key per element of the matching trailing block of ``a``."""
  k_shape = get_aval(keys).shape[:-1]
  a_shape = get_aval(a).shape
  count = math.prod(a_shape[len(k_shape):])
  return reshape(random_split(keys, (count,)), a_shape + (2,))


def _gamma_loop(*, log_space):
  # Marsaglia-Tsang per element, with its inner ``while v <= 0`` loop folded
  # into the outer one: ``inner`` marks elements drawing (x, v).
  def init(keys, a):
    one = _c(a, 1)
    alpha = select(ge(a, one), a, add(a, one))
    d = arithmetic.sub(alpha, _c(a, 1. / 3.))
    c = div(_c(a, 1. / 3.), sqrt(d))
    key, _ = split_keys(_gamma_element_keys(keys, a), 2)
    zero = full_like(a, 0)
    inner = ne(zero, zero)
    return key, key, key, zero, full_like(a, -1), zero, full_like(a, 1), full_like(a, 2), \
        inner, d, c

  def cond(key, kin, ukey, x, v, X, V, U, inner, d, c):
    one = _c(X, 1)
    accept = bitwise_and(
        ge(U, arithmetic.sub(one, mul(_c(X, 0.0331), mul(X, X)))),
        ge(log(U), add(mul(X, _c(X, 0.5)),
                       mul(d, add(arithmetic.sub(one, V), log(V))))))
    return bitwise_or(inner, accept)

  def body(key, kin, ukey, x, v, X, V, U, inner, d, c):
    start = bitwise_not(inner)
    nkey, x_key, u_key = split_keys(key, 3)
    key = _select_active(start, nkey, key)
    kin = _select_active(start, x_key, kin)
    ukey = _select_active(start, u_key, ukey)
    v = select(start, full_like(v, -1), v)
    # one step of the inner loop (v <= 0 holds for every active element here)
    kin, sub = split_keys(kin, 2)
    x = _normal_draws(sub, get_aval(v).dtype)
    v = add(_c(v, 1), mul(x, c))
    done = gt(v, _c(v, 0))
    X = select(done, mul(x, x), X)
    V = select(done, mul(mul(v, v), v), V)
    U = select(done, key_draws(ukey, (), get_aval(v).dtype), U)
    return key, kin, ukey, x, v, X, V, U, bitwise_not(done), d, c

  return _Loop(init, cond, body)


def _gamma_finish(operands, state, *, log_space):
  keys, a = operands
  V, d = state[6], state[9]
  zero, one = _c(a, 0), _c(a, 1)
  boost_mask = ge(a, one)
  _, subkey = split_keys(_gamma_element_keys(keys, a), 2)
  dtype = get_aval(a).dtype
  if log_space:
    log_samples = neg(_exponential_draws(subkey, dtype))
    log_boost = select(bitwise_or(boost_mask, eq(log_samples, zero)),
                       full_like(a, 0), mul(log_samples, div(one, a)))
    return add(add(log(d), log(V)), log_boost)
  samples = arithmetic.sub(one, key_draws(subkey, (), dtype))
  boost = select(boost_mask, full_like(a, 1), transcendental.pow(samples, div(one, a)))
  return mul(mul(d, V), boost)


def _gamma_out_aval(keys, a, *, log_space):
  if keys.dtype != _U32 or keys.shape[-1:] != (2,):
    raise TypeError(f"random_gamma: expected key data, got {keys.str_short()}")
  if a.shape[:keys.ndim - 1] != keys.shape[:-1]:
    raise TypeError(f"random_gamma: keys {keys.str_short()} do not lead the shape of "
                    f"{a.str_short()}")
  if not dtypes.issubdtype(a.dtype, np.floating):
    raise TypeError(f"random_gamma: alpha must be a float array, got {a.str_short()}")
  return a


LoopSampler(random_gamma_p, _gamma_loop, _gamma_finish, _gamma_out_aval)


def _gamma_grad(sample, a, *, log_space):
  if log_space:
    # d[log(sample)] = d[sample] / sample; exp(log_sample) may round to zero.
    samples = exp(sample)
    tiny = full_like(samples, dtypes.finfo(get_aval(samples).dtype).tiny)
    samples = select(eq(samples, _c(samples, 0)), tiny, samples)
    return div(special.random_gamma_grad(a, samples), samples)
  return special.random_gamma_grad(a, sample)


@random_gamma_p.def_jvp
def _random_gamma_jvp(primals, tangents, *, log_space):
  keys, a = primals
  _, a_dot = tangents
  ans = random_gamma_p.bind1(keys, a, log_space=log_space)
  if type(a_dot) is Zero:
    return [ans], [Zero.from_primal_value(ans)]
  return [ans], [mul(a_dot, _gamma_grad(ans, a, log_space=log_space))]


def random_gamma(keys, a, *, log_space: bool = False):
  """Gamma(a) samples (their logs when ``log_space``), one independent
  Marsaglia-Tsang loop per element; ``keys`` (``[*k, 2]``) lead ``a``'s shape
  and each is split into one key per element of its block."""
  return random_gamma_p.bind1(keys, a, log_space=bool(log_space))


# ------------------------------------------------------------------ poisson
def _sample_ndim(keys, x) -> int:
  return get_aval(x).ndim - (get_aval(keys).ndim - 1)


def _any_over_sample(keys, pred):
  nd = _sample_ndim(keys, pred)
  full = get_aval(pred).ndim
  return reduce_or(pred, tuple(range(full - nd, full))) if nd else pred


def _sample_shape(keys, x):
  return get_aval(x).shape[get_aval(keys).ndim - 1:]


def _int_out_aval(keys, *arrays, dtype):
  if keys.dtype != _U32 or keys.shape[-1:] != (2,):
    raise TypeError(f"expected key data, got {keys.str_short()}")
  return ShapedArray(arrays[0].shape, dtype)


random_poisson_knuth_p = Primitive("random_poisson_knuth", kind="nondifferentiable")
random_poisson_knuth_p.def_sharding_rule(replicated_rule)


def _poisson_knuth_loop(*, dtype):
  def init(keys, lam):
    return keys, full_like(lam, 0, dtype), full_like(lam, 0, np.float32), lam

  def cond(keys, k, log_prod, lam):
    return _any_over_sample(keys, gt(log_prod, neg(lam)))

  def body(keys, k, log_prod, lam):
    keys, subkey = split_keys(keys, 2)
    k = select(gt(log_prod, neg(lam)), add(k, _c(k, 1)), k)
    u = key_draws(subkey, _sample_shape(keys, lam), np.float32)
    return keys, k, add(log_prod, log(u)), lam

  return _Loop(init, cond, body)


def _poisson_knuth_finish(operands, state, *, dtype):
  k = state[1]
  return convert_element_type(arithmetic.sub(k, _c(k, 1)), dtype)


LoopSampler(random_poisson_knuth_p, _poisson_knuth_loop, _poisson_knuth_finish,
            lambda keys, lam, *, dtype: _int_out_aval(keys, lam, dtype=dtype))
defjvp_zero(random_poisson_knuth_p)

random_poisson_rejection_p = Primitive("random_poisson_rejection", kind="nondifferentiable")
random_poisson_rejection_p.def_sharding_rule(replicated_rule)


def _poisson_rejection_loop(*, dtype):
  # Hormann's transformed rejection (PTRS).
  def init(keys, lam):
    log_lam = log(lam)
    b = add(_c(lam, 0.931), mul(_c(lam, 2.53), sqrt(lam)))
    a = add(_c(lam, -0.059), mul(_c(lam, 0.02483), b))
    inv_alpha = add(_c(lam, 1.1239), div(_c(lam, 1.1328), arithmetic.sub(b, _c(lam, 3.4))))
    v_r = arithmetic.sub(_c(lam, 0.9277), div(_c(lam, 3.6224), arithmetic.sub(b, _c(lam, 2))))
    k_out = full_like(lam, -1)
    accepted = ne(k_out, k_out)
    return keys, k_out, accepted, lam, log_lam, b, a, inv_alpha, v_r

  def cond(keys, k_out, accepted, *_):
    return _any_over_sample(keys, bitwise_not(accepted))

  def body(keys, k_out, accepted, lam, log_lam, b, a, inv_alpha, v_r):
    keys, subkey_0, subkey_1 = split_keys(keys, 3)
    shape, dt = _sample_shape(keys, lam), get_aval(lam).dtype
    u = arithmetic.sub(key_draws(subkey_0, shape, dt), _c(lam, 0.5))
    v = key_draws(subkey_1, shape, dt)
    u_shifted = arithmetic.sub(_c(u, 0.5), arithmetic.abs(u))
    k = floor(add(add(mul(add(div(mul(_c(a, 2), a), u_shifted), b), u),
                      lam), _c(lam, 0.43)))
    s = log(div(mul(v, inv_alpha),
                add(div(a, mul(u_shifted, u_shifted)), b)))
    t = arithmetic.sub(add(neg(lam), mul(k, log_lam)), special.lgamma(add(k, _c(k, 1))))
    accept1 = bitwise_and(ge(u_shifted, _c(u, 0.07)), le(v, v_r))
    reject = bitwise_or(lt(k, _c(k, 0)),
                        bitwise_and(lt(u_shifted, _c(u, 0.013)), gt(v, u_shifted)))
    accept2 = le(s, t)
    accept = bitwise_or(accept1, bitwise_and(bitwise_not(reject), accept2))
    k_out = select(accept, k, k_out)
    accepted = bitwise_or(accepted, accept)
    return keys, k_out, accepted, lam, log_lam, b, a, inv_alpha, v_r

  return _Loop(init, cond, body)


def _poisson_rejection_finish(operands, state, *, dtype):
  return convert_element_type(state[1], dtype)


LoopSampler(random_poisson_rejection_p, _poisson_rejection_loop, _poisson_rejection_finish,
            lambda keys, lam, *, dtype: _int_out_aval(keys, lam, dtype=dtype))
defjvp_zero(random_poisson_rejection_p)


# ----------------------------------------------------------------- binomial
def _float_out_aval(keys, count, prob, *, dtype):
  return _int_out_aval(keys, count, prob, dtype=dtype)


random_binomial_inversion_p = Primitive("random_binomial_inversion", kind="nondifferentiable")
random_binomial_inversion_p.def_sharding_rule(replicated_rule)


def _binomial_inversion_loop(*, dtype):
  def init(keys, count, prob):
    log1minusprob = log1p(neg(prob))
    zeros = full_like(prob, 0)
    return keys, zeros, zeros, count, log1minusprob

  def cond(keys, num_geom, geom_sum, count, log1minusprob):
    return _any_over_sample(keys, le(geom_sum, count))

  def body(keys, num_geom, geom_sum, count, log1minusprob):
    subkey, keys = split_keys(keys, 2)
    num_geom_out = select(le(geom_sum, count), add(num_geom, _c(num_geom, 1)),
                          num_geom)
    u = key_draws(subkey, _sample_shape(keys, count), get_aval(count).dtype)
    geom = ceil(div(log(u), log1minusprob))
    return keys, num_geom_out, add(geom_sum, geom), count, log1minusprob

  return _Loop(init, cond, body)


def _binomial_inversion_finish(operands, state, *, dtype):
  k = state[1]
  return convert_element_type(arithmetic.sub(k, _c(k, 1)), dtype)


LoopSampler(random_binomial_inversion_p, _binomial_inversion_loop,
            _binomial_inversion_finish, _float_out_aval)
defjvp_zero(random_binomial_inversion_p)

random_binomial_btrs_p = Primitive("random_binomial_btrs", kind="nondifferentiable")
random_binomial_btrs_p.def_sharding_rule(replicated_rule)

_STIRLING_TAIL = (0.0810614667953272, 0.0413406959554092, 0.0276779256849983,
                  0.02079067210376509, 0.0166446911898211, 0.0138761288230707,
                  0.0118967099458917, 0.0104112652619720, 0.00925546218271273,
                  0.00833056343336287)


def _stirling_approx_tail(k):
  dt = get_aval(k).dtype
  use_tail_values = le(k, _c(k, 9))
  k = clamp(_c(k, 0.0), k, _c(k, 9.0))
  kp1sq = mul(add(k, _c(k, 1)), add(k, _c(k, 1)))
  approx = div(arithmetic.sub(_c(k, 1.0 / 12), div(arithmetic.sub(_c(k, 1.0 / 360),
                                                                  div(_c(k, 1.0 / 1260), kp1sq)),
                                                   kp1sq)),
               add(k, _c(k, 1)))
  k = floor(k)
  # stirling_tail_vals[int(k)] as a select chain over the ten table entries
  idx = convert_element_type(k, np.int32)
  table = full_like(k, _STIRLING_TAIL[0])
  for i, val in enumerate(_STIRLING_TAIL[1:], start=1):
    table = select(eq(idx, np.array(i, np.int32)), full_like(k, np.array(val, dt)), table)
  return select(use_tail_values, table, approx)


def _btrs_loop(*, dtype):
  def init(keys, count, prob):
    one = _c(prob, 1)
    stddev = sqrt(mul(mul(count, prob), arithmetic.sub(one, prob)))
    b = add(_c(prob, 1.15), mul(_c(prob, 2.53), stddev))
    a = add(add(_c(prob, -0.0873), mul(_c(prob, 0.0248), b)),
            mul(_c(prob, 0.01), prob))
    c = add(mul(count, prob), _c(prob, 0.5))
    v_r = arithmetic.sub(_c(prob, 0.92), div(_c(prob, 4.2), b))
    r = div(prob, arithmetic.sub(one, prob))
    alpha = mul(add(_c(prob, 2.83), div(_c(prob, 5.1), b)), stddev)
    m = floor(mul(add(count, one), prob))
    k_out = full_like(prob, -1)
    accepted = ne(k_out, k_out)
    return keys, k_out, accepted, count, a, b, c, v_r, r, alpha, m

  def cond(keys, k_out, accepted, *_):
    return _any_over_sample(keys, bitwise_not(accepted))

  def body(keys, k_out, accepted, count, a, b, c, v_r, r, alpha, m):
    keys, subkey_0, subkey_1 = split_keys(keys, 3)
    shape, dt = _sample_shape(keys, count), get_aval(count).dtype
    u = key_draws(subkey_0, shape, dt)
    v = key_draws(subkey_1, shape, dt)
    u = arithmetic.sub(u, _c(u, 0.5))
    us = arithmetic.sub(_c(u, 0.5), arithmetic.abs(u))
    accept1 = bitwise_and(ge(us, _c(us, 0.07)), le(v, v_r))
    k = floor(add(mul(add(div(mul(_c(a, 2), a), us), b), u), c))
    reject = bitwise_or(lt(k, _c(k, 0)), gt(k, count))
    v = log(div(mul(v, alpha), add(div(a, mul(us, us)), b)))
    one, half = _c(k, 1), _c(k, 0.5)
    ub = add(add(mul(add(m, half),
                     log(div(add(m, one),
                             mul(r, add(arithmetic.sub(count, m), one))))),
                 mul(add(count, one),
                     log(div(add(arithmetic.sub(count, m), one),
                             add(arithmetic.sub(count, k), one))))),
             mul(add(k, half),
                 log(div(mul(r, add(arithmetic.sub(count, k), one)),
                         add(k, one)))))
    ub = arithmetic.sub(arithmetic.sub(add(add(ub, _stirling_approx_tail(m)),
                                           _stirling_approx_tail(arithmetic.sub(count, m))),
                                       _stirling_approx_tail(k)),
                        _stirling_approx_tail(arithmetic.sub(count, k)))
    accept2 = le(v, ub)
    accept = bitwise_or(accept1, bitwise_and(bitwise_not(reject), accept2))
    k_out = select(accept, k, k_out)
    accepted = bitwise_or(accepted, accept)
    return keys, k_out, accepted, count, a, b, c, v_r, r, alpha, m

  return _Loop(init, cond, body)


def _btrs_finish(operands, state, *, dtype):
  return convert_element_type(state[1], dtype)


LoopSampler(random_binomial_btrs_p, _btrs_loop, _btrs_finish, _float_out_aval)
defjvp_zero(random_binomial_btrs_p)
