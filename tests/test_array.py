"""openjax.Array: immutability, conversions, repr, device API, transfers."""
import pickle

import numpy as np
import pytest

import openjax as jax
from openjax import lax


def _arr(x):
  return jax.device_put(np.asarray(x))


def test_repr_like_jax():
  assert repr(_arr(np.array([1.0, 2.0], np.float32))) == "Array([1., 2.], dtype=float32)"
  assert repr(_arr(np.array([1, 2], np.int32))) == "Array([1, 2], dtype=int32)"
  assert repr(jax.device_put(1.0)) == "Array(1., dtype=float32, weak_type=True)"
  assert repr(_arr(np.arange(4, dtype=np.float32).reshape(2, 2))) == \
      "Array([[0., 1.],\n       [2., 3.]], dtype=float32)"
  assert str(_arr(np.array([1.0, 2.0], np.float32))) == "[1. 2.]"
  assert f"{jax.device_put(np.float32(1.5)):.2f}" == "1.50"


def test_immutable():
  x = _arr(np.zeros(3, np.float32))
  with pytest.raises(TypeError, match=r"\.at\["):
    x[0] = 1.0
  view = np.asarray(x)
  assert not view.flags.writeable
  with pytest.raises(ValueError):
    view[0] = 1.0


def test_device_put_copies_numpy_input():
  host = np.zeros(3, np.float32)
  x = jax.device_put(host)
  host[0] = 5.0
  assert float(np.asarray(x)[0]) == 0.0
  y = lax.neg(host)   # eager ops on NumPy inputs never alias them either
  host[1] = 7.0
  assert float(np.asarray(y)[1]) == 0.0


def test_device_put_canonicalises_dtype():
  x = jax.device_put(np.ones(2, np.float64))
  assert x.dtype == np.float32
  with jax.enable_x64():
    assert jax.device_put(np.ones(2, np.float64)).dtype == np.float64


def test_properties_and_conversions():
  x = _arr(np.arange(6, dtype=np.int32).reshape(2, 3))
  assert x.shape == (2, 3) and x.ndim == 2 and x.size == 6 and x.dtype == np.int32
  assert x.itemsize == 4 and x.nbytes == 24
  assert x.tolist() == [[0, 1, 2], [3, 4, 5]]
  s = jax.device_put(np.int32(3))
  assert int(s) == 3 and float(s) == 3.0 and s.item() == 3 and [10, 20, 30, 40][s] == 40
  assert bool(jax.device_put(np.bool_(True)))
  assert len(x) == 2
  with pytest.raises(TypeError, match="unhashable"):
    hash(x)
  with pytest.raises(TypeError, match="len"):
    len(s)


def test_dlpack_roundtrip():
  x = _arr(np.arange(4, dtype=np.float32))
  y = np.from_dlpack(x)
  np.testing.assert_array_equal(y, [0, 1, 2, 3])
  assert x.__dlpack_device__() == (1, 0)


def test_device_api():
  x = _arr(np.ones(2, np.float32))
  d = jax.devices()[0]
  assert repr(d) == "CpuDevice(id=0)" and d.platform == "cpu"
  assert x.devices() == {d} and x.device == d
  assert x.sharding.device_set == {d}
  shards = x.addressable_shards
  assert len(shards) == 1 and shards[0].device == d
  assert jax.device_count() == 1 and jax.local_device_count() == 1
  assert jax.local_devices() == jax.devices()
  assert jax.default_backend() == "cpu"
  assert jax.process_index() == 0 and jax.process_count() == 1


def test_device_count_from_xla_flags():
  import subprocess
  import sys
  code = "import openjax as jax; print(len(jax.devices()), jax.devices()[-1])"
  env = {"XLA_FLAGS": "--xla_force_host_platform_device_count=4", "PATH": "/usr/bin:/bin"}
  out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                       check=True)
  assert out.stdout.split() == ["4", "cpu:3"]   # JAX 0.10.2: str(jax.devices()[3])


def test_block_until_ready_and_delete():
  x = _arr(np.ones(2, np.float32))
  assert x.block_until_ready() is x and x.is_ready()
  tree = {"a": x, "b": [1.0, None]}
  assert jax.block_until_ready(tree) is tree
  x.delete()
  assert x.is_deleted()
  with pytest.raises(RuntimeError, match="deleted"):
    np.asarray(x)


def test_device_get_returns_numpy():
  out = jax.device_get({"a": _arr(np.ones(2, np.float32)), "b": 3})
  assert isinstance(out["a"], np.ndarray) and out["b"] == 3


def test_pickle_roundtrip():
  x = jax.device_put(1.0)
  y = pickle.loads(pickle.dumps(x))
  assert isinstance(y, jax.Array) and y.weak_type and float(y) == 1.0


def test_tracers_are_instances_of_array():
  seen = []
  jax.make_jaxpr(lambda x: seen.append(isinstance(x, jax.Array)) or x)(1.0)
  assert seen == [True]
  assert isinstance(_arr(1.0), jax.Array)
  assert not isinstance(np.ones(2), jax.Array)
