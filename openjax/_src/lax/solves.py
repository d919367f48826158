"""``lax.custom_root`` and ``lax.custom_linear_solve``: solvers whose
derivatives come from the equation they solve, not from their iterations.

``custom_root`` differentiates through the implicit function theorem with a
``custom_jvp``: at a root ``x*`` of ``f(x, theta)``, ``x*_dot =
-(df/dx)^-1 (df/dtheta theta_dot)``, with ``tangent_solve`` inverting the
linearised ``f``. ``custom_linear_solve`` binds ``linear_solve_p`` (in
``control``), whose JVP and transpose solve again with ``solve`` and
``transpose_solve``.
"""
from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from openjax._src import tree_util
from openjax._src.api.autodiff import jvp, linear_transpose, linearize
from openjax._src.api.custom_derivatives import closure_convert, custom_jvp
from openjax._src.api.shapes import abstractify
from openjax._src.api.transform_cache import call_transformed
from openjax._src.control.custom_derivatives import convert_constvars
from openjax._src.control.linear_solve import LinearSolveTuple, linear_solve
from openjax._src.core import ClosedJaxpr, get_aval
from openjax._src.interpreters.staging import trace_to_jaxpr
from openjax._src.primitives.base.ad_util import tangent_aval
from openjax._src.primitives.base.structural import zeros_like_aval
from openjax._src.primitives.elementwise.arithmetic import neg

__all__ = ["custom_linear_solve", "custom_root"]


def _check_tree(fn: str, arg: str, actual, expected, has_aux: bool) -> None:
  if has_aux:
    children = actual.children() if actual.num_leaves else []
    if len(children) != 2:
      raise TypeError(f"{fn}() with has_aux=True must return a pair (output, aux), got "
                      f"tree structure {actual}")
    actual = children[0]
  if actual != expected:
    raise TypeError(f"{fn}() output pytree structure must match {arg}, got {actual} and "
                    f"{expected}")


def _trace_vector_fn(name: str, fn: Callable, avals, in_tree, has_aux: bool = False):
  """Trace ``fn`` (vector tree -> vector tree [, aux]) on ``avals``: a ClosedJaxpr
  taking its closed-over values then the vector leaves, and those values."""
  box = []

  def flat(*leaves):
    out = fn(tree_util.tree_unflatten(in_tree, leaves))
    out_leaves, out_tree = tree_util.tree_flatten(out)
    box.append(out_tree)
    return out_leaves

  jaxpr, consts = trace_to_jaxpr(flat, list(avals))
  _check_tree(name, "b", box[0], in_tree, has_aux)
  open_jaxpr, const_values = convert_constvars(ClosedJaxpr(jaxpr, consts))
  aux_tree = box[0].children()[1] if has_aux else None
  return ClosedJaxpr(open_jaxpr, []), const_values, aux_tree


def custom_linear_solve(matvec: Callable, b: Any, solve: Callable[[Callable, Any], Any],
                        transpose_solve: Callable[[Callable, Any], Any] | None = None,
                        symmetric: bool = False, has_aux: bool = False):
  """Solve ``matvec(x) = b`` with ``solve(matvec, b)``, differentiating through
  the linear system: forward mode solves again with ``solve``, reverse mode
  with ``transpose_solve(vecmat, b)`` (``solve`` itself when ``symmetric``).

  ``matvec`` must be linear in ``x``; it may close over arrays, which are
  differentiated too. With ``has_aux``, ``solve`` returns ``(x, aux)`` and the
  result is ``(x, aux)``.
  """
  if transpose_solve is None and symmetric:
    transpose_solve = solve
  # Eager calls with effect-free functions run as a cached program: tracing
  # the four functions again costs ~400 us a call.
  return call_transformed(
      ("custom_linear_solve", symmetric, has_aux), (matvec, solve, transpose_solve),
      functools.partial(_custom_linear_solve, matvec, solve=solve,
                        transpose_solve=transpose_solve, symmetric=symmetric, has_aux=has_aux),
      (b,), {})


def _custom_linear_solve(matvec: Callable, b: Any, solve: Callable,
                         transpose_solve: Callable | None, symmetric: bool, has_aux: bool):
  b_leaves, b_tree = tree_util.tree_flatten(b)
  b_avals = [abstractify(leaf) for leaf in b_leaves]

  matvec_jaxpr, matvec_consts, _ = _trace_vector_fn("matvec", matvec, b_avals, b_tree)
  solve_jaxpr, solve_consts, aux_tree = _trace_vector_fn(
      "solve", lambda x: solve(matvec, x), b_avals, b_tree, has_aux)
  if transpose_solve is None:
    vecmat_jaxpr = tr_solve_jaxpr = None
    vecmat_consts = tr_solve_consts = []
  else:
    if symmetric:
      vecmat = matvec
    else:
      matvec_transpose = linear_transpose(matvec, b)

      def vecmat(y):
        return matvec_transpose(y)[0]
    vecmat_jaxpr, vecmat_consts, _ = _trace_vector_fn("vecmat", vecmat, b_avals, b_tree)
    tr_solve_jaxpr, tr_solve_consts, _ = _trace_vector_fn(
        "transpose_solve", lambda y: transpose_solve(vecmat, y), b_avals, b_tree, has_aux)
  outs = linear_solve(
      LinearSolveTuple(matvec_consts, vecmat_consts, solve_consts, tr_solve_consts), b_leaves,
      jaxprs=LinearSolveTuple(matvec_jaxpr, vecmat_jaxpr, solve_jaxpr, tr_solve_jaxpr))
  x = tree_util.tree_unflatten(b_tree, outs[:len(b_leaves)])
  if has_aux:
    return x, tree_util.tree_unflatten(aux_tree, outs[len(b_leaves):])
  return x


def custom_root(f: Callable, initial_guess: Any, solve: Callable[[Callable, Any], Any],
                tangent_solve: Callable[[Callable, Any], Any], has_aux: bool = False):
  """``solve(f, initial_guess)`` (a root of ``f``), differentiated w.r.t. the
  values ``f`` closes over by the implicit function theorem.

  ``tangent_solve(g, y)`` must solve ``g(x) = y`` for the linear ``g`` (``f``
  linearised at the root), e.g. ``lambda g, y: y / g(1.0)`` for scalars. With
  ``has_aux``, ``solve`` returns ``(root, aux)`` and so does ``custom_root``.
  """
  # Eager calls with effect-free functions run as a cached program: the
  # user's solve (a Newton loop) would otherwise run op by op.
  return call_transformed(("custom_root", has_aux), (f, solve, tangent_solve),
                          functools.partial(_custom_root, f, solve=solve,
                                            tangent_solve=tangent_solve, has_aux=has_aux),
                          (initial_guess,), {})


def _custom_root(f: Callable, initial_guess: Any, solve: Callable, tangent_solve: Callable,
                 has_aux: bool):
  f_converted, f_consts = closure_convert(f, initial_guess)
  guess_tree = tree_util.tree_structure(initial_guess)

  def f_of(consts):
    return lambda x: f_converted(x, *consts)

  @custom_jvp
  def root(consts, guess):
    out = solve(f_of(consts), guess)
    _check_tree("solve", "initial_guess", tree_util.tree_structure(out), guess_tree, has_aux)
    return out

  @root.defjvp
  def root_jvp(primals, tangents):
    consts, guess = primals
    consts_dot, _ = tangents
    out = root(consts, guess)
    solution = out[0] if has_aux else out
    _, rhs = jvp(lambda *c: f_converted(solution, *c), tuple(consts), tuple(consts_dot))
    _, f_linear = linearize(f_of(consts), solution)
    solution_dot = tree_util.tree_map(neg, tangent_solve(f_linear, rhs))
    if has_aux:
      aux_dot = tree_util.tree_map(lambda a: zeros_like_aval(tangent_aval(get_aval(a))), out[1])
      return out, (solution_dot, aux_dot)
    return out, solution_dot

  return root(list(f_consts), initial_guess)
