"""Differentiation transforms: ``jvp``, ``linearize``, ``vjp``, ``grad``,
``value_and_grad``, ``jacfwd``, ``jacrev``/``jacobian``, ``hessian``,
``linear_transpose``. Argument checks and messages follow JAX 0.10.2."""
from __future__ import annotations

import functools
import operator
from typing import Any, Callable, Sequence

import numpy as np

from openjax._src import dtypes, tree_util
from openjax._src.api.ad_markers import DidntWant, DontWant, GradRef, GradValue
from openjax._src.api.shapes import abstractify
from openjax._src.api.transform_cache import call_transformed
from openjax._src.core.ref import Ref
from openjax._src.api.vmap import check_callable, vmap, wraps
from openjax._src.core import Array, Tracer, concrete_or_error, eval_jaxpr
from openjax._src.core.array import ShardedBuffer
from openjax._src.core.mesh import get_concrete_mesh
from openjax._src.core.sharding import NamedSharding
from openjax._src.interpreters.jvp import jvp_flat
from openjax._src.interpreters.partial_eval import (LinearFunction, dce_jaxpr_consts,
                                                    linearize_flat)
from openjax._src.interpreters.staging import DebugInfo, trace_to_jaxpr
from openjax._src.interpreters.transpose import backward_pass
from openjax._src.primitives.base.ad_util import UndefinedPrimal, Zero, tangent_aval
from openjax._src.primitives.base.structural import instantiate_zeros, reshape
from openjax._src.primitives.base.convert import _convert_element_type
from openjax._src.primitives.elementwise.arithmetic import real
from openjax._src.primitives.shape.shape import full_like, slice_in_dim
from openjax._src.primitives.shape.sharding_constraint import reshard_to
from openjax._src.runtime.transfer import device_put


# ------------------------------------------------------------------ helpers
def _typeof(x):
  """The aval of a valid JAX value, with JAX's TypeError otherwise."""
  try:
    return abstractify(x)
  except TypeError:
    raise TypeError(f"Argument '{x}' of type {type(x)} is not a valid JAX type.") from None


def _typecompat(a, b) -> bool:
  return a.shape == b.shape and np.dtype(a.dtype) == np.dtype(b.dtype)


def _str(aval) -> str:
  return aval.str_short(short_dtypes=False)


def _func_src(fun) -> str:
  return DebugInfo("vjp", fun, None).func_src


def _ensure_index(x) -> int | tuple[int, ...]:
  x = concrete_or_error(None, x, "expected a static index or sequence of indices.")
  try:
    return operator.index(x)
  except TypeError:
    return tuple(map(operator.index, x))


def _argnums_partial(fun, argnums, args, kwargs):
  """``fun`` of the arguments ``argnums`` only (the others and ``kwargs``
  fixed), and those arguments."""
  nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
  n = len(args)
  resolved = []
  for i in nums:
    if not -n <= i < n:
      raise ValueError(
          "Positional argument indices, e.g. for `static_argnums`, must have value greater "
          "than or equal to -len(args) and less than len(args), but got value "
          f"{i} for len(args) == {n}.")
    resolved.append(i % n)
  static = list(args)

  def f_partial(*dyn):
    full = list(static)
    for i, x in zip(resolved, dyn):
      full[i] = x
    return fun(*full, **kwargs)

  return f_partial, tuple(args[i] for i in resolved)


def _split_aux(out, has_aux: bool):
  if not has_aux:
    return out, None
  if not isinstance(out, (list, tuple)) or len(out) != 2:
    raise TypeError("expected function with aux output to return a two-element tuple, "
                    f"but got type {type(out)} with value {out!r}")
  return out


def _flat_fun(fun, in_tree, has_aux: bool, box: dict):
  """``fun`` on flat leaves returning flat leaves (plus aux leaves with
  ``has_aux``); the output and aux trees land in ``box``."""
  def flat(*leaves):
    out, aux = _split_aux(fun(*tree_util.tree_unflatten(in_tree, leaves)), has_aux)
    out_leaves, box["out"] = tree_util.tree_flatten(out)
    if not has_aux:
      return out_leaves
    aux_leaves, box["aux"] = tree_util.tree_flatten(aux)
    return out_leaves, aux_leaves
  return flat


# ---------------------------------------------------------------------- jvp
def jvp(fun: Callable, primals, tangents, has_aux: bool = False):
  """Forward-mode derivative: ``(fun(*primals), d fun(primals) . tangents)``
  (and the aux data with ``has_aux``). ``primals`` and ``tangents`` are
  tuples or lists of the same pytree structure; integer and boolean primals
  take float0 tangents."""
  check_callable(fun)
  if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
    raise TypeError("primal and tangent arguments to jax.jvp must be tuples or lists; "
                    f"found {type(primals).__name__} and {type(tangents).__name__}.")
  return _jvp(fun, primals, tangents, has_aux=has_aux)


def _jvp(fun, primals, tangents, has_aux=False):
  p_leaves, in_tree = tree_util.tree_flatten(primals)
  t_leaves, t_tree = tree_util.tree_flatten(tangents)
  if in_tree != t_tree:
    raise TypeError("primal and tangent arguments to jax.jvp must have the same tree "
                    f"structure; primals have tree structure {in_tree} whereas tangents "
                    f"have tree structure {t_tree}.")
  tangents_in = []
  for p, t in zip(p_leaves, t_leaves):
    pa, ta = _typeof(p), _typeof(t)
    want = tangent_aval(pa).dtype
    if want != ta.dtype:
      raise TypeError("primal and tangent arguments to jax.jvp do not match; dtypes must "
                      "be equal, or in case of int/bool primal dtype the tangent dtype "
                      f"must be float0.Got primal dtype {pa.dtype} and so expected tangent "
                      f"dtype {want}, but got tangent dtype {ta.dtype} instead.")
    if pa.shape != ta.shape:
      raise ValueError("jvp called with different primal and tangent shapes;Got primal "
                       f"shape {pa.shape} and tangent shape as {ta.shape}")
    tangents_in.append(Zero(tangent_aval(pa)) if want == dtypes.float0 else t)
  box: dict = {}
  if has_aux:
    def f(*leaves):
      out, aux = fun(*tree_util.tree_unflatten(in_tree, leaves))
      out_leaves, box["out"] = tree_util.tree_flatten(out)
      aux_leaves, box["aux"] = tree_util.tree_flatten(aux)
      return out_leaves, aux_leaves
    p_out, t_out, aux = jvp_flat(f, p_leaves, tangents_in, has_aux=True)
  else:
    p_out, t_out = jvp_flat(_flat_fun(fun, in_tree, False, box), p_leaves, tangents_in)
  out_tree = box["out"]
  res = (tree_util.tree_unflatten(out_tree, p_out), tree_util.tree_unflatten(out_tree, t_out))
  return (*res, tree_util.tree_unflatten(box["aux"], aux)) if has_aux else res


# --------------------------------------------------------------- linearize
def _linearize(fun, primals, has_aux):
  p_leaves, in_tree = tree_util.tree_flatten(primals)
  in_avals = [_typeof(p) for p in p_leaves]
  box: dict = {}
  out = linearize_flat(_flat_fun(fun, in_tree, has_aux, box), p_leaves,
                       [tangent_aval(a) for a in in_avals], has_aux=has_aux)
  p_out, lin, zero_mask = out[:3]
  aux = tree_util.tree_unflatten(box["aux"], out[3]) if has_aux else None
  return in_tree, in_avals, p_out, box["out"], lin, zero_mask, aux


class _LinearizedJVP:
  """The ``f_jvp`` that ``linearize`` returns: tangents of the primals ->
  tangent of the output, from the saved residuals. A pytree whose leaves
  are the residuals, so it can be passed through ``jit`` (as JAX's)."""

  def __init__(self, in_tree, in_avals, out_tree, lin, zero_mask):
    self._in_tree, self._in_avals, self._out_tree = in_tree, in_avals, out_tree
    self._lin, self._zero_mask = lin, zero_mask

  def __call__(self, *tangents):
    t_leaves, t_tree = tree_util.tree_flatten(tangents)
    if t_tree != self._in_tree:
      raise TypeError(f"expected {self._in_tree}, got {t_tree}")
    for pa, t in zip(self._in_avals, t_leaves):
      ta, want = _typeof(t), tangent_aval(pa)
      if not _typecompat(want, ta):
        raise ValueError(
            "linearized function called on tangent values inconsistent with the original "
            f"primal values:\nGot tangent aval {_str(ta)} for primal aval {_str(pa)} but "
            f"expected {_str(want)}.")
    lin = self._lin
    staged = iter(eval_jaxpr(lin.jaxpr, lin.residuals, *t_leaves))
    outs = [instantiate_zeros(Zero(a)) if z else next(staged)
            for a, z in zip(lin.out_avals, self._zero_mask)]
    return tree_util.tree_unflatten(self._out_tree, outs)


def _residuals_pytree(cls, static_fields):
  """Register ``cls`` (holding a ``LinearFunction`` in ``_lin``) as a pytree
  whose leaves are the residuals."""
  def flatten(obj):
    lin = obj._lin
    static = tuple(getattr(obj, f) for f in static_fields)
    return lin.residuals, (static, lin.jaxpr, tuple(lin.in_avals), tuple(lin.out_avals))

  def unflatten(aux, residuals):
    static, jaxpr, in_avals, out_avals = aux
    obj = cls.__new__(cls)
    for f, v in zip(static_fields, static):
      setattr(obj, f, v)
    obj._lin = LinearFunction(jaxpr, list(residuals), list(in_avals), list(out_avals))
    return obj

  tree_util.register_pytree_node(cls, flatten, unflatten)


_residuals_pytree(_LinearizedJVP, ("_in_tree", "_in_avals", "_out_tree", "_zero_mask"))


def linearize(fun: Callable, *primals, has_aux: bool = False):
  """``(fun(*primals), f_jvp)`` (and the aux data with ``has_aux``), where
  ``f_jvp(*tangents)`` evaluates the linearised function from the saved
  residuals (the forward pass is not re-run)."""
  check_callable(fun)
  in_tree, in_avals, p_out, out_tree, lin, zero_mask, aux = _linearize(fun, primals, has_aux)
  f_jvp = _LinearizedJVP(in_tree, tuple(in_avals), out_tree, lin, tuple(zero_mask))
  primal_out = tree_util.tree_unflatten(out_tree, p_out)
  return (primal_out, f_jvp, aux) if has_aux else (primal_out, f_jvp)


# ---------------------------------------------------------------------- vjp
_VJP_TOO_MANY_ARGS = """
The function returned by `jax.vjp` applied to {} was called with {} arguments,
but functions returned by `jax.vjp` must be called with a single argument
corresponding to the single value returned by the function being differentiated
(even if that returned value is a tuple or other container).

For example, if we have:

  def f(x):
    return (x, x)
  _, f_vjp = jax.vjp(f, 1.0)

the function `f` returns a single tuple as output, and so we call `f_vjp` with a
single tuple as its argument:

  x_bar, = f_vjp((2.0, 2.0))

If we instead call `f_vjp(2.0, 2.0)`, with the values 'splatted out' as
arguments rather than in a tuple, this error can arise.
"""


class _VJPFunction:
  """The pullback ``vjp`` returns: cotangent of the output -> tuple of
  cotangents of the primals (float0 zeros for integer primals). A pytree
  whose leaves are the residuals, so it can be passed through ``jit``."""

  def __init__(self, fun_src, in_tree, out_tree, out_avals, lin, zero_mask):
    self._fun_src = fun_src
    self._in_tree, self._out_tree, self._out_avals = in_tree, out_tree, out_avals
    self._lin, self._zero_mask = lin, zero_mask

  def __call__(self, ct, *extra):
    if extra:
      name = self._fun_src.split(" ")[0]
      raise TypeError(_VJP_TOO_MANY_ARGS.format(name, len(extra) + 1))
    ct_leaves, ct_tree = tree_util.tree_flatten(ct, is_leaf=lambda x: type(x) is Zero)
    if ct_tree != self._out_tree:
      msg = ("unexpected tree structure.\n\nThe argument to a VJP function returned by "
             "`jax.vjp` must match the pytree\nstructure of the differentiated function "
             f"{self._fun_src}.\n\nBut the tree structures differ:\n")
      msg += "\n".join(
          f"  * out{tree_util.keystr(path)} was a {thing1} in the original output, but a "
          f"{thing2} here, so {explanation}."
          for path, thing1, thing2, explanation
          in tree_util.equality_errors_pytreedef(self._out_tree, ct_tree))
      raise ValueError(msg)
    cts = []
    for c, a in zip(ct_leaves, self._out_avals):
      want = tangent_aval(a)
      if type(c) is Zero:
        cts.append(c)
        continue
      ca = _typeof(c)
      if not _typecompat(ca, want) and not (ca.shape == want.shape
                                            and want.dtype == dtypes.float0):
        raise ValueError(
            "unexpected JAX type (e.g. shape/dtype) for argument to VJP function: got "
            f"{_str(ca)}, but expected {_str(want)} because the corresponding output of "
            f"the differentiated function had JAX type {_str(a)}")
      cts.append(Zero(want) if want.dtype == dtypes.float0 else c)
    staged = [c for c, z in zip(cts, self._zero_mask) if not z]
    undefined = [UndefinedPrimal(a) for a in self._lin.in_avals]
    cts_in = backward_pass(self._lin.jaxpr, self._lin.residuals, undefined, staged)
    return tree_util.tree_unflatten(
        self._in_tree, [_laid_out_as_primal(instantiate_zeros(c), a)
                        for c, a in zip(cts_in, self._lin.in_avals)])


def _laid_out_as_primal(ct, aval):
  """A cotangent typed as its primal over Explicit axes (as JAX's: the
  gradient of an argument split over x is split over x)."""
  if aval.sharding is None or _typeof(ct).sharding == aval.sharding:
    return ct
  if isinstance(ct, Tracer):
    return reshard_to(ct, aval.sharding)
  # An eager cotangent: laid out over the devices of its own mesh (or of
  # the mesh in context) that has the primal's abstract mesh.
  mesh = (ct._buffer.sharding.mesh if type(ct) is Array and type(ct._buffer) is ShardedBuffer
          else get_concrete_mesh())
  if mesh.empty or mesh.abstract_mesh != aval.sharding.mesh:
    return ct
  return device_put(ct, NamedSharding(mesh, aval.sharding.spec))


def _with_refs(self, *maybe_ct_refs):
  """The pullback delivering each primal's cotangent as ``maybe_ct_refs``
  says (a pytree like the primals'): a ``Ref`` accumulates it in place
  (``GradRef()`` stands in the result), ``jax.ad.DontWant()`` drops it
  (``DidntWant()``), ``jax.ad.GradValue()`` returns it."""
  is_marker = lambda x: isinstance(x, (Ref, GradValue, DontWant))   # noqa: E731
  targets, tree = tree_util.tree_flatten(maybe_ct_refs, is_leaf=is_marker)
  if tree != self._in_tree:
    raise ValueError(
        "unexpected tree structure in the arguments to a VJP function's `with_refs` method: "
        f"they must match the primal arguments of the differentiated function "
        f"{self._fun_src}, with one Ref, jax.ad.GradValue() or jax.ad.DontWant() per array "
        f"argument; got {tree}, expected {self._in_tree}.")

  def pullback(ct):
    cts = tree_util.tree_leaves(self(ct))
    out = []
    for target, c in zip(targets, cts):
      if isinstance(target, Ref):
        if target.shape != _typeof(c).shape:
          raise ValueError(
              f"unexpected JAX type (e.g. shape/dtype) for gradient ref passed to the VJP "
              f"function's `with_refs` method: the given ref has type {target.aval}, but "
              f"accumulating this argument's gradient requires a ref of type "
              f"Ref{{{_str(_typeof(c))}}}")
        target[...] = target[...] + c
        out.append(GradRef())
      else:
        out.append(DidntWant() if isinstance(target, DontWant) else c)
    return tree_util.tree_unflatten(self._in_tree, out)
  return pullback


_VJPFunction.with_refs = _with_refs
_residuals_pytree(_VJPFunction, ("_fun_src", "_in_tree", "_out_tree", "_out_avals",
                                 "_zero_mask"))


def vjp(fun: Callable, *primals, has_aux: bool = False, reduce_axes=()):
  """``(fun(*primals), vjp_fn)`` (and the aux data with ``has_aux``);
  ``vjp_fn(cotangent)`` returns a tuple with one cotangent per primal."""
  if reduce_axes:
    raise NotImplementedError("reduce_axes argument to vjp is deprecated")
  check_callable(fun)
  in_tree, _, p_out, out_tree, lin, zero_mask, aux = _linearize(fun, primals, has_aux)
  out_avals = [_typeof(o) for o in p_out]
  vjp_fn = _VJPFunction(_func_src(fun), in_tree, out_tree, tuple(out_avals), lin,
                        tuple(zero_mask))
  primal_out = tree_util.tree_unflatten(out_tree, p_out)
  return (primal_out, vjp_fn, aux) if has_aux else (primal_out, vjp_fn)


# --------------------------------------------------------------------- grad
def _check_input_dtype_revderiv(name: str, holomorphic: bool, allow_int: bool, x) -> None:
  aval = _typeof(x)
  k = dtypes.kind(aval.dtype)
  if holomorphic and k != "c":
    raise TypeError(f"{name} with holomorphic=True requires inputs with complex dtype, "
                    f"but got {aval.dtype.name}.")
  if k in "biu":
    if not allow_int:
      raise TypeError(f"{name} requires real- or complex-valued inputs (input dtype that is "
                      f"a sub-dtype of np.inexact), but got {aval.dtype.name}. If you want "
                      "to use Boolean- or integer-valued inputs, use vjp or set allow_int "
                      "to True.")
  elif k not in "fc":
    raise TypeError(f"{name} requires numerical-valued inputs (input dtype that is a "
                    f"sub-dtype of np.bool_ or np.number), but got {aval.dtype.name}.")


def _check_output_dtype_revderiv(name: str, holomorphic: bool, x) -> None:
  aval = _typeof(x)
  k = dtypes.kind(aval.dtype)
  if holomorphic:
    if k != "c":
      raise TypeError(f"{name} with holomorphic=True requires outputs with complex dtype, "
                      f"but got {aval.dtype.name}.")
  elif k == "c":
    raise TypeError(f"{name} requires real-valued outputs (output dtype that is a sub-dtype "
                    f"of np.floating), but got {aval.dtype.name}. For holomorphic "
                    "differentiation, pass holomorphic=True. For differentiation of "
                    "non-holomorphic functions involving complex outputs, use jax.vjp "
                    "directly.")
  elif k != "f":
    raise TypeError(f"{name} requires real-valued outputs (output dtype that is a sub-dtype "
                    f"of np.floating), but got {aval.dtype.name}. For differentiation of "
                    "functions with integer outputs, use jax.vjp directly.")


def _check_scalar(x) -> None:
  try:
    aval = abstractify(x)
  except TypeError:
    raise TypeError(f"Gradient only defined for scalar-output functions. Output was {x}."
                    ) from None
  if aval.shape != ():
    raise TypeError("Gradient only defined for scalar-output functions. Output had "
                    f"shape: {aval.shape}.")


def value_and_grad(fun: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False,
                   holomorphic: bool = False, allow_int: bool = False, reduce_axes=()):
  """A function returning ``(fun(*args), gradient)`` (``((value, aux),
  gradient)`` with ``has_aux``): the gradient of the scalar ``fun`` with
  respect to the positional arguments ``argnums``."""
  if reduce_axes:
    raise NotImplementedError("reduce_axes argument to grad is deprecated")
  check_callable(fun)
  argnums = _ensure_index(argnums)

  docstr = ("Value and gradient of {fun} with respect to positional argument(s) "
            "{argnums}. Takes the same arguments as {fun} but returns a two-element tuple "
            "where the first element is the value of {fun} and the second element is the "
            "gradient, which has the same shape as the arguments at positions {argnums}.")

  params = ("value_and_grad", argnums, has_aux, holomorphic, allow_int)

  @wraps(fun, docstr=docstr, argnums=argnums)
  def value_and_grad_f(*args, **kwargs):
    return call_transformed(params, fun, differentiated, args, kwargs)

  def differentiated(*args, **kwargs):
    max_argnum = argnums if isinstance(argnums, int) else max(argnums)
    if max_argnum >= len(args):
      raise TypeError(f"differentiating with respect to argnums={argnums} requires at "
                      f"least {max_argnum + 1} positional arguments to be passed by the "
                      f"caller, but got only {len(args)} positional arguments.")
    f_partial, dyn_args = _argnums_partial(fun, argnums, args, kwargs)
    for leaf in tree_util.tree_leaves(dyn_args):
      _check_input_dtype_revderiv("grad", holomorphic, allow_int, leaf)
    ans, vjp_fn, *aux = vjp(f_partial, *dyn_args, has_aux=has_aux)
    _check_scalar(ans)
    _check_output_dtype_revderiv("grad", holomorphic, ans)
    g = vjp_fn(full_like(ans, 1, shape=()))
    g = g[0] if isinstance(argnums, int) else g
    return ((ans, *aux), g) if has_aux else (ans, g)

  return value_and_grad_f


def grad(fun: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False,
         holomorphic: bool = False, allow_int: bool = False, reduce_axes=()):
  """The gradient of the scalar function ``fun`` with respect to the
  positional arguments ``argnums`` (a pytree like the argument; a tuple of
  them for a tuple ``argnums``); ``(gradient, aux)`` with ``has_aux``."""
  if reduce_axes:
    raise NotImplementedError("reduce_axes argument to grad is deprecated")
  vg = value_and_grad(fun, argnums, has_aux=has_aux, holomorphic=holomorphic,
                      allow_int=allow_int)

  docstr = ("Gradient of {fun} with respect to positional argument(s) {argnums}. Takes the "
            "same arguments as {fun} but returns the gradient, which has the same shape as "
            "the arguments at positions {argnums}.")

  @wraps(fun, docstr=docstr, argnums=argnums)
  def grad_f(*args, **kwargs):
    return vg(*args, **kwargs)[1]

  @wraps(fun, docstr=docstr, argnums=argnums)
  def grad_f_aux(*args, **kwargs):
    (_, aux), g = vg(*args, **kwargs)
    return g, aux

  return grad_f_aux if has_aux else grad_f


# ---------------------------------------------------------------- Jacobians
def _std_basis(pytree):
  """One-hot tangents for every element of ``pytree``: each leaf gets a
  leading axis of the total size (JAX's ``_std_basis``)."""
  leaves = tree_util.tree_leaves(pytree)
  avals = [_typeof(x) for x in leaves]
  n = sum(a.size for a in avals)
  flat = np.eye(n, dtype=dtypes.result_type(*leaves)) if leaves else np.zeros((0, 0))
  return _unravel(pytree, 1, None, flat)


def _unravel(pytree, axis: int, example, arr):
  """Split ``arr`` along ``axis`` into pieces shaped like the leaves of
  ``pytree`` (in place of that axis), cast like ``example`` (like each leaf
  when ``example`` is None; real part taken for a real target)."""
  leaves, treedef = tree_util.tree_flatten(pytree)
  shape = np.shape(arr) if isinstance(arr, np.ndarray) else _typeof(arr).shape
  parts, start = [], 0
  for leaf in leaves:
    la = _typeof(leaf)
    target = _typeof(example) if example is not None else la
    weak = target.weak_type
    new_shape = shape[:axis] + la.shape + shape[axis + 1:]
    stop = start + la.size
    if _typeof(arr).dtype == dtypes.float0 or target.dtype == dtypes.float0:
      # Cotangents of integer inputs carry no data: zeros of the target dtype.
      parts.append(np.zeros(new_shape, dtypes.float0) if target.dtype == dtypes.float0
                   else _cast_np(np.zeros(new_shape, target.dtype), target.dtype, weak))
    elif isinstance(arr, np.ndarray):
      idx = [slice(None)] * len(shape)
      idx[axis] = slice(start, stop)
      parts.append(_cast_np(arr[tuple(idx)].reshape(new_shape), target.dtype, weak))
    else:
      x = reshape(slice_in_dim(arr, start, stop, axis=axis), new_shape)
      if dtypes.kind(_typeof(x).dtype) == "c" and dtypes.kind(target.dtype) != "c":
        x = real(x)
      parts.append(_convert_element_type(x, target.dtype, weak))
    start = stop
  return tree_util.tree_unflatten(treedef, parts)


def _cast_np(x: np.ndarray, dtype, weak: bool):
  if dtypes.kind(x.dtype) == "c" and dtypes.kind(dtype) != "c":
    x = np.real(x)
  return _convert_element_type(device_put(np.asarray(x)), dtype, weak)


def _check_input_dtype_jacfwd(holomorphic: bool, x) -> None:
  aval = _typeof(x)
  k = dtypes.kind(aval.dtype)
  if holomorphic:
    if k != "c":
      raise TypeError("jacfwd with holomorphic=True requires inputs with complex dtype, "
                      f"but got {aval.dtype.name}.")
  elif k != "f":
    raise TypeError("jacfwd requires real-valued inputs (input dtype that is a sub-dtype of "
                    f"np.floating), but got {aval.dtype.name}. For holomorphic "
                    "differentiation, pass holomorphic=True. For differentiation of "
                    "non-holomorphic functions involving complex inputs or integer inputs, "
                    "use jax.jvp directly.")


def _check_output_dtype_jacfwd(holomorphic: bool, x) -> None:
  aval = _typeof(x)
  if holomorphic and dtypes.kind(aval.dtype) != "c":
    raise TypeError("jacfwd with holomorphic=True requires outputs with complex dtype, "
                    f"but got {aval.dtype.name}.")


def jacfwd(fun: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False,
           holomorphic: bool = False):
  """The Jacobian of ``fun`` by forward mode (one JVP per input element,
  vectorised with vmap). Each output leaf maps to a tree like the inputs whose
  leaves have shape ``out.shape + in.shape``; ``(jacobian, aux)`` with
  ``has_aux``."""
  check_callable(fun)
  argnums = _ensure_index(argnums)

  docstr = ("Jacobian of {fun} with respect to positional argument(s) {argnums}. Takes "
            "the same arguments as {fun} but returns the jacobian of the output with "
            "respect to the arguments at positions {argnums}.")

  @wraps(fun, docstr=docstr, argnums=argnums)
  def jacfun(*args, **kwargs):
    f_partial, dyn_args = _argnums_partial(fun, argnums, args, kwargs)
    tree_util.tree_map(functools.partial(_check_input_dtype_jacfwd, holomorphic), dyn_args)
    pushfwd = functools.partial(_jvp, f_partial, dyn_args, has_aux=has_aux)
    if has_aux:
      y, jac, aux = vmap(pushfwd, out_axes=(None, -1, None))(_std_basis(dyn_args))
    else:
      y, jac = vmap(pushfwd, out_axes=(None, -1))(_std_basis(dyn_args))
    tree_util.tree_map(functools.partial(_check_output_dtype_jacfwd, holomorphic), y)
    example = dyn_args[0] if isinstance(argnums, int) else dyn_args
    jac_tree = tree_util.tree_map(
        lambda y_leaf, arr: _unravel(example, _typeof(arr).ndim - 1, y_leaf, arr), y, jac)
    return (jac_tree, aux) if has_aux else jac_tree

  return jacfun


def jacrev(fun: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False,
           holomorphic: bool = False, allow_int: bool = False):
  """The Jacobian of ``fun`` by reverse mode (one VJP per output element,
  vectorised with vmap). Each output leaf maps to a tree like the inputs whose
  leaves have shape ``out.shape + in.shape``; ``(jacobian, aux)`` with
  ``has_aux``."""
  check_callable(fun)

  docstr = ("Jacobian of {fun} with respect to positional argument(s) {argnums}. Takes "
            "the same arguments as {fun} but returns the jacobian of the output with "
            "respect to the arguments at positions {argnums}.")

  @wraps(fun, docstr=docstr, argnums=argnums)
  def jacfun(*args, **kwargs):
    f_partial, dyn_args = _argnums_partial(fun, argnums, args, kwargs)
    tree_util.tree_map(
        functools.partial(_check_input_dtype_revderiv, "jacrev", holomorphic, allow_int),
        dyn_args)
    y, pullback, *aux = vjp(f_partial, *dyn_args, has_aux=has_aux)
    tree_util.tree_map(functools.partial(_check_output_dtype_revderiv, "jacrev", holomorphic),
                       y)
    jac = vmap(pullback)(_std_basis(y))
    jac = jac[0] if isinstance(argnums, int) else jac
    example = dyn_args[0] if isinstance(argnums, int) else dyn_args
    jac_tree = tree_util.tree_map(lambda x_leaf, arr: _unravel(y, 0, x_leaf, arr),
                                  example, jac)
    jac_tree = tree_util.tree_transpose(tree_util.tree_structure(example),
                                        tree_util.tree_structure(y), jac_tree)
    return (jac_tree, *aux) if has_aux else jac_tree

  return jacfun


def jacobian(fun: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False,
             holomorphic: bool = False, allow_int: bool = False):
  """Alias of ``jacrev``."""
  return jacrev(fun, argnums=argnums, has_aux=has_aux, holomorphic=holomorphic,
                allow_int=allow_int)


def hessian(fun: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False,
            holomorphic: bool = False):
  """The Hessian of ``fun``, ``jacfwd(jacrev(fun))``: for pytrees, a tree of
  the output's structure of trees of the input's structure of trees of it."""
  return jacfwd(jacrev(fun, argnums, has_aux=has_aux, holomorphic=holomorphic),
                argnums, has_aux=has_aux, holomorphic=holomorphic)


# -------------------------------------------------------- linear_transpose
def linear_transpose(fun: Callable, *primals, reduce_axes=()):
  """The transpose of the linear function ``fun`` at the shapes and dtypes of
  ``primals`` (arrays or ``ShapeDtypeStruct``s): a function of one argument,
  the output cotangent, returning a tuple of cotangents like ``primals``."""
  if reduce_axes:
    raise NotImplementedError("reduce_axes argument to transpose is deprecated")
  p_leaves, in_tree = tree_util.tree_flatten(primals)
  in_avals = [abstractify(p) for p in p_leaves]
  box: dict = {}
  jaxpr, consts = trace_to_jaxpr(_flat_fun(fun, in_tree, False, box), in_avals,
                                 DebugInfo("linear_transpose", fun, None))
  jaxpr, consts = dce_jaxpr_consts(jaxpr, consts)
  out_tree = box["out"]
  out_avals = tuple(v.aval for v in jaxpr.outvars)
  in_dtypes = [a.dtype for a in in_avals]
  out_dtypes = [a.dtype for a in out_avals]
  kinds = [dtypes.kind(d) for d in in_dtypes + out_dtypes]
  if not (all(k in "fc" for k in kinds) or all(k in "iu" for k in kinds)):
    raise TypeError("linear_transpose only supports [float or complex] -> [float or "
                    "complex], and integer -> integer functions, but got "
                    f"{in_dtypes} -> {out_dtypes}.")

  def transposed_fun(out_cotangent):
    ct_leaves, ct_tree = tree_util.tree_flatten(out_cotangent)
    if ct_tree != out_tree:
      raise TypeError("cotangent tree does not match function output, expected "
                      f"{out_tree} but got {ct_tree}")
    if not all(_typecompat(a, _typeof(c)) for a, c in zip(out_avals, ct_leaves)):
      raise TypeError("cotangent type does not match function output, expected "
                      f"{out_avals} but got {ct_leaves}")
    outs = backward_pass(jaxpr, consts, [UndefinedPrimal(a) for a in in_avals], ct_leaves)
    return tree_util.tree_unflatten(in_tree, [instantiate_zeros(o) for o in outs])

  return transposed_fun


__all__ = ["jvp", "linearize", "vjp", "grad", "value_and_grad", "jacfwd", "jacrev",
           "jacobian", "hessian", "linear_transpose"]
