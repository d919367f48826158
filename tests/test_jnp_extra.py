"""The less common ``jax.numpy`` functions (differences, covariances, windows,
set operations, polynomials, index tricks, bit packing) against NumPy, with
JAX 0.10.2's dtypes, weak types and errors pasted in as goldens."""
import numpy as np
import pytest

import openjax
import openjax.numpy as jnp

F32 = np.float32


def _close(actual, expected, rtol=2e-5, atol=1e-5, dtype=None):
  actual = np.asarray(actual)
  if dtype is not None:
    assert actual.dtype == np.dtype(dtype), (actual.dtype, dtype)
  assert actual.shape == np.shape(expected), (actual.shape, np.shape(expected))
  np.testing.assert_allclose(actual, expected, rtol=rtol, atol=atol)


# ------------------------------------------------------------- stats.py
def test_diff_values_dtypes_and_errors():
  x = np.random.default_rng(0).standard_normal((3, 5)).astype(F32)
  for n, axis in [(1, -1), (2, 0), (3, 1), (0, 0)]:
    _close(jnp.diff(x, n=n, axis=axis), np.diff(x, n=n, axis=axis), dtype=F32)
  _close(jnp.diff(x, prepend=1.0, append=x[:, :2]),
         np.diff(x, prepend=1.0, append=x[:, :2]))
  b = np.array([True, False, False])
  np.testing.assert_array_equal(jnp.diff(b), np.diff(b))
  assert jnp.diff(np.arange(5)).dtype == np.int32
  with pytest.raises(ValueError, match="order must be non-negative but got -1"):
    jnp.diff(x, n=-1)
  with pytest.raises(ValueError, match="at least one dimensional"):
    jnp.diff(np.float32(1))
  assert "name=diff" in str(openjax.make_jaxpr(jnp.diff)(x))   # JAX stages jit[name=diff]


def test_ediff1d():
  a = np.array([[1, 4], [9, 2]])
  np.testing.assert_array_equal(jnp.ediff1d(a), np.ediff1d(a))
  # JAX casts to_begin/to_end to the input dtype (golden: [3 3 5 -7 0 0]); lists raise
  with pytest.raises(TypeError):
    jnp.ediff1d(a, to_end=[0, 0])
  np.testing.assert_array_equal(jnp.ediff1d(a, to_begin=3.5, to_end=np.zeros(2)),
                                [3, 3, 5, -7, 0, 0])


def test_gradient_trapezoid_unwrap_vander():
  rng = np.random.default_rng(1)
  f = rng.standard_normal((4, 6)).astype(F32)
  for got, want in zip(jnp.gradient(f), np.gradient(f)):
    _close(got, want, dtype=F32)
  _close(jnp.gradient(f, 0.5, axis=1), np.gradient(f, 0.5, axis=1))
  xs = np.cumsum(rng.uniform(0.5, 1.5, 6)).astype(F32)
  _close(jnp.gradient(f, xs, axis=1), np.gradient(f, xs, axis=1), rtol=1e-4, atol=1e-4)
  with pytest.raises(NotImplementedError):
    jnp.gradient(f, edge_order=1)
  _close(jnp.trapezoid(f), np.trapezoid(f), dtype=F32)
  _close(jnp.trapezoid(f, dx=0.3, axis=0), np.trapezoid(f, dx=0.3, axis=0))
  _close(jnp.trapezoid(f, xs), np.trapezoid(f, xs), rtol=1e-5)
  r = jnp.trapezoid(np.arange(5))
  assert r.dtype == np.float32 and not r.weak_type   # JAX: float32, strong
  p = np.cumsum(rng.uniform(-2, 5, (2, 9)), axis=1).astype(F32)
  wrapped = np.angle(np.exp(1j * p)).astype(F32)
  _close(jnp.unwrap(wrapped), np.unwrap(wrapped), rtol=1e-5, atol=1e-5)
  _close(jnp.unwrap(p, period=4.0, axis=0), np.unwrap(p, period=4.0, axis=0))
  v = np.array([1.5, -2.0, 3.0], F32)
  _close(jnp.vander(v), np.vander(v), dtype=F32)
  _close(jnp.vander(v, 5, increasing=True), np.vander(v, 5, increasing=True))
  np.testing.assert_array_equal(jnp.vander(np.arange(3)), np.vander(np.arange(3)))


def test_cov_corrcoef():
  rng = np.random.default_rng(2)
  m = rng.standard_normal((3, 7)).astype(F32)
  y = rng.standard_normal((2, 7)).astype(F32)
  fw = rng.integers(1, 4, 7)
  aw = rng.uniform(0.1, 2, 7).astype(F32)
  _close(jnp.cov(m), np.cov(m), dtype=F32)
  _close(jnp.cov(m, y), np.cov(m, y))
  _close(jnp.cov(m.T, rowvar=False, bias=True), np.cov(m.T, rowvar=False, bias=True))
  _close(jnp.cov(m, fweights=fw, aweights=aw), np.cov(m, fweights=fw, aweights=aw), rtol=1e-4)
  _close(jnp.cov(m, ddof=0, aweights=aw), np.cov(m, ddof=0, aweights=aw), rtol=1e-4)
  _close(jnp.cov(m[0]), np.cov(m[0]))
  assert jnp.cov(np.arange(6).reshape(2, 3)).dtype == np.float32
  _close(jnp.corrcoef(m), np.corrcoef(m), rtol=1e-4)
  _close(jnp.corrcoef(m, y, rowvar=True), np.corrcoef(m, y), rtol=1e-4)
  c = (m + 1j * y[:1]).astype(np.complex64)
  _close(jnp.cov(c), np.cov(c), rtol=1e-4)
  _close(jnp.corrcoef(c), np.corrcoef(c), rtol=1e-4, atol=1e-5)
  with pytest.raises(TypeError, match="fweights must be integer"):
    jnp.cov(m, fweights=aw)


def test_stats_under_jit_and_grad():
  x = np.random.default_rng(3).standard_normal((3, 5)).astype(F32)
  _close(openjax.jit(jnp.cov)(x), np.cov(x), rtol=1e-4)
  _close(openjax.jit(lambda a: jnp.trapezoid(a, axis=0))(x), np.trapezoid(x, axis=0))
  g = openjax.grad(lambda a: jnp.sum(jnp.diff(a, n=2) ** 2))(x)
  d2 = np.diff(x, n=2)
  want = np.zeros_like(x)
  want[:, :-2] += 2 * d2
  want[:, 1:-1] -= 4 * d2
  want[:, 2:] += 2 * d2
  _close(g, want, rtol=1e-4, atol=1e-5)


# ------------------------------------------------------------- windows.py
@pytest.mark.parametrize("name", ["bartlett", "blackman", "hamming", "hanning"])
def test_windows(name):
  for m in (0, 1, 2, 7, 10):
    w = getattr(jnp, name)(m)
    assert w.dtype == np.float32 and not w.weak_type
    _close(w, getattr(np, name)(m), atol=1e-6)


def test_kaiser():
  for m in (1, 4, 9):
    _close(jnp.kaiser(m, 3.0), np.kaiser(m, 3.0), rtol=1e-5)
  _close(jnp.kaiser(6, 8.6), np.kaiser(6, 8.6), rtol=1e-4, atol=1e-6)


# ------------------------------------------------------------- setops.py
def _set_inputs(seed):
  rng = np.random.default_rng(seed)
  return rng.integers(0, 8, (3, 4)).astype(np.int32), rng.integers(3, 12, 6).astype(np.int32)


@pytest.mark.parametrize("seed", [0, 1])
def test_set_operations_match_numpy(seed):
  a, b = _set_inputs(seed)
  for name in ("union1d", "intersect1d", "setdiff1d", "setxor1d"):
    np.testing.assert_array_equal(getattr(jnp, name)(a, b), getattr(np, name)(a, b), err_msg=name)
  for got, want in zip(jnp.intersect1d(a, b, return_indices=True),
                       np.intersect1d(a, b, return_indices=True)):
    np.testing.assert_array_equal(got, want)
  ua, ub = np.unique(a), np.unique(b)
  np.testing.assert_array_equal(jnp.setdiff1d(ua, ub, assume_unique=True),
                                np.setdiff1d(ua, ub, assume_unique=True))
  np.testing.assert_array_equal(jnp.setxor1d(ua, ub, assume_unique=True),
                                np.setxor1d(ua, ub, assume_unique=True))
  for method in ("auto", "compare_all", "binary_search", "sort"):
    np.testing.assert_array_equal(jnp.isin(a, b, method=method), np.isin(a, b))
    np.testing.assert_array_equal(jnp.isin(a, b, invert=True, method=method),
                                  np.isin(a, b, invert=True))


def test_set_operations_size_fill_and_jit():
  # Goldens from JAX 0.10.2 for a = [4 1 3 3 9], b = [3 5 4 7].
  a, b = np.array([4, 1, 3, 3, 9], np.int32), np.array([3, 5, 4, 7], np.int32)
  goldens = {"union1d": [1, 3, 4, 5, 7, 9, 1], "setdiff1d": [1, 9, 0, 0, 0, 0, 0],
             "setxor1d": [1, 5, 7, 9, 1, 1, 1], "intersect1d": [3, 4, 3, 3, 3, 3, 3]}
  for name, want in goldens.items():
    fn = getattr(jnp, name)
    np.testing.assert_array_equal(fn(a, b, size=7), want, err_msg=name)
    np.testing.assert_array_equal(openjax.jit(lambda x, y, fn=fn: fn(x, y, size=7))(a, b), want)
    padded = fn(a, b, size=7, fill_value=-1)
    np.testing.assert_array_equal(padded[:len(getattr(np, name)(a, b))], getattr(np, name)(a, b))
    assert (np.asarray(padded[len(getattr(np, name)(a, b)):]) == -1).all()
    np.testing.assert_array_equal(fn(a, b, size=2), getattr(np, name)(a, b)[:2])
    with pytest.raises(openjax.errors.ConcretizationTypeError):
      openjax.jit(fn)(a, b)
  vals, i1, i2 = jnp.intersect1d(a, b, return_indices=True, size=4)
  np.testing.assert_array_equal(vals, [3, 4, 3, 3])
  np.testing.assert_array_equal(i1, [2, 0, 5, 5])
  np.testing.assert_array_equal(i2, [0, 2, 4, 4])
  np.testing.assert_array_equal(jnp.intersect1d(np.array([5, 5, 1]), np.array([9]), size=2),
                                [0, 0])
  assert jnp.union1d(np.array([1, 2]), np.array([1.0, 2.0])).dtype == np.float32
  r = jnp.isin(np.array([[1, 2], [3, 4]]), np.array([2.0, 4.0]))
  assert r.shape == (2, 2) and r.dtype == np.bool_
  with pytest.raises(ValueError, match="method='x' is not implemented"):
    jnp.isin(a, b, method="x")


# ------------------------------------------------------------- polynomial.py
def test_polynomial_arithmetic_and_calculus():
  rng = np.random.default_rng(4)
  p = rng.standard_normal(5).astype(F32)
  q = rng.standard_normal(3).astype(F32)
  x = rng.standard_normal((2, 3)).astype(F32)
  _close(jnp.polyval(p, x), np.polyval(p, x), rtol=1e-5, dtype=F32)
  _close(jnp.polyadd(p, q), np.polyadd(p, q), dtype=F32)
  _close(jnp.polyadd(q, p), np.polyadd(q, p))
  _close(jnp.polysub(q, p), np.polysub(q, p))
  _close(jnp.polymul(p, q), np.polymul(p, q), rtol=1e-5)
  (quot, rem), (quot_np, rem_np) = jnp.polydiv(p, q), np.polydiv(p, q)
  _close(quot, quot_np, rtol=1e-4, atol=1e-4)
  # JAX keeps the remainder at len(u) (leading zeros untrimmed), unlike NumPy.
  assert rem.shape == p.shape
  _close(rem[-len(rem_np):], rem_np, rtol=1e-4, atol=1e-4)
  _close(rem[:-len(rem_np)], np.zeros(len(p) - len(rem_np)), atol=1e-4)
  for m in (0, 1, 2, 6):
    _close(jnp.polyder(p, m), np.polyder(p, m), rtol=1e-5)
  k = np.array([0.5, -1.0], F32)
  _close(jnp.polyint(p, 2, k=k), np.polyint(p, 2, k=k), rtol=1e-5)
  _close(jnp.polyint(p), np.polyint(p), rtol=1e-5)
  # Dtypes from JAX 0.10.2: polyval/polyadd/polysub keep ints; the rest go inexact.
  ip, iq = np.array([1, 2, 3]), np.array([1, 2])
  assert jnp.polyval(ip, 2).dtype == np.int32 and int(jnp.polyval(ip, 2)) == 11
  assert not jnp.polyval(p, 2.0).weak_type
  assert jnp.polysub(ip, iq).dtype == np.int32
  assert jnp.polymul(ip, iq).dtype == np.float32
  _close(jnp.polyder(np.array([1, 2, 3, 4]), 2), [6.0, 4.0], dtype=F32)
  _close(jnp.polyint(ip, 2, k=3), [1 / 12, 1 / 3, 1.5, 3.0, 3.0], dtype=F32)
  with pytest.raises(ValueError, match="Order of derivative must be positive"):
    jnp.polyder(p, -1)
  q_, r_ = jnp.polydiv(np.array([1.0, 3, 2]), np.array([1.0, 1]), trim_leading_zeros=True)
  _close(q_, [1.0, 2.0])
  assert r_.shape == (0,)
  _close(openjax.jit(jnp.polyval)(p, x), np.polyval(p, x), rtol=1e-5)
  _close(openjax.grad(lambda c: jnp.polyval(c, 1.5))(p), 1.5 ** np.arange(4, -1, -1), rtol=1e-5)


def test_poly_roots_polyfit():
  z = np.array([1.0, -2.0, 0.5], F32)
  _close(jnp.poly(z), np.poly(z), dtype=F32)
  assert jnp.poly(np.array([1, 2])).dtype == np.float32
  a = np.array([[1.0, 2.0], [3.0, 4.0]], F32)
  _close(jnp.poly(a), np.poly(a), rtol=1e-4, atol=1e-4)
  r = jnp.roots(np.array([0.0, 1.0, -3.0, 2.0], F32))
  assert r.dtype == np.complex64
  _close(np.sort_complex(np.asarray(r)), [1.0, 2.0], rtol=1e-5)
  # strip_zeros=False keeps the length and reports one NaN per leading zero.
  r = np.asarray(jnp.roots(np.array([0.0, 1.0, -3.0, 2.0], F32), strip_zeros=False))
  assert r.shape == (3,) and np.isnan(r[2]) and np.allclose(np.sort_complex(r[:2]), [1, 2])
  assert jnp.roots(np.array([3.0])).shape == (0,)
  with pytest.raises(openjax.errors.ConcretizationTypeError):
    openjax.jit(jnp.roots)(np.array([1.0, 2.0]))
  rng = np.random.default_rng(5)
  x = np.linspace(-1, 1, 12).astype(F32)
  y = (2 * x ** 2 - x + 0.5 + 0.01 * rng.standard_normal(12)).astype(F32)
  _close(jnp.polyfit(x, y, 2), np.polyfit(x, y, 2), rtol=1e-4, atol=1e-5)
  w = rng.uniform(0.5, 1.5, 12).astype(F32)
  _close(jnp.polyfit(x, y, 3, w=w), np.polyfit(x, y, 3, w=w), rtol=1e-3, atol=1e-4)
  y2 = np.stack([y, -y], axis=1)
  _close(jnp.polyfit(x, y2, 1), np.polyfit(x, y2, 1), rtol=1e-4, atol=1e-5)
  c, v = jnp.polyfit(x, y, 2, cov=True)
  c_np, v_np = np.polyfit(x, y, 2, cov=True)
  _close(v, v_np, rtol=2e-2, atol=1e-7)
  _close(openjax.jit(lambda x, y: jnp.polyfit(x, y, 2))(x, y), c_np, rtol=1e-4, atol=1e-5)
  with pytest.raises(ValueError, match="expected deg >= 0"):
    jnp.polyfit(x, y, -1)


# ------------------------------------------------------------- index_tricks.py
# NumPy's "r"/"c" directives build np.matrix, which warns; jnp returns arrays.
@pytest.mark.filterwarnings("ignore:the matrix subclass:PendingDeprecationWarning")
def test_index_tricks_match_numpy():
  a, b = np.array([1, 2]), np.array([3, 4])
  cases = [
      (jnp.r_[1:3, 5, a], np.r_[1:3, 5, a]),
      (jnp.c_[a, b], np.c_[a, b]),
      (jnp.c_[np.array([[1, 2]]), 3, 4], np.c_[np.array([[1, 2]]), 3, 4]),
      (jnp.r_["0,2", a, b], np.r_["0,2", a, b]),
      (jnp.r_["-1,2,0", a, b], np.r_["-1,2,0", a, b]),
      (jnp.r_["r", a, 3], np.r_["r", a, 3]),
      (jnp.r_["c", a, 3], np.r_["c", a, 3]),
      (jnp.mgrid[0:2, 0:3], np.mgrid[0:2, 0:3]),
      (jnp.mgrid[0:4], np.mgrid[0:4]),
  ]
  for got, want in cases:
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, want)
  _close(jnp.r_[0:1:4j, 2.5], np.r_[0:1:4j, 2.5], dtype=F32)
  _close(jnp.mgrid[0:1:3j, 0:2], np.mgrid[0:1:3j, 0:2], dtype=F32)
  og, og_np = jnp.ogrid[0:2, 0:3:0.5], np.ogrid[0:2, 0:3:0.5]
  assert isinstance(og, list) and len(og) == 2
  for got, want in zip(og, og_np):
    _close(got, want, dtype=F32)   # JAX 0.10.2: float32 (2, 1) and (1, 6)
  assert jnp.s_[1:2, ::3] == np.s_[1:2, ::3] and jnp.index_exp[2:] == (slice(2, None),)
  with pytest.raises(ValueError, match="string directive"):
    jnp.r_[a, "0,2"]


# ------------------------------------------------------------- bits.py
def test_packbits_unpackbits():
  x = np.random.default_rng(6).integers(0, 3, (3, 11)).astype(np.int32)
  for axis in (None, 0, 1):
    for order in ("big", "little"):
      packed = np.packbits(x, axis, bitorder=order)
      got = jnp.packbits(x, axis, order)
      assert got.dtype == np.uint8
      np.testing.assert_array_equal(got, packed)
      for count in (None, 5, -3):
        np.testing.assert_array_equal(jnp.unpackbits(packed, axis, count, order),
                                      np.unpackbits(packed, axis, count, bitorder=order))
  np.testing.assert_array_equal(jnp.unpackbits(np.array([5], np.uint8), count=12),
                                np.unpackbits(np.array([5], np.uint8), count=12))
  np.testing.assert_array_equal(jnp.packbits(x.astype(bool)), np.packbits(x.astype(bool)))
  np.testing.assert_array_equal(openjax.jit(jnp.packbits)(x), np.packbits(x))
  with pytest.raises(TypeError, match="integer or boolean"):
    jnp.packbits(x.astype(F32))
  with pytest.raises(TypeError, match="unsigned byte"):
    jnp.unpackbits(x)
  with pytest.raises(ValueError, match="'order' must be either 'little' or 'big'"):
    jnp.packbits(x, bitorder="middle")


# ------------------------------------------------------------- index_tricks.py updates
def _np_inplace(fn, a, *args, **kw):
  out = np.array(a)
  fn(out, *args, **kw)
  return out


def test_functional_put_place_fill_diagonal():
  z = np.zeros((5, 3), F32)
  np.testing.assert_array_equal(jnp.fill_diagonal(z, np.array([1.0, 2.0]), inplace=False),
                                _np_inplace(np.fill_diagonal, z, np.array([1.0, 2.0])))
  cube = np.zeros((3, 3, 3), np.int32)
  np.testing.assert_array_equal(jnp.fill_diagonal(cube, 7, inplace=False),
                                _np_inplace(np.fill_diagonal, cube, 7))
  a = np.arange(6)
  ind, v = np.array([1, 4, -1]), np.array([10, 20])
  for mode in (None, "clip", "wrap"):
    want = _np_inplace(np.put, a, ind, v, mode=mode or "raise")
    np.testing.assert_array_equal(jnp.put(a, ind, v, mode=mode, inplace=False), want)
  # JAX 0.10.2 drops out-of-range indices by default (golden: [0 10 2 3 4 10]).
  np.testing.assert_array_equal(jnp.put(a, np.array([1, 7, -1]), v, inplace=False),
                                [0, 10, 2, 3, 4, 10])
  m = np.arange(6).reshape(2, 3) % 2 == 0
  b = np.arange(6).reshape(2, 3)
  np.testing.assert_array_equal(jnp.place(b, m, np.array([10, 20]), inplace=False),
                                _np_inplace(np.place, b, m, np.array([10, 20])))
  np.testing.assert_array_equal(
      openjax.jit(lambda b, m: jnp.place(b, m, np.array([10, 20]), inplace=False))(b, m),
      _np_inplace(np.place, b, m, np.array([10, 20])))
  idx = np.array([[0], [2]])
  np.testing.assert_array_equal(jnp.put_along_axis(b, idx, 9, 1, inplace=False),
                                _np_inplace(np.put_along_axis, b, idx, 9, 1))
  idx0 = np.array([[1, 0, 1]])
  vals = np.array([[5, 6, 7]])
  np.testing.assert_array_equal(jnp.put_along_axis(b, idx0, vals, 0, inplace=False),
                                _np_inplace(np.put_along_axis, b, idx0, vals, 0))
  np.testing.assert_array_equal(
      jnp.put_along_axis(b, np.array([[0], [5]]), 9, 1, inplace=False), [[9, 1, 2], [3, 4, 5]])
  for fn, args in [(jnp.put, (a, ind, v)), (jnp.place, (b, m, v)),
                   (jnp.put_along_axis, (b, idx, 9, 1))]:
    with pytest.raises(ValueError, match="cannot modify arrays in-place"):
      fn(*args)
  with pytest.raises(NotImplementedError, match="must use inplace=False"):
    jnp.fill_diagonal(z, 1.0)
