"""Op-table rows: reduction primitives (lax) and jnp reductions, NaN-ignoring
reductions and cumulative ops, over several dtypes and axis options."""
import numpy as np

import openjax.numpy as jnp
from openjax import lax
from tests.ops.harness import OpRow

F32, F16, I32, I8, U8, BOOL = (np.dtype(t) for t in (np.float32, np.float16, np.int32,
                                                     np.int8, np.uint8, np.bool_))


def _sample(dtype, shape=(3, 4), nan=False):
  def make(rng):
    if dtype == BOOL:
      return rng.random(shape) < 0.5
    if np.issubdtype(dtype, np.integer):
      lo = 0 if np.issubdtype(dtype, np.unsignedinteger) else -4
      return rng.integers(lo, 5, shape).astype(dtype)
    x = rng.standard_normal(shape).astype(dtype)
    if nan:
      x.flat[1] = np.nan
      x.flat[-2] = np.nan
    return x
  return make


def _one(dtype, shape=(3, 4), nan=False):
  make = _sample(dtype, shape, nan)
  return lambda rng: (make(rng),)


ROWS = []


def _add(name, fn, args, ref, **kw):
  ROWS.append(OpRow(name, fn, args, ref, **kw))


_NONDIFF = ("all", "any", "count_nonzero", "argmax", "argmin", "nanargmax", "nanargmin")


# ------------------------------------------------------------ lax primitives
for dt in (F32, I32, F16):
  n = dt.name
  g = dt == F32
  _add(f"lax.reduce_sum_{n}", lambda x: lax.reduce_sum(x, (0,)), _one(dt),
       lambda x: np.sum(x, axis=0, dtype=x.dtype), grad=g)
  _add(f"lax.reduce_prod_{n}", lambda x: lax.reduce_prod(x, (1,)), _one(dt),
       lambda x: np.prod(x, axis=1, dtype=x.dtype), grad=g)
  _add(f"lax.reduce_max_{n}", lambda x: lax.reduce_max(x, (0, 1)), _one(dt),
       lambda x: np.max(x), grad=g)
  _add(f"lax.reduce_min_{n}", lambda x: lax.reduce_min(x, (1,)), _one(dt),
       lambda x: np.min(x, axis=1), grad=g)
  _add(f"lax.argmax_{n}", lambda x: lax.argmax(x, 1, np.int32), _one(dt, nan=dt != I32),
       lambda x: np.argmax(x, axis=1).astype(np.int32))
  _add(f"lax.argmin_{n}", lambda x: lax.argmin(x, 0, np.int32), _one(dt, nan=dt != I32),
       lambda x: np.argmin(x, axis=0).astype(np.int32))
  _add(f"lax.cumsum_{n}", lambda x: lax.cumsum(x, 1), _one(dt),
       lambda x: np.cumsum(x, axis=1, dtype=x.dtype), grad=g)
  _add(f"lax.cumsum_reverse_{n}", lambda x: lax.cumsum(x, 0, reverse=True), _one(dt),
       lambda x: np.flip(np.cumsum(np.flip(x, 0), axis=0, dtype=x.dtype), 0), grad=g)
  _add(f"lax.cumprod_{n}", lambda x: lax.cumprod(x, 1), _one(dt),
       lambda x: np.cumprod(x, axis=1, dtype=x.dtype), grad=g)
  _add(f"lax.cummax_{n}", lambda x: lax.cummax(x, 1), _one(dt),
       lambda x: np.maximum.accumulate(x, axis=1), grad=g)
  _add(f"lax.cummin_reverse_{n}", lambda x: lax.cummin(x, 1, reverse=True), _one(dt),
       lambda x: np.flip(np.minimum.accumulate(np.flip(x, 1), axis=1), 1), grad=g)
for dt in (F32, F16):
  _add(f"lax.cumlogsumexp_{dt.name}", lambda x: lax.cumlogsumexp(x, 1), _one(dt),
       lambda x: np.logaddexp.accumulate(x.astype(np.float32), axis=1).astype(x.dtype),
       grad=dt == F32)
  _add(f"lax.cumlogsumexp_reverse_{dt.name}", lambda x: lax.cumlogsumexp(x, 0, reverse=True),
       _one(dt), lambda x: np.flip(np.logaddexp.accumulate(
           np.flip(x.astype(np.float32), 0), axis=0), 0).astype(x.dtype), grad=dt == F32)
_add("lax.reduce_max_nan", lambda x: lax.reduce_max(x, (1,)), _one(F32, nan=True),
     lambda x: np.max(x, axis=1))
_add("lax.reduce_sum_empty_axes", lambda x: lax.reduce_sum(x, ()), _one(F32),
     lambda x: x, grad=True)
_add("lax.reduce_prod_with_zeros", lambda x: lax.reduce_prod(x, (1,)),
     lambda rng: (np.array([[0.0, 2.0, 3.0, -1.5], [0.0, 0.0, 4.0, 0.5], [1.5, -2.0, 0.5, 3.0]],
                           np.float32),),
     lambda x: np.prod(x, axis=1), grad=True)
_add("lax.reduce_prod_all_axes", lambda x: lax.reduce_prod(x, (0, 2)), _one(F32, (2, 3, 3)),
     lambda x: np.prod(x, axis=(0, 2)), grad=True)
_add("lax.cumprod_with_zero_reverse", lambda x: lax.cumprod(x, 0, reverse=True),
     lambda rng: (np.array([[1.5, 0.0], [0.0, 2.0], [-2.0, 0.5], [0.5, 3.0], [2.0, -1.0]],
                           np.float32),),
     lambda x: np.flip(np.cumprod(np.flip(x, 0), axis=0), 0), grad=True)
_add("lax.cummax_reverse_long", lambda x: lax.cummax(x, 1, reverse=True), _one(F32, (2, 7)),
     lambda x: np.flip(np.maximum.accumulate(np.flip(x, 1), axis=1), 1), grad=True)
_add("lax.cummin_3d", lambda x: lax.cummin(x, 1), _one(F32, (2, 5, 3)),
     lambda x: np.minimum.accumulate(x, axis=1), grad=True)
_add("lax.reduce_max_empty_dim", lambda x: lax.reduce_max(x, (0,)), _one(F32, (0, 3)),
     lambda x: np.full((3,), -np.inf, np.float32))
for dt in (BOOL, I32, U8):
  n = dt.name
  _add(f"lax.reduce_and_{n}", lambda x: lax.reduce_and(x, (1,)), _one(dt),
       lambda x: np.bitwise_and.reduce(x, axis=1))
  _add(f"lax.reduce_or_{n}", lambda x: lax.reduce_or(x, (0,)), _one(dt),
       lambda x: np.bitwise_or.reduce(x, axis=0))
  _add(f"lax.reduce_xor_{n}", lambda x: lax.reduce_xor(x, (0, 1)), _one(dt),
       lambda x: np.bitwise_xor.reduce(x, axis=(0, 1)))
_add("lax.argmax_bool", lambda x: lax.argmax(x, 0, np.int32), _one(BOOL),
     lambda x: np.argmax(x, axis=0).astype(np.int32))


# ------------------------------------------------------------ jnp reductions
_AXES = {"none": None, "0": 0, "neg1": -1, "tuple": (0, 1)}
_BASIC = {
    "sum": (jnp.sum, np.sum), "prod": (jnp.prod, np.prod), "max": (jnp.max, np.max),
    "min": (jnp.min, np.min), "mean": (jnp.mean, np.mean), "var": (jnp.var, np.var),
    "std": (jnp.std, np.std), "all": (jnp.all, np.all), "any": (jnp.any, np.any),
    "amax": (jnp.amax, np.amax), "amin": (jnp.amin, np.amin),
    "count_nonzero": (jnp.count_nonzero, np.count_nonzero),
}


def _reduce_fn(f, axis, keepdims):
  return lambda x: f(x, axis=axis, keepdims=keepdims)


for fname, (jf, nf) in _BASIC.items():
  for dt in (F32, I32, BOOL, F16):
    tol = {"atol": 5e-3, "rtol": 5e-3} if dt == F16 and fname in ("var", "std") else {}
    for aname, axis in _AXES.items():
      keepdims = aname == "neg1"
      _add(f"jnp.{fname}_{dt.name}_axis{aname}{'_keepdims' if keepdims else ''}",
           _reduce_fn(jf, axis, keepdims), _one(dt, (3, 4)),
           _reduce_fn(nf, axis, keepdims), grad=dt == F32 and fname not in _NONDIFF, **tol)
  _add(f"jnp.{fname}_3d_axis_neg_tuple", lambda x, jf=jf: jf(x, axis=(-1, 0)),
       _one(F32, (2, 3, 4)), lambda x, nf=nf: nf(x, axis=(-1, 0)), atol=1e-5,
       grad=fname not in _NONDIFF)
for fname in ("sum", "prod", "max", "min", "mean", "var", "std", "all", "any"):
  _add(f"jnp.{fname}_method", lambda x, f=fname: getattr(jnp.asarray(x), f)(axis=1), _one(F32),
       lambda x, f=fname: getattr(x, f)(axis=1), grad=fname not in _NONDIFF)
  _add(f"jnp.{fname}_python_scalar", lambda f=fname: getattr(jnp, f)(2.5), lambda rng: (),
       lambda f=fname: getattr(np, f)(np.float32(2.5)))

for dt in (F32, I32, F16):
  n = dt.name
  _add(f"jnp.ptp_{n}", lambda x: jnp.ptp(x, axis=0), _one(dt), lambda x: np.ptp(x, axis=0),
       grad=dt == F32)
  _add(f"jnp.ptp_{n}_keepdims", lambda x: jnp.ptp(x, axis=1, keepdims=True), _one(dt),
       lambda x: np.ptp(x, axis=1, keepdims=True), grad=dt == F32)
  _add(f"jnp.argmax_{n}", lambda x: jnp.argmax(x, axis=1), _one(dt),
       lambda x: np.argmax(x, axis=1))
  _add(f"jnp.argmax_{n}_none", lambda x: jnp.argmax(x), _one(dt), lambda x: np.argmax(x))
  _add(f"jnp.argmin_{n}_keepdims", lambda x: jnp.argmin(x, axis=-1, keepdims=True), _one(dt),
       lambda x: np.argmin(x, axis=-1, keepdims=True))
  _add(f"jnp.argmin_{n}_none_keepdims", lambda x: jnp.argmin(x, keepdims=True), _one(dt),
       lambda x: np.argmin(x, keepdims=True))
_add("jnp.argmax_bool", lambda x: jnp.argmax(x, axis=0), _one(BOOL),
     lambda x: np.argmax(x, axis=0))
_add("jnp.argmax_method", lambda x: jnp.asarray(x).argmax(axis=0), _one(F32),
     lambda x: x.argmax(axis=0))
_add("jnp.argmin_method", lambda x: jnp.asarray(x).argmin(), _one(F32), lambda x: x.argmin())
_add("jnp.ptp_method", lambda x: jnp.asarray(x).ptp(), _one(F32), lambda x: np.ptp(x))

# dtype= / promote_integers / initial / where / ddof / correction
for dt in (I8, U8, BOOL):
  _add(f"jnp.sum_{dt.name}_promotes", lambda x: jnp.sum(x, axis=0), _one(dt),
       lambda x: np.sum(x, axis=0))
  _add(f"jnp.prod_{dt.name}_promotes", lambda x: jnp.prod(x, axis=1), _one(dt),
       lambda x: np.prod(x, axis=1))
_add("jnp.sum_int8_no_promote", lambda x: jnp.sum(x, axis=0, promote_integers=False),
     _one(I8), lambda x: np.sum(x, axis=0, dtype=np.int8))
_add("jnp.sum_dtype_f32", lambda x: jnp.sum(x, axis=1, dtype=jnp.float32), _one(I32),
     lambda x: np.sum(x, axis=1, dtype=np.float32))
_add("jnp.sum_dtype_bool", lambda x: jnp.sum(x, dtype=bool), _one(I32),
     lambda x: np.sum(x != 0) > 0)
_add("jnp.prod_dtype_f16", lambda x: jnp.prod(x, axis=0, dtype=jnp.float16), _one(F32),
     lambda x: np.prod(x, axis=0, dtype=np.float16))
_add("jnp.mean_dtype_f16", lambda x: jnp.mean(x, axis=0, dtype=jnp.float16), _one(I32),
     lambda x: np.mean(x, axis=0, dtype=np.float16))
_add("jnp.sum_initial", lambda x: jnp.sum(x, axis=0, initial=2.5), _one(F32),
     lambda x: np.sum(x, axis=0, initial=2.5), grad=True)
_add("jnp.prod_initial_int", lambda x: jnp.prod(x, initial=2), _one(I32),
     lambda x: np.prod(x, initial=2))
_add("jnp.max_initial", lambda x: jnp.max(x, axis=1, initial=0.5), _one(F32),
     lambda x: np.max(x, axis=1, initial=0.5), grad=True)
_add("jnp.min_initial_int", lambda x: jnp.min(x, axis=0, initial=-1), _one(I32),
     lambda x: np.min(x, axis=0, initial=-1))
_add("jnp.max_empty_initial", lambda x: jnp.max(x, axis=0, initial=3.0), _one(F32, (0, 2)),
     lambda x: np.max(x, axis=0, initial=3.0))
_add("jnp.sum_empty", lambda x: jnp.sum(x, axis=0), _one(F32, (0, 2)),
     lambda x: np.sum(x, axis=0))


def _with_where(f, **kw):
  return lambda x, w: f(x, where=w, **kw)


def _where_args(dt, shape=(3, 4), wshape=None):
  make = _sample(dt, shape)
  return lambda rng: (make(rng), rng.random(wshape or shape) < 0.6)


for fname, (jf, nf), kw in (("sum", _BASIC["sum"], {"axis": 1}),
                            ("prod", _BASIC["prod"], {"axis": 0}),
                            ("mean", _BASIC["mean"], {"axis": 1}),
                            ("var", _BASIC["var"], {"axis": 0}),
                            ("std", _BASIC["std"], {"axis": None}),
                            ("all", _BASIC["all"], {"axis": 1}),
                            ("any", _BASIC["any"], {"axis": 0}),
                            ("max", _BASIC["max"], {"axis": 1, "initial": -10.0}),
                            ("min", _BASIC["min"], {"axis": 0, "initial": 10.0})):
  _add(f"jnp.{fname}_where", _with_where(jf, **kw), _where_args(F32),
       _with_where(nf, **kw), grad=fname not in _NONDIFF)
_add("jnp.sum_where_broadcast_keepdims", _with_where(jnp.sum, axis=0, keepdims=True),
     _where_args(I32, (3, 4), (1, 4)), _with_where(np.sum, axis=0, keepdims=True))
_add("jnp.mean_where_int", _with_where(jnp.mean, axis=1), _where_args(I32),
     _with_where(np.mean, axis=1))
for ddof in (0, 1, 2):
  _add(f"jnp.var_ddof{ddof}", lambda x, d=ddof: jnp.var(x, axis=1, ddof=d), _one(F32),
       lambda x, d=ddof: np.var(x, axis=1, ddof=d), grad=True)
  _add(f"jnp.std_ddof{ddof}_int", lambda x, d=ddof: jnp.std(x, axis=0, ddof=d), _one(I32),
       lambda x, d=ddof: np.std(x, axis=0, ddof=d))
_add("jnp.var_correction", lambda x: jnp.var(x, axis=0, correction=1), _one(F32),
     lambda x: np.var(x, axis=0, correction=1), grad=True)
_add("jnp.std_correction_half", lambda x: jnp.std(x, correction=0.5), _one(F32),
     lambda x: np.std(x, correction=0.5), grad=True)
# (The reference computes the variance, as JAX does, before the NaN of a
# non-positive normalizer: a constant took no time.)
_add("jnp.var_ddof_too_large", lambda x: jnp.var(x, axis=0, ddof=3), _one(F32),
     lambda x: np.var(x, axis=0) * np.float32(np.nan))
_add("jnp.var_mean_given", lambda x, m: jnp.var(x, axis=1, mean=m),
     lambda rng: (rng.standard_normal((3, 4)).astype(np.float32),
                  rng.standard_normal((3, 1)).astype(np.float32)),
     lambda x, m: np.var(x, axis=1, mean=m), grad=True)
_add("jnp.var_dtype_f32_of_int", lambda x: jnp.var(x, dtype=jnp.float32), _one(I32),
     lambda x: np.var(x, dtype=np.float32))
_add("jnp.var_complex", lambda x: jnp.var(x, axis=0),
     lambda rng: ((rng.standard_normal((3, 2)) + 1j * rng.standard_normal((3, 2)))
                  .astype(np.complex64),), lambda x: np.var(x, axis=0))
_add("jnp.sum_complex", lambda x: jnp.sum(x, axis=1),
     lambda rng: ((rng.standard_normal((3, 2)) + 1j * rng.standard_normal((3, 2)))
                  .astype(np.complex64),), lambda x: np.sum(x, axis=1), grad=True)
_add("jnp.all_complex", lambda x: jnp.all(x), lambda rng: (np.array([1j, 2, 0], np.complex64),),
     lambda x: np.all(x.real != 0))
_add("jnp.count_nonzero_axis", lambda x: jnp.count_nonzero(x, axis=0, keepdims=True),
     _one(I32), lambda x: np.count_nonzero(x, axis=0, keepdims=True))


# ------------------------------------------------------------ NaN-ignoring
_NAN = {
    "nansum": (jnp.nansum, np.nansum), "nanprod": (jnp.nanprod, np.nanprod),
    "nanmax": (jnp.nanmax, np.nanmax), "nanmin": (jnp.nanmin, np.nanmin),
    "nanmean": (jnp.nanmean, np.nanmean), "nanvar": (jnp.nanvar, np.nanvar),
    "nanstd": (jnp.nanstd, np.nanstd),
}
for fname, (jf, nf) in _NAN.items():
  for dt in (F32, F16):
    tol = {"atol": 5e-3, "rtol": 5e-3} if dt == F16 else {}
    for aname, axis in (("none", None), ("0", 0), ("neg1", -1)):
      _add(f"jnp.{fname}_{dt.name}_axis{aname}", _reduce_fn(jf, axis, aname == "0"),
           _one(dt, nan=True), _reduce_fn(nf, axis, aname == "0"), grad=dt == F32, **tol)
  _add(f"jnp.{fname}_int32", _reduce_fn(jf, 1, False), _one(I32), _reduce_fn(nf, 1, False))
  _add(f"jnp.{fname}_where", _with_where(jf, axis=1, **({"initial": 0.0} if fname in (
      "nanmax", "nanmin") else {})), _where_args(F32),
       _with_where(nf, axis=1, **({"initial": 0.0} if fname in ("nanmax", "nanmin") else {})),
       grad=True)


def _all_nan_col(rng):
  x = rng.standard_normal((3, 4)).astype(np.float32)
  x[:, 1] = np.nan
  x[0, 2] = np.nan
  return (x,)


_add("jnp.nanmax_all_nan_column", lambda x: jnp.nanmax(x, axis=0), _all_nan_col,
     lambda x: np.array([np.nanmax(c) if not np.isnan(c).all() else np.nan for c in x.T],
                        np.float32))
_add("jnp.nanmean_all_nan_column", lambda x: jnp.nanmean(x, axis=0), _all_nan_col,
     lambda x: np.array([np.nanmean(c) if not np.isnan(c).all() else np.nan for c in x.T],
                        np.float32))
_add("jnp.nanvar_ddof1", lambda x: jnp.nanvar(x, axis=1, ddof=1), _one(F32, nan=True),
     lambda x: np.nanvar(x, axis=1, ddof=1), grad=True)
_add("jnp.nanstd_ddof1_int", lambda x: jnp.nanstd(x, axis=0, ddof=1), _one(I32),
     lambda x: np.nanstd(x, axis=0, ddof=1))
_add("jnp.nansum_dtype", lambda x: jnp.nansum(x, axis=1, dtype=jnp.float16),
     _one(F32, nan=True), lambda x: np.nansum(x, axis=1, dtype=np.float16))
for fname, (jf, nf) in (("nanargmax", (jnp.nanargmax, np.nanargmax)),
                        ("nanargmin", (jnp.nanargmin, np.nanargmin))):
  _add(f"jnp.{fname}_axis1", lambda x, jf=jf: jf(x, axis=1), _one(F32, nan=True),
       lambda x, nf=nf: nf(x, axis=1))
  _add(f"jnp.{fname}_none", lambda x, jf=jf: jf(x), _one(F32, nan=True),
       lambda x, nf=nf: nf(x))
  _add(f"jnp.{fname}_int_keepdims", lambda x, jf=jf: jf(x, axis=0, keepdims=True), _one(I32),
       lambda x, nf=nf: nf(x, axis=0, keepdims=True))
  _add(f"jnp.{fname}_all_nan", lambda x, jf=jf: jf(x, axis=0), _all_nan_col,
       lambda x, nf=nf: np.array([nf(c) if not np.isnan(c).all() else -1 for c in x.T]))


# ------------------------------------------------------------- cumulative
for fname, (jf, nf) in (("cumsum", (jnp.cumsum, np.cumsum)),
                        ("cumprod", (jnp.cumprod, np.cumprod)),
                        ("nancumsum", (jnp.nancumsum, np.nancumsum)),
                        ("nancumprod", (jnp.nancumprod, np.nancumprod))):
  for dt in (F32, I32, BOOL, F16):
    for aname, axis in (("none", None), ("0", 0), ("neg1", -1)):
      _add(f"jnp.{fname}_{dt.name}_axis{aname}", lambda x, jf=jf, a=axis: jf(x, axis=a),
           _one(dt, nan=fname.startswith("nan") and dt in (F32, F16)),
           lambda x, nf=nf, a=axis: nf(x, axis=a), grad=dt == F32,
           **({"atol": 2e-2, "rtol": 2e-2} if dt == F16 else {}))
  _add(f"jnp.{fname}_int8_keeps_dtype", lambda x, jf=jf: jf(x, axis=1), _one(I8),
       lambda x, nf=nf: nf(x, axis=1).astype(np.int8), out_dtype=I8)
  _add(f"jnp.{fname}_dtype_f32", lambda x, jf=jf: jf(x, axis=0, dtype=jnp.float32),
       _one(I32), lambda x, nf=nf: nf(x, axis=0, dtype=np.float32))
_add("jnp.cumsum_dtype_bool", lambda x: jnp.cumsum(x, axis=1, dtype=bool), _one(I32),
     lambda x: np.cumsum(x != 0, axis=1) > 0)
_add("jnp.cumsum_method", lambda x: jnp.asarray(x).cumsum(axis=0), _one(F32),
     lambda x: x.cumsum(axis=0), grad=True)
_add("jnp.cumprod_method", lambda x: jnp.asarray(x).cumprod(), _one(F32), lambda x: x.cumprod(),
     grad=True)
for fname, (jf, nf) in (("cumulative_sum", (jnp.cumulative_sum, np.cumulative_sum)),
                        ("cumulative_prod", (jnp.cumulative_prod, np.cumulative_prod))):
  for dt in (F32, I32, BOOL, I8):
    promote = fname == "cumulative_sum" or dt == BOOL
    out_dtype = None if promote or dt != I8 else I8
    for inc in (False, True):
      _add(f"jnp.{fname}_{dt.name}{'_include_initial' if inc else ''}",
           lambda x, jf=jf, inc=inc: jf(x, axis=1, include_initial=inc), _one(dt),
           lambda x, nf=nf, inc=inc, dt=dt, promote=promote: nf(
               x, axis=1, include_initial=inc, dtype=None if promote else dt),
           out_dtype=out_dtype, grad=dt == F32)
  _add(f"jnp.{fname}_1d_default_axis", lambda x, jf=jf: jf(x), _one(F32, (5,)),
       lambda x, nf=nf: nf(x), grad=True)
  _add(f"jnp.{fname}_dtype", lambda x, jf=jf: jf(x, axis=0, dtype=jnp.float32), _one(I32),
       lambda x, nf=nf: nf(x, axis=0, dtype=np.float32))
