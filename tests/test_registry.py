"""Every primitive has the rules its kind requires, and the op table
exercises every primitive."""
import pytest

import openjax  # noqa: F401 - registers every primitive
from openjax._src.core import registry
from tests.ops.harness import all_rows, primitives_used

# Slots required of every primitive (a slot may be marked not applicable with
# a reason, e.g. collectives that vmap rewrites before lowering).
REQUIRED_FOR_ALL = ("impl", "abstract_eval", "batch", "lower", "sharding_rule")
REQUIRED_BY_KIND = {"differentiable": ("jvp",), "linear": ("jvp", "transpose"),
                    "nondifferentiable": ()}

# Primitives covered by dedicated tests rather than op-table rows.
COVERED_ELSEWHERE = {
    "jit": "tests/test_jit.py",
    # custom_vjp's forward-mode marker: any program containing it raises by design.
    "custom_lin": "tests/test_custom_derivatives.py",
    # Under vmap these become ordinary array ops (as in JAX), so no op-table
    # row can show them in a jaxpr; tests/test_collectives.py covers them.
    "all_gather": "tests/test_collectives.py", "all_to_all": "tests/test_collectives.py",
    "axis_index": "tests/test_collectives.py", "pbroadcast": "tests/test_collectives.py",
    "ppermute": "tests/test_collectives.py", "reduce_scatter": "tests/test_collectives.py",
    # Point-to-point sends work only as a psend/precv pair over a bound axis
    # (a row holds one primitive); tests/test_psend.py runs them everywhere.
    "psend": "tests/test_psend.py", "precv": "tests/test_psend.py",
    # Host callbacks call Python functions with side effects or declared
    # result types that the op table's generic rows cannot give.
    "debug_callback": "tests/test_callbacks.py", "debug_print": "tests/test_callbacks.py",
    "io_callback": "tests/test_callbacks.py", "pure_callback": "tests/test_callbacks.py",
    # A runtime assertion: meaningful only with checkify (or eagerly).
    "check": "tests/test_checkify.py",
}


@pytest.mark.parametrize("name", sorted(registry), ids=str)
def test_primitive_has_required_rules(name):
  prim = registry[name]
  for slot in REQUIRED_FOR_ALL + REQUIRED_BY_KIND[prim.kind]:
    assert getattr(prim, slot) is not None or slot in prim.not_applicable, \
        f"primitive {name!r} ({prim.kind}) lacks its {slot} rule"


def test_every_primitive_is_in_the_op_table():
  import numpy as np
  used = set()
  for row in all_rows():
    if row.jit:  # rows marked jit=False are not traceable (concrete-only functions)
      used |= primitives_used(row.fn, row.args(np.random.default_rng(0)))
  missing = sorted(set(registry) - used - set(COVERED_ELSEWHERE))
  assert not missing, f"primitives without an op-table row: {missing}"
