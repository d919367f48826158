"""openjax: JAX, written again from scratch in Python.

``import openjax as jax`` and ``import openjax.numpy as jnp`` run JAX programs
unchanged: NumPy-compatible immutable arrays, composable transformations
(``jit``, ``grad``, ``vmap``, ...) and a compiler for the CPU.
"""
import openjax._src.blas_threads  # noqa: F401  (before NumPy loads: see the module)
from openjax._src.config import config  # noqa: F401
from openjax._src.config import enable_x64, disable_jit, debug_nans  # noqa: F401
from openjax._src.config import (  # noqa: F401
    auto_pcast, check_tracer_leaks, checking_leaks, debug_infs, default_device, default_matmul_precision,
    default_prng_impl, enable_checks, explain_cache_misses, log_compiles, numpy_dtype_promotion,
    numpy_rank_promotion, softmax_custom_jvp, threefry_partitionable, transfer_guard,
    transfer_guard_device_to_device, transfer_guard_device_to_host,
    transfer_guard_host_to_device)
from openjax._src.config import (  # noqa: F401
    allow_f16_reductions, array_garbage_collection_guard, debug_key_reuse, enable_custom_prng,
    jax2tf_associative_scan_reductions, legacy_prng_key, make_user_context, no_execution,
    no_tracing, remove_size_one_mesh_axis_from_type, thread_guard)
from openjax._src.core import Array  # noqa: F401
from openjax._src.core.devices import (  # noqa: F401
    Device, default_backend, device_count, devices, local_device_count, local_devices,
    process_count, process_index)
from openjax._src.runtime.transfer import (  # noqa: F401
    block_until_ready, device_get, device_put)
from openjax._src.runtime.sharded_arrays import (  # noqa: F401
    make_array_from_callback, make_array_from_process_local_data,
    make_array_from_single_device_arrays)
from openjax._src.core.sharding import NamedSharding, P, Shard  # noqa: F401
from openjax._src.sharding.api import make_mesh, reshard, set_mesh  # noqa: F401
from openjax._src.api.jit import clear_caches, jit  # noqa: F401
from openjax._src.api.staged import eval_shape, make_jaxpr  # noqa: F401
from openjax._src.api.shapes import ShapeDtypeStruct  # noqa: F401
from openjax._src.api.autodiff import (  # noqa: F401
    grad, hessian, jacfwd, jacobian, jacrev, jvp, linear_transpose, linearize, value_and_grad,
    vjp)
from openjax._src.api.vmap import vmap  # noqa: F401
from openjax._src.api.pmap import pmap  # noqa: F401
from openjax._src.api.shard_map import shard_map, smap  # noqa: F401
from openjax._src.api.misc import (  # noqa: F401
    copy_to_host_async, ensure_compile_time_eval, host_count, host_id, host_ids, live_arrays,
    named_call, named_scope, print_environment_info, process_indices, typeof)
from openjax._src.dtypes import float0  # noqa: F401
from openjax._src.api.custom_derivatives import (  # noqa: F401
    closure_convert, custom_gradient, custom_jvp, custom_vjp)
from openjax._src.api.checkpoint import checkpoint, checkpoint_policies, remat  # noqa: F401
from openjax import numpy, lax, tree_util, tree, errors, dtypes, test_util  # noqa: F401
from openjax import ad_checkpoint, custom_derivatives  # noqa: F401
from openjax import random, scipy, nn  # noqa: F401
from openjax import dlpack, stages, typing  # noqa: F401
from openjax import debug, experimental, sharding  # noqa: F401
from openjax._src.control.callbacks import effects_barrier, pure_callback  # noqa: F401
from openjax._src.alias import alias_jax  # noqa: F401
from openjax._src.api.fwd_and_bwd import fwd_and_bwd  # noqa: F401
from openjax._src.state.types import Ref, empty_ref, free_ref, freeze, new_ref  # noqa: F401
from openjax._src.numpy.indexer import dslice as ds  # noqa: F401
from openjax import ad, memory, ref  # noqa: F401
from openjax import api_util, core, flatten_util, image  # noqa: F401
# Old top-level pytree aliases (jax.tree_map, ...) still work, and warn.
from openjax._src.tree_util import deprecated_top_level_alias as __getattr__  # noqa: F401

__version__ = "0.1.0"
