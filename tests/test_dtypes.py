"""JAX's dtype rules: the promotion lattice with weak types (checked against a
table produced by JAX 0.10.2, tools/gen_dtype_fixtures.py), x64 handling and
the dtype queries."""
import json
import os
import pathlib
import subprocess
import sys

import ml_dtypes
import numpy as np
import pytest

import openjax as jax
from openjax._src import dtypes
from openjax._src.core import ShapedArray

TABLE = json.loads((pathlib.Path(__file__).parent / "data" / "promotion_table.json").read_text())
WEAK = {"weak_int": 1, "weak_float": 1.0, "weak_complex": 1j}


class _Strong:
  """An operand with a given dtype that is not weak (like a jnp array)."""
  def __init__(self, name):
    self.aval = ShapedArray((), dtypes.canonicalize_dtype(np.dtype(name if name != "bfloat16" else ml_dtypes.bfloat16)))


def _value(name):
  return WEAK[name] if name in WEAK else _Strong(name)


@pytest.mark.parametrize("mode", ["x32", "x64"])
def test_promotion_table_matches_jax(mode):
  mismatches = []
  with jax.enable_x64(mode == "x64"):
    for key, expected in TABLE[mode].items():
      a, b = key.split(",")
      got = dtypes.result_type(_value(a), _value(b), return_weak_type_flag=True)
      if [got[0].name, bool(got[1])] != expected:
        mismatches.append((key, expected, (got[0].name, got[1])))
  assert not mismatches, mismatches[:10]


def test_weak_type_examples_from_design():
  assert dtypes.result_type(_Strong("int32"), 1.0) == np.float32
  with jax.enable_x64():
    assert dtypes.result_type(_Strong("int64"), _Strong("float16")) == np.float16
  assert dtypes.result_type(_Strong("bfloat16"), 2) == dtypes.bfloat16


def test_default_dtypes_follow_x64():
  assert dtypes.dtype(1.0) == np.float32 and dtypes.dtype(1) == np.int32
  with jax.enable_x64():
    assert dtypes.dtype(1.0) == np.float64 and dtypes.dtype(1) == np.int64
    assert jax.config.jax_enable_x64
  assert not jax.config.jax_enable_x64


def test_explicit_float64_truncates_with_warning():
  with pytest.warns(UserWarning, match="Explicitly requested dtype float64.*truncated to dtype float32"):
    assert dtypes.explicit_dtype(np.float64, "zeros") == np.float32
  with jax.enable_x64():
    assert dtypes.explicit_dtype(np.float64) == np.float64


def test_config_update_and_env_var():
  jax.config.update("jax_enable_x64", True)
  try:
    assert dtypes.default_float_dtype() == np.float64
  finally:
    jax.config.update("jax_enable_x64", False)
  code = "import openjax as jax; print(jax.config.jax_enable_x64)"
  out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       env={**os.environ, "JAX_ENABLE_X64": "1"}, check=True)
  assert out.stdout.strip() == "True"


def test_unknown_config_option():
  with pytest.raises(AttributeError, match="Unrecognized config option"):
    jax.config.update("jax_no_such_flag", 1)


def test_promote_types_and_can_cast():
  assert dtypes.promote_types(np.int8, np.uint8) == np.int16
  assert dtypes.promote_types(np.float16, dtypes.bfloat16) == np.float32
  assert dtypes.promote_types(np.int32, float) == np.float64  # Python type is weak
  assert dtypes.can_cast(np.int8, np.int32)
  assert not dtypes.can_cast(np.float32, np.int32)
  assert dtypes.can_cast(np.float32, np.int32, casting="unsafe")


def test_issubdtype_knows_ml_dtypes():
  assert dtypes.issubdtype(dtypes.bfloat16, np.floating)
  assert dtypes.issubdtype(dtypes.float8_e4m3fn, np.inexact)
  assert not dtypes.issubdtype(dtypes.bfloat16, np.integer)
  assert dtypes.issubdtype(dtypes.int4, np.signedinteger)
  assert dtypes.issubdtype(np.int32, np.integer)


def test_finfo_iinfo():
  assert float(dtypes.finfo(dtypes.bfloat16).eps) == 2.0 ** -7
  assert dtypes.finfo(np.float32).bits == 32
  assert dtypes.iinfo(np.int8).max == 127
  assert dtypes.iinfo(dtypes.int4).min == -8


def test_incompatible_types_raise():
  with pytest.raises(TypeError, match="not a valid JAX array type"):
    dtypes.dtype(np.array(["a"]))


def test_short_names():
  assert dtypes.short_dtype_name(np.dtype(np.float32)) == "f32"
  assert dtypes.short_dtype_name(np.dtype(np.uint16)) == "u16"
  assert dtypes.short_dtype_name(dtypes.float8_e4m3fn) == "f8_e4m3fn"
  assert dtypes.short_dtype_name(dtypes.float0) == "float0"
