"""Differentiation transforms: ``jvp``, ``linearize``, ``vjp``, ``grad``,
``value_and_grad``, ``jacfwd``, ``jacrev``/``jacobian``, ``hessian``,
``linear_transpose``."""
from __future__ import annotations

import functools
from typing import Any, Callable, Sequence

import numpy as np

from openjax._src import dtypes, tree_util
from openjax._src.api.shapes import abstractify
from openjax._src.api.vmap import vmap
from openjax._src.core import eval_jaxpr
from openjax._src.interpreters.jvp import jvp_flat
from openjax._src.interpreters.partial_eval import linearize_flat
from openjax._src.interpreters.staging import trace_to_jaxpr
from openjax._src.interpreters.transpose import backward_pass
from openjax._src.primitives.ad_util import (UndefinedPrimal, Zero, instantiate_zeros,
                                             tangent_aval)
from openjax._src.primitives.shape import reshape, slice_in_dim
from openjax._src.runtime.transfer import device_put


def _flatten_fun(fun, in_tree, has_aux: bool, box: list):
  """``fun`` on flat inputs returning flat outputs; the output tree (and aux)
  land in ``box``."""
  def flat(*leaves):
    out = fun(*tree_util.tree_unflatten(in_tree, leaves))
    if has_aux:
      if not (isinstance(out, (tuple, list)) and len(out) == 2):
        raise TypeError("has_aux=True requires the function to return a pair "
                        "(output, auxiliary data)")
      out, aux = out
      box.append(("aux", aux))
    out_leaves, out_tree = tree_util.tree_flatten(out)
    box.append(("tree", out_tree))
    return out_leaves
  return flat


def _from_box(box, key):
  for k, v in box:
    if k == key:
      return v
  raise AssertionError(key)


def _check_tangent(p, t, i):
  pa, ta = abstractify(p), abstractify(t) if type(t) is not Zero else t.aval
  want = tangent_aval(pa)
  if ta.shape != pa.shape or np.dtype(ta.dtype) != want.dtype:
    raise TypeError(
        "primal and tangent arguments to jax.jvp do not match; dtypes must be equal, or "
        "in case of int/bool primal dtype the tangent dtype must be float0. Got primal "
        f"dtype {pa.dtype.name} and so expected tangent dtype {want.dtype.name}, but got "
        f"tangent dtype {np.dtype(ta.dtype).name} (shapes {pa.shape} and {ta.shape}) "
        f"for argument {i}.")


def jvp(fun: Callable, primals, tangents, has_aux: bool = False):
  """Forward-mode derivative: ``(fun(*primals), d fun(primals) . tangents)``.
  ``primals`` and ``tangents`` are tuples/lists of the same pytree structure."""
  if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
    raise TypeError("primal and tangent arguments to jax.jvp must be tuples or lists; "
                    f"found {type(primals).__name__} and {type(tangents).__name__}.")
  p_leaves, in_tree = tree_util.tree_flatten(tuple(primals))
  t_leaves, t_tree = tree_util.tree_flatten(tuple(tangents))
  if in_tree != t_tree:
    raise TypeError("primal and tangent arguments to jax.jvp must have the same tree "
                    f"structure; primals have tree structure {in_tree} whereas tangents "
                    f"have tree structure {t_tree}.")
  for i, (p, t) in enumerate(zip(p_leaves, t_leaves)):
    _check_tangent(p, t, i)
  tangents_in = [Zero(tangent_aval(abstractify(p))) if abstractify(t).dtype == dtypes.float0
                 else t for p, t in zip(p_leaves, t_leaves)]
  box: list = []
  f = _flatten_fun(lambda *a: fun(*a), in_tree, has_aux, box)
  p_out, t_out = jvp_flat(f, p_leaves, tangents_in, instantiate=True)
  out_tree = _from_box(box, "tree")
  res = (tree_util.tree_unflatten(out_tree, p_out), tree_util.tree_unflatten(out_tree, t_out))
  return (*res, _from_box(box, "aux")) if has_aux else res


def _linearize(fun, primals, has_aux):
  p_leaves, in_tree = tree_util.tree_flatten(tuple(primals))
  box: list = []
  f = _flatten_fun(lambda *a: fun(*a), in_tree, has_aux, box)
  t_avals = [tangent_aval(abstractify(p)) for p in p_leaves]
  p_out, lin, zero_mask = linearize_flat(f, p_leaves, t_avals)
  return p_leaves, in_tree, p_out, lin, zero_mask, box


def linearize(fun: Callable, *primals, has_aux: bool = False):
  """``(fun(*primals), f_jvp)`` where ``f_jvp(*tangents)`` evaluates the
  linearised function (the forward pass is not re-run)."""
  p_leaves, in_tree, p_out, lin, zero_mask, box = _linearize(fun, primals, has_aux)
  out_tree = _from_box(box, "tree")

  def f_jvp(*tangents):
    t_leaves, t_tree = tree_util.tree_flatten(tuple(tangents))
    if t_tree != in_tree:
      raise TypeError(f"linearized function called on tangent values inconsistent with "
                      f"the original primal values: expected {in_tree}, got {t_tree}")
    staged = iter(eval_jaxpr(lin.jaxpr, lin.residuals, *t_leaves))
    outs = [instantiate_zeros(Zero(a)) if z else next(staged)
            for a, z in zip(lin.out_avals, zero_mask)]
    return tree_util.tree_unflatten(out_tree, outs)

  primal_out = tree_util.tree_unflatten(out_tree, p_out)
  return (primal_out, f_jvp, _from_box(box, "aux")) if has_aux else (primal_out, f_jvp)


def _vjp_cts(lin, zero_mask, ct_leaves):
  staged_cts = [ct for ct, z in zip(ct_leaves, zero_mask) if not z]
  undefined = [UndefinedPrimal(a) for a in lin.in_avals]
  cts_in = backward_pass(lin.jaxpr, lin.residuals, undefined, staged_cts)
  return [instantiate_zeros(c) if type(c) is Zero else c for c in cts_in]


def vjp(fun: Callable, *primals, has_aux: bool = False, reduce_axes=()):
  """``(fun(*primals), vjp_fn)``; ``vjp_fn(cotangent)`` returns a tuple with
  one cotangent per primal argument (float0 zeros for integer inputs)."""
  p_leaves, in_tree, p_out, lin, zero_mask, box = _linearize(fun, primals, has_aux)
  out_tree = _from_box(box, "tree")
  out_avals = [abstractify(o) for o in p_out]

  def vjp_fn(ct):
    ct_leaves, ct_tree = tree_util.tree_flatten(ct)
    if ct_tree != out_tree:
      raise ValueError(f"unexpected tree structure of argument to vjp function: got "
                       f"{ct_tree}, but expected to match {out_tree}")
    for c, a in zip(ct_leaves, out_avals):
      ca = abstractify(c)
      if ca.shape != a.shape:
        raise ValueError(f"unexpected JAX type (e.g. shape/dtype) for argument to vjp "
                         f"function: got {ca.str_short()}, but expected "
                         f"{tangent_aval(a).str_short()} because the corresponding output "
                         f"of the function had JAX type {a.str_short()}")
    cts = _vjp_cts(lin, zero_mask, [device_put(c) if not hasattr(c, "aval") else c
                                    for c in ct_leaves])
    return tree_util.tree_unflatten(in_tree, cts)

  primal_out = tree_util.tree_unflatten(out_tree, p_out)
  return (primal_out, vjp_fn, _from_box(box, "aux")) if has_aux else (primal_out, vjp_fn)


def _check_input_dtype_grad(holomorphic: bool, allow_int: bool, aval) -> None:
  k = dtypes.kind(aval.dtype)
  if holomorphic:
    if k != "c":
      raise TypeError("grad with holomorphic=True requires inputs with complex dtype, "
                      f"but got {aval.dtype.name}.")
  if k in "biu":
    if not allow_int:
      raise TypeError(
          "grad requires real- or complex-valued inputs (input dtype that is a sub-dtype "
          f"of np.inexact), but got {aval.dtype.name}. If you want to use Boolean- or "
          "integer-valued inputs, use vjp or set allow_int to True.")
  elif k not in "fc":
    raise TypeError(f"grad requires numerical inputs, got {aval.dtype.name}")


def _check_output_dtype_grad(holomorphic: bool, aval) -> None:
  k = dtypes.kind(aval.dtype)
  if holomorphic:
    if k != "c":
      raise TypeError("grad with holomorphic=True requires outputs with complex dtype, "
                      f"but got {aval.dtype.name}.")
  elif k == "c":
    raise TypeError(
        "grad requires real-valued outputs (output dtype that is a sub-dtype of "
        f"np.floating), but got {aval.dtype.name}. For holomorphic differentiation, pass "
        "holomorphic=True. For differentiation of non-holomorphic functions involving "
        "complex outputs, use jax.vjp directly.")
  elif k != "f":
    raise TypeError(
        "grad requires real-valued outputs (output dtype that is a sub-dtype of "
        f"np.floating), but got {aval.dtype.name}. For differentiation of functions "
        "with integer outputs, use jax.vjp directly.")


def _argnums_tuple(argnums, nargs: int, fun_name: str):
  single = isinstance(argnums, int)
  nums = (argnums,) if single else tuple(argnums)
  for a in nums:
    if not isinstance(a, int):
      raise TypeError(f"argnums must be an int or a tuple of ints, got {argnums!r}")
    if not -nargs <= a < nargs:
      raise TypeError(f"differentiating with respect to argnums={argnums} requires at "
                      f"least {max(a + 1, -a)} positional arguments to be passed by the "
                      f"caller, but got only {nargs} positional arguments.")
  return single, tuple(a % nargs for a in nums)


def value_and_grad(fun: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False,
                   holomorphic: bool = False, allow_int: bool = False, reduce_axes=()):
  """A function returning ``(fun(*args), gradient)``; the gradient is taken
  with respect to the positional arguments ``argnums`` of a scalar ``fun``."""

  @functools.wraps(fun)
  def value_and_grad_f(*args, **kwargs):
    single, nums = _argnums_tuple(argnums, len(args), getattr(fun, "__name__", "fun"))
    dyn = tuple(args[i] for i in nums)
    for leaf in tree_util.tree_leaves(dyn):
      _check_input_dtype_grad(holomorphic, allow_int, abstractify(leaf))

    def f_partial(*dyn_args):
      full = list(args)
      for i, a in zip(nums, dyn_args):
        full[i] = a
      return fun(*full, **kwargs)

    out = vjp(f_partial, *dyn, has_aux=has_aux)
    if has_aux:
      ans, vjp_fn, aux = out
    else:
      ans, vjp_fn = out
    ans_leaves = tree_util.tree_leaves(ans)
    if len(ans_leaves) != 1 or abstractify(ans_leaves[0]).shape != ():
      shape = abstractify(ans_leaves[0]).shape if len(ans_leaves) == 1 else None
      raise TypeError("Gradient only defined for scalar-output functions. Output "
                      + (f"had shape: {shape}." if shape is not None
                         else f"was {type(ans).__name__} with {len(ans_leaves)} leaves."))
    aval = abstractify(ans_leaves[0])
    _check_output_dtype_grad(holomorphic, aval)
    one = np.ones((), aval.dtype)
    g = vjp_fn(tree_util.tree_unflatten(tree_util.tree_structure(ans), [one]))
    g = g[0] if single else tuple(g)
    return ((ans, aux), g) if has_aux else (ans, g)

  return value_and_grad_f


def grad(fun: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False,
         holomorphic: bool = False, allow_int: bool = False, reduce_axes=()):
  """The gradient of the scalar function ``fun`` with respect to the
  positional arguments ``argnums`` (a pytree like the argument)."""
  vg = value_and_grad(fun, argnums, has_aux, holomorphic, allow_int)

  @functools.wraps(fun)
  def grad_f(*args, **kwargs):
    if has_aux:
      (_, aux), g = vg(*args, **kwargs)
      return g, aux
    return vg(*args, **kwargs)[1]

  return grad_f


def _std_basis(avals, dtype):
  """One-hot rows for the flattened leaves: per leaf, shape (n, *leaf.shape)."""
  sizes = [a.size for a in avals]
  total = sum(sizes)
  eye = np.eye(total, dtype=dtype)
  out, start = [], 0
  for a, n in zip(avals, sizes):
    out.append(eye[:, start:start + n].reshape((total,) + a.shape))
    start += n
  return out


def _split_axis(y, axis: int, avals, lead_shape):
  """Split ``axis`` of ``y`` (a flattened concatenation of ``avals``) into one
  array per aval, shaped ``lead_shape + aval.shape`` (axis last or first)."""
  pieces, start = [], 0
  for a in avals:
    part = slice_in_dim(y, start, start + a.size, axis=axis)
    shape = (tuple(lead_shape) + a.shape) if axis != 0 else (a.shape + tuple(lead_shape))
    pieces.append(reshape(part, shape))
    start += a.size
  return pieces


def _partial_args(fun, args, kwargs, nums):
  def f_partial(*dyn_args):
    full = list(args)
    for i, a in zip(nums, dyn_args):
      full[i] = a
    return fun(*full, **kwargs)
  return f_partial


def _check_input_dtype_jac(holomorphic, aval, name):
  k = dtypes.kind(aval.dtype)
  if holomorphic and k != "c":
    raise TypeError(f"{name} with holomorphic=True requires inputs with complex dtype, "
                    f"but got {aval.dtype.name}.")
  if k not in "fc":
    raise TypeError(f"{name} requires real- or complex-valued inputs (input dtype that is a "
                    f"sub-dtype of np.inexact), but got {aval.dtype.name}. If you want to "
                    "use Boolean- or integer-valued inputs, use vjp or set allow_int to True.")


def jacfwd(fun: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False,
           holomorphic: bool = False):
  """The Jacobian of ``fun`` by forward mode: one JVP per input element,
  vectorised with vmap. Each output leaf gets shape ``out.shape + in.shape``."""

  @functools.wraps(fun)
  def jacfun(*args, **kwargs):
    single, nums = _argnums_tuple(argnums, len(args), "jacfwd")
    dyn = tuple(args[i] for i in nums)
    d_leaves, d_tree = tree_util.tree_flatten(dyn)
    avals = [abstractify(x) for x in d_leaves]
    for a in avals:
      _check_input_dtype_jac(holomorphic, a, "jacfwd")
    f_partial = _partial_args(fun, args, kwargs, nums)
    basis = _std_basis(avals, dtypes.result_type(*[a.dtype for a in avals]))

    def push(*tangent_leaves):
      tangents = tree_util.tree_unflatten(d_tree, [
          t.astype(a.dtype) if hasattr(t, "astype") else t for t, a in zip(tangent_leaves, avals)])
      out = jvp(f_partial, dyn, tangents, has_aux=has_aux)
      return (out[1], out[2]) if has_aux else out[1]

    res = vmap(push, out_axes=(-1, None) if has_aux else -1)(*basis)
    jac_out, aux = res if has_aux else (res, None)
    y_leaves, y_tree = tree_util.tree_flatten(jac_out)
    per_out = []
    for y in y_leaves:
      lead = abstractify(y).shape[:-1]
      pieces = _split_axis(y, -1, avals, lead)
      tree = tree_util.tree_unflatten(d_tree, pieces)
      per_out.append(tree[0] if single else tree)
    jac = tree_util.tree_unflatten(y_tree, per_out)
    return (jac, aux) if has_aux else jac

  return jacfun


def jacrev(fun: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False,
           holomorphic: bool = False, allow_int: bool = False):
  """The Jacobian of ``fun`` by reverse mode: one VJP per output element,
  vectorised with vmap. Each output leaf gets shape ``out.shape + in.shape``."""

  @functools.wraps(fun)
  def jacfun(*args, **kwargs):
    single, nums = _argnums_tuple(argnums, len(args), "jacrev")
    dyn = tuple(args[i] for i in nums)
    d_leaves, d_tree = tree_util.tree_flatten(dyn)
    in_avals = [abstractify(x) for x in d_leaves]
    for a in in_avals:
      if not allow_int:
        _check_input_dtype_jac(holomorphic, a, "jacrev")
    f_partial = _partial_args(fun, args, kwargs, nums)
    out = vjp(f_partial, *dyn, has_aux=has_aux)
    y, pullback = out[0], out[1]
    y_leaves, y_tree = tree_util.tree_flatten(y)
    out_avals = [abstractify(v) for v in y_leaves]
    basis = _std_basis(out_avals, dtypes.result_type(*[a.dtype for a in out_avals]))

    def pull(*ct_leaves):
      cts = tree_util.tree_unflatten(y_tree, [
          c.astype(a.dtype) for c, a in zip(ct_leaves, out_avals)])
      return tree_util.tree_leaves(pullback(cts))

    jac_in = vmap(pull)(*basis)   # per input leaf: (m, *in.shape)
    per_in = [_split_axis(j, 0, out_avals, a.shape) for j, a in zip(jac_in, in_avals)]
    per_out = []
    for k, oa in enumerate(out_avals):
      pieces = []
      for i, ia in enumerate(in_avals):
        part = per_in[i][k]  # shape oa.shape + ia.shape after the reshape above
        pieces.append(part)
      tree = tree_util.tree_unflatten(d_tree, pieces)
      per_out.append(tree[0] if single else tree)
    jac = tree_util.tree_unflatten(y_tree, per_out)
    return (jac, out[2]) if has_aux else jac

  return jacfun


jacobian = jacrev


def hessian(fun: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False,
            holomorphic: bool = False):
  """The Hessian of a scalar ``fun``: ``jacfwd(jacrev(fun))``."""
  return jacfwd(jacrev(fun, argnums, has_aux=has_aux, holomorphic=holomorphic), argnums,
                has_aux=has_aux, holomorphic=holomorphic)


def linear_transpose(fun: Callable, *primals, reduce_axes=()):
  """The transpose of the linear function ``fun`` at the shapes of
  ``primals``: a function from output cotangents to input cotangents."""
  p_leaves, in_tree = tree_util.tree_flatten(primals)
  in_avals = [abstractify(p) for p in p_leaves]
  for a in in_avals:
    if dtypes.kind(a.dtype) not in "fc":
      raise TypeError("linear_transpose only supports [float or complex] -> [float or "
                      f"complex], got {a.dtype.name}")
  box: list = []
  f = _flatten_fun(lambda *a: fun(*a), in_tree, False, box)
  jaxpr, consts = trace_to_jaxpr(f, in_avals)
  out_tree = _from_box(box, "tree")
  out_avals = jaxpr.out_avals

  def transposed(*cts):
    ct_leaves, ct_tree = tree_util.tree_flatten(cts[0] if len(cts) == 1 else cts)
    if ct_tree != out_tree:
      raise TypeError(f"cotangent tree does not match function output: expected {out_tree}, "
                      f"got {ct_tree}")
    for c, a in zip(ct_leaves, out_avals):
      ca = abstractify(c)
      if ca.shape != a.shape or ca.dtype != a.dtype:
        raise TypeError(f"cotangent type does not match function output: expected "
                        f"{a.str_short()}, got {ca.str_short()}")
    outs = backward_pass(jaxpr, consts, [UndefinedPrimal(a) for a in in_avals], ct_leaves)
    return tree_util.tree_unflatten(in_tree, [instantiate_zeros(o) for o in outs])

  return transposed
