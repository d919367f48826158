# Seed 000's sharding part, as written (mesh 20x1, vmap over rows, jit),
# with its uneven-shape error and its padding solution.
import os
os.environ["XLA_FLAGS"] = '--xla_force_host_platform_device_count=20'
import sys
if sys.argv[1:] == ["jax"]:
  import jax
  import jax.numpy as jnp
  from jax.sharding import NamedSharding, PartitionSpec as P
else:
  import openjax as jax
  import openjax.numpy as jnp
  from openjax.sharding import NamedSharding, PartitionSpec as P
import numpy as np

def func(v):   # expects a vector of 5 elements
  return jnp.cos(v) * jnp.sum(v)

print(jax.devices())
mesh = jax.make_mesh((20, 1), ('x', 'y'))
arr = np.arange(30 * 5, dtype=np.float32).reshape(30, 5) / 100
try:
  jax.device_put(arr, NamedSharding(mesh, P('x', 'y')))
except ValueError as e:
  print("ValueError:", str(e).split(" To shard it")[0])
pad = (-arr.shape[0]) % 20
padded = jax.device_put(jnp.pad(arr, ((0, pad), (0, 0))), NamedSharding(mesh, P('x', 'y')))
print(jax.typeof(padded))
func_vmap = jax.jit(jax.vmap(func, in_axes=0))
out = np.asarray(func_vmap(padded))[:arr.shape[0]]   # drop the padding rows
print(out.shape, np.allclose(out, np.cos(arr) * arr.sum(1, keepdims=True), atol=1e-5))
jax.debug.visualize_array_sharding(padded)
