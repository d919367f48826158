"""``openjax.example_libraries.optimizers`` (``jax.example_libraries.optimizers``)."""
from __future__ import annotations

from openjax._src.example_libraries.optimizers import (  # noqa: F401
    Any, Array, Callable, InitFn, JoinPoint, NamedTuple, Optimizer, OptimizerState, Params,
    ParamsFn, Schedule, State, Step, UpdateFn, Updates, adagrad, adam, adamax, clip_grads,
    constant, exponential_decay, inverse_time_decay, l2_norm, make_schedule, map, momentum,
    namedtuple, nesterov, optimizer, pack_optimizer_state, partial, piecewise_constant,
    polynomial_decay, rmsprop, rmsprop_momentum, safe_map, safe_zip, sgd, sm3,
    unpack_optimizer_state, unzip2, zip)
