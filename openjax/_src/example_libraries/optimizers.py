"""``jax.example_libraries.optimizers``: optimizers as ``(init, update, get_params)``
triples over pytrees of parameters, and learning-rate schedules.

Each optimizer is written for one array (``init(x0) -> state``, ``update(i, g,
state) -> state``, ``get_params(state) -> x``) and lifted to pytrees by the
``optimizer`` decorator, which keeps the states flat in an ``OptimizerState``.
"""
from __future__ import annotations

import functools
from collections import namedtuple
from collections.abc import Callable
from functools import partial
from typing import Any, NamedTuple

from openjax._src.nn import jnp
from openjax._src.example_libraries.util import safe_map, safe_zip, unzip2
from openjax._src.tree_util import (
    register_pytree_node, tree_flatten, tree_map, tree_unflatten)

map = safe_map  # noqa: A001 - the example libraries shadow map/zip with the safe versions
zip = safe_zip  # noqa: A001

# The state of a whole parameter tree: the per-leaf states flattened, the
# parameter treedef and one treedef per leaf state.
OptimizerState = namedtuple("OptimizerState", ["packed_state", "tree_def", "subtree_defs"])
register_pytree_node(
    OptimizerState,
    lambda state: ((state.packed_state,), (state.tree_def, state.subtree_defs)),
    lambda aux, children: OptimizerState(children[0], aux[0], aux[1]))

Array = Any
Params = Any
State = Any
Updates = Params
InitFn = Callable[[Params], OptimizerState]
Step = int
UpdateFn = Callable[[Step, Updates, OptimizerState], OptimizerState]
ParamsFn = Callable[[OptimizerState], Params]
Schedule = Callable[[Step], float]


class Optimizer(NamedTuple):
  init_fn: InitFn
  update_fn: UpdateFn
  params_fn: ParamsFn


def optimizer(opt_maker):
  """Lift an optimizer written for single arrays to pytrees of arrays."""

  @functools.wraps(opt_maker)
  def tree_opt_maker(*args, **kwargs):
    init, update, get_params = opt_maker(*args, **kwargs)

    @functools.wraps(init)
    def tree_init(x0_tree):
      x0_flat, tree = tree_flatten(x0_tree)
      states_flat, subtrees = unzip2(map(tree_flatten, [init(x0) for x0 in x0_flat]))
      return OptimizerState(states_flat, tree, subtrees)

    @functools.wraps(update)
    def tree_update(i, grad_tree, opt_state):
      states_flat, tree, subtrees = opt_state
      grad_flat, grad_tree_def = tree_flatten(grad_tree)
      if grad_tree_def != tree:
        raise TypeError(
            "optimizer update function was passed a gradient tree that did not match the "
            f"parameter tree structure with which it was initialized: parameter tree {tree} "
            f"and grad tree {grad_tree_def}.")
      states = map(tree_unflatten, subtrees, states_flat)
      new_states = map(partial(update, i), grad_flat, states)
      new_states_flat, new_subtrees = unzip2(map(tree_flatten, new_states))
      for subtree, new_subtree in zip(subtrees, new_subtrees):
        if new_subtree != subtree:
          raise TypeError(
              "optimizer update function produced an output structure that did not match "
              f"its input structure: input {subtree} and output {new_subtree}.")
      return OptimizerState(new_states_flat, tree, subtrees)

    @functools.wraps(get_params)
    def tree_get_params(opt_state):
      states_flat, tree, subtrees = opt_state
      states = map(tree_unflatten, subtrees, states_flat)
      return tree_unflatten(tree, map(get_params, states))

    return Optimizer(tree_init, tree_update, tree_get_params)

  return tree_opt_maker


def _identity(x):
  return x


def _first(state):
  return state[0]


@optimizer
def sgd(step_size):
  """Stochastic gradient descent: ``x - step_size(i) * g``."""
  step_size = make_schedule(step_size)

  def update(i, g, x):
    return x - step_size(i) * g

  return _identity, update, _identity


@optimizer
def momentum(step_size: Schedule, mass: float):
  """Gradient descent with momentum: ``v = mass * v + g; x -= step_size(i) * v``."""
  step_size = make_schedule(step_size)

  def init(x0):
    return x0, jnp.zeros_like(x0)

  def update(i, g, state):
    x, velocity = state
    velocity = mass * velocity + g
    return x - step_size(i) * velocity, velocity

  return init, update, _first


@optimizer
def nesterov(step_size: Schedule, mass: float):
  """Nesterov's accelerated gradient: steps along ``mass * v + g``."""
  step_size = make_schedule(step_size)

  def init(x0):
    return x0, jnp.zeros_like(x0)

  def update(i, g, state):
    x, velocity = state
    velocity = mass * velocity + g
    return x - step_size(i) * (mass * velocity + g), velocity

  return init, update, _first


@optimizer
def adagrad(step_size, momentum=0.9):
  """Adagrad (Duchi et al. 2011) with momentum on the scaled gradient."""
  step_size = make_schedule(step_size)

  def init(x0):
    return x0, jnp.zeros_like(x0), jnp.zeros_like(x0)

  def update(i, g, state):
    x, g_sq, m = state
    g_sq = g_sq + jnp.square(g)
    g_sq_inv_sqrt = jnp.where(g_sq > 0, 1. / jnp.sqrt(g_sq), 0.0)
    m = (1. - momentum) * (g * g_sq_inv_sqrt) + momentum * m
    return x - step_size(i) * m, g_sq, m

  return init, update, _first


@optimizer
def rmsprop(step_size, gamma=0.9, eps=1e-8):
  """RMSProp: divides by a running root mean square of the gradients."""
  step_size = make_schedule(step_size)

  def init(x0):
    return x0, jnp.zeros_like(x0)

  def update(i, g, state):
    x, avg_sq_grad = state
    avg_sq_grad = avg_sq_grad * gamma + jnp.square(g) * (1. - gamma)
    return x - step_size(i) * g / jnp.sqrt(avg_sq_grad + eps), avg_sq_grad

  return init, update, _first


@optimizer
def rmsprop_momentum(step_size, gamma=0.9, eps=1e-8, momentum=0.9):
  """RMSProp with momentum on the scaled step."""
  step_size = make_schedule(step_size)

  def init(x0):
    return x0, jnp.zeros_like(x0), jnp.zeros_like(x0)

  def update(i, g, state):
    x, avg_sq_grad, mom = state
    avg_sq_grad = avg_sq_grad * gamma + jnp.square(g) * (1. - gamma)
    mom = momentum * mom + step_size(i) * g / jnp.sqrt(avg_sq_grad + eps)
    return x - mom, avg_sq_grad, mom

  return init, update, _first


@optimizer
def adam(step_size, b1=0.9, b2=0.999, eps=1e-8):
  """Adam (Kingma and Ba 2014), with bias-corrected moment estimates."""
  step_size = make_schedule(step_size)

  def init(x0):
    return x0, jnp.zeros_like(x0), jnp.zeros_like(x0)

  def update(i, g, state):
    x, m, v = state
    m = (1 - b1) * g + b1 * m
    v = (1 - b2) * jnp.square(g) + b2 * v
    m_hat = m / (1 - jnp.asarray(b1, m.dtype) ** (i + 1))
    v_hat = v / (1 - jnp.asarray(b2, m.dtype) ** (i + 1))
    return x - step_size(i) * m_hat / (jnp.sqrt(v_hat) + eps), m, v

  return init, update, _first


@optimizer
def adamax(step_size, b1=0.9, b2=0.999, eps=1e-8):
  """AdaMax: Adam with the infinity norm of past gradients."""
  step_size = make_schedule(step_size)

  def init(x0):
    return x0, jnp.zeros_like(x0), jnp.zeros_like(x0)

  def update(i, g, state):
    x, m, u = state
    m = (1 - b1) * g + b1 * m
    u = jnp.maximum(b2 * u, jnp.abs(g))
    x = x - (step_size(i) / (1 - jnp.asarray(b1, m.dtype) ** (i + 1))) * m / (u + eps)
    return x, m, u

  return init, update, _first


@optimizer
def sm3(step_size, momentum=0.9):
  """SM3 (Anil et al. 2019): one accumulator per axis instead of per entry."""
  step_size = make_schedule(step_size)

  def without_axis(axis, ndim):
    return tuple(a for a in range(ndim) if a != axis)

  def along_axis(ndim, v, axis):
    # v[None, ..., :, ..., None] with v's entries along `axis`.
    return v.reshape(tuple(-1 if a == axis else 1 for a in range(ndim)))

  def init(x0):
    x_shape = x0.shape
    x0 = jnp.atleast_1d(x0)
    accumulators = [jnp.zeros(size, dtype=x0.dtype) for size in x0.shape]
    return x0, jnp.zeros_like(x0), accumulators, x_shape

  def update(i, g, state):
    x, m, accumulators, x_shape = state
    broadcast = [along_axis(g.ndim, v, axis) for axis, v in enumerate(accumulators)]
    accum = functools.reduce(jnp.minimum, broadcast) + jnp.square(g)
    accum_inv_sqrt = jnp.where(accum > 0, 1. / jnp.sqrt(accum), 0)
    m = (1. - momentum) * (g * accum_inv_sqrt) + momentum * m
    x = x - step_size(i) * m
    accumulators = [accum.max(without_axis(axis, x.ndim)) for axis in range(x.ndim)]
    return x, m, accumulators, x_shape

  def get_params(state):
    x, _, _, x_shape = state
    return x.reshape(x_shape)

  return init, update, get_params


# Learning-rate schedules: functions of the step index.

def constant(step_size) -> Schedule:
  def schedule(i):
    return step_size
  return schedule


def exponential_decay(step_size, decay_steps, decay_rate):
  def schedule(i):
    return step_size * decay_rate ** (i / decay_steps)
  return schedule


def inverse_time_decay(step_size, decay_steps, decay_rate, staircase=False):
  if staircase:
    def schedule(i):
      return step_size / (1 + decay_rate * jnp.floor(i / decay_steps))
  else:
    def schedule(i):
      return step_size / (1 + decay_rate * i / decay_steps)
  return schedule


def polynomial_decay(step_size, decay_steps, final_step_size, power=1.0):
  def schedule(step_num):
    step_num = jnp.minimum(step_num, decay_steps)
    step_mult = (1 - step_num / decay_steps) ** power
    return step_mult * (step_size - final_step_size) + final_step_size
  return schedule


def piecewise_constant(boundaries: Any, values: Any):
  boundaries = jnp.array(boundaries)
  values = jnp.array(values)
  if not boundaries.ndim == values.ndim == 1:
    raise ValueError(
        f"piecewise_constant: boundaries and values must be sequences, got arrays of "
        f"ndim {boundaries.ndim} and {values.ndim}")
  if not boundaries.shape[0] == values.shape[0] - 1:
    raise ValueError(
        f"piecewise_constant: boundaries length must be one shorter than values length, "
        f"got {boundaries.shape[0]} boundaries and {values.shape[0]} values")

  def schedule(i):
    return values[jnp.sum(i > boundaries)]
  return schedule


def make_schedule(scalar_or_schedule: float | Schedule) -> Schedule:
  if callable(scalar_or_schedule):
    return scalar_or_schedule
  if jnp.ndim(scalar_or_schedule) == 0:
    return constant(scalar_or_schedule)
  raise TypeError(
      f"make_schedule: expected a scalar step size or a schedule (a function of the step), "
      f"got {type(scalar_or_schedule)}")


# Utilities.

def l2_norm(tree):
  """The l2 norm of all a pytree's leaves together, as one vector."""
  leaves, _ = tree_flatten(tree)
  return jnp.sqrt(sum(jnp.vdot(x, x) for x in leaves))


def clip_grads(grad_tree, max_norm):
  """Scale a gradient tree down so that its ``l2_norm`` is at most ``max_norm``."""
  norm = l2_norm(grad_tree)
  return tree_map(lambda g: jnp.where(norm < max_norm, g, g * (max_norm / norm)), grad_tree)


# Serialisation: an OptimizerState as a pytree of JoinPoints and back.

class JoinPoint:
  """Marks where a parameter leaf's own state subtree starts."""

  def __init__(self, subtree):
    self.subtree = subtree

  # Pytrees of arrays look iterable; so does a JoinPoint.
  def __iter__(self):
    yield self.subtree


def unpack_optimizer_state(opt_state):
  """An OptimizerState as a pytree of JoinPoints holding each leaf's state."""
  states_flat, tree_def, subtree_defs = opt_state
  subtrees = map(tree_unflatten, subtree_defs, states_flat)
  return tree_unflatten(tree_def, [JoinPoint(subtree) for subtree in subtrees])


def pack_optimizer_state(marked_pytree):
  """The inverse of ``unpack_optimizer_state``."""
  sentinels, tree_def = tree_flatten(marked_pytree)
  if not all(isinstance(s, JoinPoint) for s in sentinels):
    raise TypeError("pack_optimizer_state: expected a pytree whose leaves are JoinPoints "
                    "(as unpack_optimizer_state returns)")
  states_flat, subtree_defs = unzip2(map(tree_flatten, [s.subtree for s in sentinels]))
  return OptimizerState(states_flat, tree_def, subtree_defs)
