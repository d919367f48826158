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
3. the first entry of ``RULES`` whose row pattern (fnmatch) and sizes match;
   a case whose time does not grow with its size (``fixed_cost``: at most
   ``FIXED_COST_FACTOR`` x its row's time at the smallest size, plus
   ``FIXED_COST_SLACK_S``) also matches the front-end rules at any size:
   what it pays is the same per-call cost as at ~10 elements.
"""
from __future__ import annotations

import fnmatch

#: cause -> (section of eager_exceptions.md, what limits the case)
CAUSES = {
    "floor": ("1", "JAX's program for the call has more equations than the eager floor "
                   "(measured by the run: entry + a step per primitive) fits under the line"),
    "constant-reference": ("5", "NumPy's reference returns a view, its input or a "
                                "constant; openjax computes the array as JAX does"),
    "front-end": ("1", "~10 elements, or a cost that does not grow with the size: the jnp "
                       "wrapper (argument checks, dtype promotion, its plan) and one to a "
                       "few binds against NumPy's one C call"),
    "index-front-end": ("1", "~10 elements, or a cost that does not grow with the size: "
                             ".at[] updates and gathers of index arrays "
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
#: The causes a size-independent case may take at any size.
_FIXED_COST_CAUSES = ("front-end", "index-front-end")
#: A case costs what its row costs at its smallest size when its time is at
#: most this factor of that time plus this slack (measurement noise).
FIXED_COST_FACTOR = 1.5
FIXED_COST_SLACK_S = 2e-6

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
        "lax.stage*", "lax.dce_sink", "lax.optimization_barrier", "lax.custom_root*")],
    # narrow floats (section 3)
    *[(p, None, "narrow-float") for p in ("*float16*", "*bfloat16*", "*_f16*", "*_bf16*")],
    # special functions (section 3)
    *[(p, None, "special-kernel") for p in (
        "lax.bessel_*", "lax.betainc_*", "lax.igamma*", "lax.digamma_*", "lax.erf*",
        "lax.lgamma_*", "lax.polygamma*", "lax.zeta*", "scipy.special.*", "scipy.stats.*")],
    # linear algebra drivers and programs (section 4)
    *[(p, None, "linalg-driver") for p in ("jnp_linalg_*", "lax_linalg_*", "scipy_linalg_*",
                                            "scipy_sparse_linalg_*")],
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
        "jnp.at.*", "at.divide", "at.power", "jnp.bitwise_count_*",
        # session 16: more passes than NumPy's one kernel, for JAX's semantics
        # (a diagonal by strided slices, the int round trip's range check,
        # complex atan2 by parts, reduce_precision's bit arithmetic, the
        # select/logaddexp jvps, bool -> int before a join, a full sort for
        # quantile, fmax's +-0 ties, a scatter accumulating repeated indices)
        "jnp.diagonal_neg_axes", "jnp.einsum_triple_repeat",
        "lax.convert_element_type_int_roundtrip_grad", "lax.atan2_complex64",
        "lax.reduce_precision_*", "lax.select_n_*grad", "jnp.logaddexp_ties_grad",
        "jnp.concatenate_bool_int", "jnp.quantile_*", "jnp.fmax_*", "jnp.fmin_*",
        "at.multiply_*",
        # JAX's stable order of NaN and +-0 runs restored after the sort
        "jnp.sort_float32_*", "jnp.sort_complex", "jnp.sort_grad_*")],
    # programs of several steps over 1e3 elements where NumPy makes one call
    # (repeat's gather indices, casts before a join, a broadcast condition,
    # bool -> int before a cumulative sum, resize's tile and slice, argsort's
    # sort of (key, iota) pairs, einsum's diagonal then product, a size-1
    # batch product's reshapes)
    *[(p, ("1e3",), "jax-formulation") for p in (
        "jnp.repeat*", "jnp.concatenate_dtype", "jnp.where_scalar_cond",
        "jnp.cumulative_sum_bool", "jnp.resize", "jnp.argsort_*",
        "jnp.einsum_unique_and_repeat", "jnp.matmul_ones_batch")],
    # gathers of a one-element index array and a slice window (section 1)
    ("getitem.traced_*", None, "index-front-end"),
    # one Array per result slice (NumPy makes views)
    ("jnp.unstack", ("1e3",), "front-end"),
    # special functions' gradients (section 3)
    ("lax.random_gamma_grad_*", None, "special-kernel"),
    # the front end and a few binds at ~10 elements (section 1)
    *[(p, _SMALL, "front-end") for p in ("jnp.*", "lax.*", "method.*", "property.*",
                                          "Array.*", "nn.*", "jnp_*")],
]


def cause_of(result: dict, floor_bound: bool, constant_reference: bool,
             fixed_cost: bool = False) -> str | None:
  """The cause of a flagged case (``result`` as the sweep records it), or
  None when no measured cause explains it. ``fixed_cost``: the case takes
  about its row's time at the smallest size (``fixed_cost_cases``)."""
  if floor_bound:
    return "floor"
  if constant_reference:
    return "constant-reference"
  for pattern, sizes, cause in RULES:
    if fnmatch.fnmatchcase(result["row"], pattern) and (
        sizes is None or result["size"] in sizes
        or (fixed_cost and cause in _FIXED_COST_CAUSES)):
      return cause
  return None


def fixed_cost_cases(results) -> set[int]:
  """``id``s of the cases (beyond each row's smallest) whose openjax time is
  within ``FIXED_COST_FACTOR`` x (plus ``FIXED_COST_SLACK_S``) of the same
  row's time at its smallest size: their cost does not grow with the size."""
  by_row: dict[str, list] = {}
  for r in results:
    by_row.setdefault(r["row"], []).append(r)
  out = set()
  for cases in by_row.values():
    base = min(cases, key=lambda r: r["elements"])
    for r in cases:
      if r is not base and r["elements"] > base["elements"] and \
          r["openjax_s"] <= FIXED_COST_FACTOR * base["openjax_s"] + FIXED_COST_SLACK_S:
        out.add(id(r))
  return out
