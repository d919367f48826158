"""Op-table rows: ``jax.sharding.reshard`` (the ``reshard`` primitive on traced
values) over a one-device Explicit mesh, where every column has a meaning
without several devices; tests/test_sharding_rules_extra.py runs it on 8."""
import numpy as np

import openjax as jax
from openjax.sharding import NamedSharding, PartitionSpec as P
from tests.ops.harness import OpRow


def _resharded_double(x):
  mesh = jax.make_mesh((1,), ("x",))
  return jax.sharding.reshard(x * 2, NamedSharding(mesh, P("x"))) + 1


ROWS = [
    OpRow("sharding.reshard", _resharded_double,
          lambda rng: (rng.standard_normal((4, 3)).astype(np.float32),),
          lambda x: x * 2 + 1, grad=True),
]
