"""Op-table rows: ``with_sharding_constraint`` (the ``sharding_constraint``
primitive) over a one-device Auto mesh, where every column has a meaning
without several devices; tests/test_sharded_jit.py runs it on 2-20 devices."""
import numpy as np

import openjax as jax
from openjax.sharding import AxisType, NamedSharding, PartitionSpec as P
from tests.ops.harness import OpRow


def _constrained_double(x):
  mesh = jax.make_mesh((1,), ("x",), axis_types=(AxisType.Auto,))
  return jax.lax.with_sharding_constraint(x * 2, NamedSharding(mesh, P("x"))) + 1


ROWS = [
    OpRow("lax.with_sharding_constraint", _constrained_double,
          lambda rng: (rng.standard_normal((4, 3)).astype(np.float32),),
          lambda x: x * 2 + 1, grad=True),
]
