"""Why each case `eager_sweep.py` flags is over the line.

Every flagged case gets one cause: measured facts about openjax's eager
design, kept next to the sweep so that a case nobody has explained (a new
regression, a new row) stands out as ``unexplained`` in the report. The
cause texts summarise `eager_exceptions.md`, whose sections hold the
measurements behind them.

A case is assigned the first cause that applies:
1. ``floor``: JAX's program for the call is long enough that the eager floor
   alone (``eager_sweep.FLOOR_ENTRY_S`` + ``FLOOR_STEP_S`` an equation) is
   over the line (computed from the case's traced program);
2. ``constant-reference``: the NumPy reference takes constant time (returns a
   view, its input or a constant) where openjax computes an array;
3. the first entry of ``RULES`` whose row pattern (fnmatch) and sizes match.
"""
from __future__ import annotations

import fnmatch

#: cause -> (section of eager_exceptions.md, what limits the case)
CAUSES = {
    "floor": ("1", "JAX's program for the call has more equations than the eager floor "
                   "(measured by the run: entry + a step per primitive) fits under the line"),
    "constant-reference": ("5", "NumPy's reference returns a view, its input or a "
                                "constant; openjax computes the array as JAX does"),
    "front-end": ("1", "~10 elements: the jnp wrapper (argument checks, dtype promotion, "
                       "its plan) and one to a few binds against NumPy's one C call"),
    "index-front-end": ("1", "~10 elements: .at[] updates and gathers of index arrays "
                             "(index plan, scatter/gather kernel, bind) against one NumPy "
                             "fancy-index call"),
    "control-entry": ("2", "eager control flow and transformations: a cached program's "
                           "entry, the branch or body runner, one body run a trip"),
    "special-kernel": ("3", "special functions: series and continued fractions in the "
                            "operand's precision, Python floats per element at ~10"),
    "narrow-float": ("3", "float16/bfloat16: NumPy's scalar float16 loops, ml_dtypes' "
                          "bfloat16 loops, or JAX's round trips through float32"),
    "jax-formulation": ("4", "JAX's formulation of the function (its jaxpr) makes more "
                             "passes, or a costlier algorithm, than NumPy's kernel"),
    "linalg-driver": ("4", "a LAPACK driver or a JAX algorithm other than NumPy/SciPy's "
                           "(eigh, schur, iterative solvers, Parlett recurrences)"),
    "devices": ("5", "a call over several devices (pmap, shard_map, resharding) against "
                     "NumPy's one-array reference"),
}

#: (row pattern, sizes (None: every size), cause). Filled from a quiet run's
#: flagged cases; keep patterns narrow so a new row is not explained by accident.
_SMALL = ("10", "sample", "8x8", "vec8")

RULES: list[tuple[str, tuple[str, ...] | None, str]] = [
    # several devices (eager_exceptions.md section 5)
    *[(p, None, "devices") for p in ("lax.*_pmap*", "lax.*_shard_map*", "sharding.reshard",
                                       "lax.with_sharding_constraint", "jax.device_put_traced")],
    # eager control flow and transformations (section 2)
    *[(p, None, "control-entry") for p in (
        "cond_*", "switch_*", "while_loop_*", "scan_*", "fori_loop_*", "map_*",
        "checkpoint_*", "custom_jvp_*", "custom_vjp_*", "lax.custom_linear_solve*",
        "piecewise*", "apply_over_axes_*", "lax.reduce_lambda_*", "lax.reduce_monoid_add",
        "lax.reduce_variadic_argmax", "lax.reduce_int32_wrapping_mul", "lax.reduce_logaddexp",
        "lax.associative_scan_linear_recurrence", "lax.*_vmap*", "lax.psum_nested",
        "lax.stage*", "lax.dce_sink", "lax.optimization_barrier")],
    # narrow floats (section 3)
    *[(p, None, "narrow-float") for p in ("*float16*", "*bfloat16*", "*_f16*", "*_bf16*")],
    # special functions (section 3)
    *[(p, None, "special-kernel") for p in (
        "lax.bessel_*", "lax.betainc_*", "lax.igamma*", "lax.digamma_*", "lax.erf*",
        "lax.lgamma_*", "lax.polygamma*", "lax.zeta*", "scipy.special.*", "scipy.stats.*")],
    # linear algebra drivers and programs (section 4)
    *[(p, None, "linalg-driver") for p in ("jnp_linalg_*", "lax_linalg_*", "scipy_linalg_*")],
    # .at[] and gathers (section 1)
    *[(p, _SMALL + ("1e3",), "index-front-end") for p in (
        "at.*", "getitem.*", "jnp.choose*", "jnp.compress", "jnp.extract", "jnp.nonzero",
        "jnp.argwhere*", "jnp.diag_indices", "jnp.ravel_multi_index*", "lax.index_take",
        "jnp_put_along_axis", "jnp.select*", "jnp.take*")],
    # JAX's formulation (section 4)
    *[(p, None, "jax-formulation") for p in (
        "jnp.divmod_*", "jnp.floor_divide_*", "jnp.gcd_*", "jnp.lcm_*", "jnp.interp*",
        "jnp.hypot_*", "jnp.ldexp_*", "jnp.sinc_*", "jnp_set*", "jnp_union1d*",
        "jnp_intersect1d*", "jnp_isin*", "jnp.argpartition*", "jnp.partition*",
        "jnp.unique_*", "jnp.bincount*", "jnp.searchsorted_*", "jnp_packbits",
        "jnp_unpackbits", "jnp.linspace_*", "jnp_gradient", "jnp_poly*", "scipy_fft_*dct*",
        "scipy_ndimage_map_coordinates_*", "scipy_spatial_*", "scipy_cluster_*",
        "jnp.average_*", "lax.approx_m*_k*", "lax.select_and_scatter_*",
        "select_and_scatter_*", "lax.reduce_window_*", "jnp.convolve_*", "jsp.signal.*",
        "lax.rng_uniform_*", "lax.ragged_dot", "lax.scaled_dot_f32", "jnp.*_complex64",
        "jnp.pad_*", "jnp.insert*", "jnp.delete*", "jnp.block*", "jnp.lexsort*",
        "jnp.at.*", "at.divide", "at.power", "jnp.bitwise_count_*")],
    # the front end and a few binds at ~10 elements (section 1)
    *[(p, _SMALL, "front-end") for p in ("jnp.*", "lax.*", "method.*", "property.*",
                                          "Array.*", "nn.*", "jnp_*")],
]


def cause_of(result: dict, floor_bound: bool, constant_reference: bool) -> str | None:
  """The cause of a flagged case (``result`` as the sweep records it), or
  None when no measured cause explains it."""
  if floor_bound:
    return "floor"
  if constant_reference:
    return "constant-reference"
  for pattern, sizes, cause in RULES:
    if fnmatch.fnmatchcase(result["row"], pattern) and (sizes is None
                                                        or result["size"] in sizes):
      return cause
  return None
