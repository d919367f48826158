"""lax.rng_bit_generator with RNG_THREE_FRY over shapes, dtypes and keys whose
counter carries; under JAX 0.10.2 it wrote tests/data/rng_bit_generator.txt."""
import jax, jax.numpy as jnp, numpy as np
from jax import lax
A = lax.RandomAlgorithm.RNG_THREE_FRY
for key in ([1, 2, 3, 4], [7, 0, 0xFFFFFFFF, 5], [0xDEADBEEF, 12345, 0xFFFFFFFE, 0xFFFFFFFF]):
  k = jnp.array(key, jnp.uint32)
  for shape, dt in [((3,4), jnp.uint32), ((4,3), jnp.uint32), ((2,4,3), jnp.uint32), ((3,3,2), jnp.uint8), ((3,2,4), jnp.uint16), ((5,3), jnp.uint32), ((), jnp.uint32), ((3,5,2), jnp.uint32), ((5,7), jnp.uint8), ((1,), jnp.uint16), ((0, 3), jnp.uint32)]:
    nk, b = lax.rng_bit_generator(k, shape, dt, algorithm=A)
    print(shape, np.asarray(nk).tolist(), np.asarray(b).tolist(), b.dtype)
  print(jax.jit(lambda k: lax.rng_bit_generator(k, (3, 2), jnp.uint32, algorithm=A))(k)[1].tolist())
