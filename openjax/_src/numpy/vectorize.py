"""``jnp.vectorize``: NumPy's ``np.vectorize`` (with gufunc signatures) as a
stack of ``vmap``s, one per broadcast (loop) dimension.

A signature such as ``'(m,n),(n)->(m)'`` names the trailing *core* dimensions
each argument keeps when ``pyfunc`` sees it; every leading dimension is a loop
dimension, broadcast NumPy-style across the arguments. Rather than
materialising broadcast copies, a size-1 loop dimension is squeezed away and
its argument passed unmapped (``in_axes=None``) at that level, so the batching
rules see only the arguments that really vary.
"""
from __future__ import annotations

import functools
import re
import warnings
from typing import Any, Callable, Sequence

import numpy as np

from openjax._src import lax
from openjax._src import tree_util
from openjax._src.api.transform_cache import call_transformed
from openjax._src.api.vmap import vmap
from openjax._src.config import config
from openjax._src.numpy.creation import asarray

__all__ = ["vectorize"]

# The gufunc signature grammar (numpy's c-api "generalized ufuncs" page):
# argument lists of parenthesised, comma-separated dimension names, an arrow
# between inputs and outputs, no spaces.
_DIM_NAME = r"\w+"
_CORE_DIMS = rf"\((?:{_DIM_NAME}(?:,{_DIM_NAME})*)?\)"
_CORE_DIMS_LIST = rf"{_CORE_DIMS}(?:,{_CORE_DIMS})*"
_SIGNATURE_RE = re.compile(rf"^{_CORE_DIMS_LIST}->{_CORE_DIMS_LIST}$")

CoreDims = tuple[str, ...]


def _parse_signature(signature: str) -> tuple[list[CoreDims], list[CoreDims]]:
  """``'(m,n),(n)->(m)'`` -> ``([('m','n'), ('n',)], [('m',)])``."""
  if not isinstance(signature, str) or not _SIGNATURE_RE.match(signature):
    raise ValueError(f"not a valid gufunc signature: {signature}")
  ins, outs = signature.split("->")
  def parse(side: str) -> list[CoreDims]:
    return [tuple(re.findall(_DIM_NAME, group)) for group in re.findall(_CORE_DIMS, side)]
  return parse(ins), parse(outs)


def _bind_core_sizes(sizes: dict[str, int], shape: tuple[int, ...], core: CoreDims,
                     context: str, *, is_input: bool) -> None:
  """Check ``shape``'s trailing core dimensions against the sizes already
  bound to their names (in ``sizes``), binding the names seen first."""
  if is_input and len(shape) < len(core):
    raise ValueError(f"input with shape {shape!r} does not have enough dimensions for "
                     f"all core dimensions {core!r} {context}")
  if not is_input and len(shape) != len(core):
    raise ValueError(f"output shape {shape!r} does not match core dimensions {core!r} "
                     f"{context}")
  core_shape = shape[len(shape) - len(core):]
  for name, size in zip(core, core_shape):
    bound = sizes.setdefault(name, size)
    if bound != size:
      raise ValueError(f"inconsistent size for core dimension {name!r}: {size!r} vs "
                       f"{bound!r} {context}")


def _with_output_check(fun: Callable, sizes: dict[str, int], out_core: list[CoreDims],
                       context: str) -> Callable:
  """``fun`` that checks, per example, that its outputs carry the core
  dimensions the signature promises (sizes consistent with the inputs')."""
  def checked(*args):
    out = fun(*args)
    outs = out if isinstance(out, tuple) else (out,)
    if len(out_core) > 1 and not isinstance(out, tuple):
      raise TypeError(f"output must be a tuple when multiple outputs are expected, "
                      f"got: {out!r}\n{context}")
    if len(outs) != len(out_core):
      raise TypeError(f"wrong number of output arguments: expected {len(out_core)!r}, "
                      f"got {len(outs)!r} {context}")
    out_sizes = dict(sizes)
    for o, core in zip(outs, out_core):
      _bind_core_sizes(out_sizes, tuple(np.shape(o)), core, context, is_input=False)
    return out
  return checked


def _bind_excluded(fun: Callable, excluded: Sequence[int | str], args: Sequence[Any],
                   kwargs: dict[str, Any]) -> tuple[Callable, list, dict]:
  """Split off the excluded positional (int) and keyword (str) arguments:
  they reach ``fun`` unchanged while the rest are vectorized."""
  if not excluded:
    return fun, list(args), kwargs
  fixed_pos = [(i, args[i]) for i in sorted(e for e in excluded if isinstance(e, int))
               if i < len(args)]
  fixed_kw = {k: v for k, v in kwargs.items() if k in excluded}
  free_args = [a for i, a in enumerate(args) if i not in excluded]
  free_kwargs = {k: v for k, v in kwargs.items() if k not in excluded}

  def with_fixed(*free, **kw):
    full = list(free)
    for i, a in fixed_pos:   # ascending order re-creates the original positions
      full.insert(i, a)
    return fun(*full, **kw, **fixed_kw)

  return with_fixed, free_args, free_kwargs


def _check_rank_promotion(args, in_core: list[CoreDims], signature) -> None:
  mode = config.read("jax_numpy_rank_promotion")
  if mode == "allow":
    return
  loop_ranks = {a.ndim - len(core) for a, core in zip(args, in_core) if a.ndim != 0}
  if len(loop_ranks) <= 1:
    return
  msg = (f"operands with shapes {[a.shape for a in args]} require rank promotion for "
         f"jnp.vectorize function with signature {signature}. Set the "
         "jax_numpy_rank_promotion config option to 'allow' to disable this message; for "
         "more information, see https://docs.jax.dev/en/latest/rank_promotion_warning.html.")
  if mode == "warn":
    warnings.warn(msg, stacklevel=4)
  else:
    raise ValueError(msg)


def vectorize(pyfunc: Callable, *, excluded=frozenset(), signature: str | None = None):
  """Define a vectorized function with broadcasting (``numpy.vectorize``).

  ``pyfunc`` is written for one example; the returned function maps it over
  every leading (loop) dimension of its arguments, broadcast against each
  other NumPy-style. Unlike ``numpy.vectorize`` this is not a Python loop: each
  loop dimension is one :func:`openjax.vmap`, so ``pyfunc`` must be traceable.

  Args:
    pyfunc: the function to vectorize.
    excluded: positions (ints) and keyword names (strs) of arguments passed to
      ``pyfunc`` unchanged, not vectorized. ``None`` arguments are always
      passed through unchanged. As in JAX, keyword arguments reach ``pyfunc``
      only when excluded (others are ignored): pass vectorized ones
      positionally.
    signature: an optional generalized-ufunc signature such as
      ``'(m,n),(n)->(m)'`` (matrix-vector product) or ``'(n)->(),()'`` (two
      outputs). Each input then keeps its trailing core dimensions when
      ``pyfunc`` sees it, and each output must have exactly the core
      dimensions named for it. Without one, ``pyfunc`` gets 0-d arrays and may
      return outputs of any shape.

  Returns:
    the vectorized function; usable as a decorator, plain
    (``@jnp.vectorize``) or with arguments
    (``@functools.partial(jnp.vectorize, signature='(n),(n)->()')``).

  Example::

    >>> dot = jnp.vectorize(jnp.dot, signature='(n),(n)->()')
    >>> dot(jnp.ones((4, 3)), jnp.ones(3)).shape
    (4,)
  """
  if any(not isinstance(e, (str, int)) for e in excluded):
    raise TypeError("jax.numpy.vectorize can only exclude integer or string arguments, "
                    f"but excluded={excluded!r}")
  if any(isinstance(e, int) and e < 0 for e in excluded):
    raise ValueError(f"excluded={excluded!r} contains negative numbers")

  params = ("vectorize", frozenset(excluded), signature)

  @functools.wraps(pyfunc)
  def vectorized(*args, **kwargs):
    return call_transformed(params, pyfunc, mapped_call, args, kwargs)

  def mapped_call(*args, **kwargs):
    context = (f"on vectorized function with excluded={excluded!r} and "
               f"signature={signature!r}")
    # Keyword arguments not named in ``excluded`` are dropped, as JAX does
    # (its vectorize only ever passes the excluded ones on).
    fun, args, _ = _bind_excluded(pyfunc, excluded, args, kwargs)
    if signature is None:
      in_core: list[CoreDims] = [()] * len(args)
      out_core: list[CoreDims] | None = None
    else:
      in_core, out_core = _parse_signature(signature)

    none_at = [i for i, a in enumerate(args) if a is None]
    if none_at:
      if any(i < len(in_core) and in_core[i] != () for i in none_at):
        raise ValueError(f"Cannot pass None at locations {set(none_at)} with "
                         f"signature={signature!r}")
      fun, args, _ = _bind_excluded(fun, none_at, args, {})
      in_core = [c for i, c in enumerate(in_core) if i not in none_at]

    args = [asarray(a) for a in args]
    if len(args) != len(in_core):
      raise TypeError(f"wrong number of positional arguments: expected {len(in_core)!r}, "
                      f"got {len(args)!r} {context}")
    sizes: dict[str, int] = {}
    loop_shapes = []
    for a, core in zip(args, in_core):
      _bind_core_sizes(sizes, tuple(a.shape), core, context, is_input=True)
      loop_shapes.append(tuple(a.shape[:a.ndim - len(core)]))
    loop_shape = lax.broadcast_shapes(*loop_shapes)
    if out_core is not None:
      fun = _with_output_check(fun, sizes, out_core, context)
    _check_rank_promotion(args, in_core, signature)

    # Right-align every argument's loop shape against ``loop_shape``; drop its
    # size-1 loop dimensions: those levels pass it unmapped.
    padded = [(1,) * (len(loop_shape) - len(s)) + s for s in loop_shapes]
    squeezed = []
    for a, s in zip(args, loop_shapes):
      ones = tuple(i for i, d in enumerate(s) if d == 1)
      squeezed.append(lax.squeeze(a, ones) if ones else a)
    # Wrap innermost (last loop dimension) first, so the outermost vmap maps
    # each argument's first remaining loop dimension.
    mapped = fun
    unit_dims = []
    for dim in reversed(range(len(loop_shape))):
      in_axes = tuple(None if p[dim] == 1 else 0 for p in padded)
      if all(ax is None for ax in in_axes):
        unit_dims.append(dim)   # every argument has size 1 here: re-inserted below
      else:
        mapped = vmap(mapped, in_axes)
    result = mapped(*squeezed)
    if not unit_dims:
      return result
    unit_dims = tuple(sorted(unit_dims))
    return tree_util.tree_map(lambda r: lax.expand_dims(r, unit_dims), result)

  return vectorized
