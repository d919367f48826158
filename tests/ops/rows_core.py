"""Op-table rows for the core primitives used by transformations."""
import numpy as np

from openjax._src.primitives.base.structural import add_any_p
from tests.ops.harness import OpRow


def _two(shape, dtype):
  return lambda rng: (rng.standard_normal(shape).astype(dtype),
                      rng.standard_normal(shape).astype(dtype))


ROWS = [
    OpRow("add_any_f32", lambda x, y: add_any_p.bind1(x, y), _two((3, 4), np.float32),
          ref=np.add, grad=True),
    OpRow("add_any_scalar_f16", lambda x, y: add_any_p.bind1(x, y), _two((), np.float16),
          ref=np.add),
]
