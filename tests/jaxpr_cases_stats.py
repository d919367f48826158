"""make_jaxpr cases of jax.numpy's statistics (var, std, ptp, cumulative_sum,
nanmean, diff, gradient, cov) whose printed jaxprs openjax must print as JAX
0.10.2 does; JAX's texts are ``data/jaxprs_stats_jax.json`` (see
``jaxpr_cases.py``)."""
import numpy as np


def cases(jax) -> dict:
  jnp = jax.numpy
  x = np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4)
  v = np.arange(6, dtype=np.int32)
  m = np.arange(12, dtype=np.int32).reshape(3, 4)
  f1 = np.linspace(-1, 1, 7, dtype=np.float32)

  def jaxpr(f, *args):
    return lambda: str(jax.make_jaxpr(f)(*args))
  return {
      "var": jaxpr(jnp.var, x),
      "var_axis": jaxpr(lambda a: jnp.var(a, axis=1), x),
      "var_ddof": jaxpr(lambda a: jnp.var(a, axis=0, ddof=1), x),
      "var_keepdims": jaxpr(lambda a: jnp.var(a, axis=1, keepdims=True), x),
      "var_int": jaxpr(jnp.var, m),
      "std": jaxpr(jnp.std, x),
      "std_axis_ddof": jaxpr(lambda a: jnp.std(a, axis=1, ddof=1), x),
      "std_keepdims": jaxpr(lambda a: jnp.std(a, axis=0, keepdims=True), x),
      "std_int": jaxpr(jnp.std, m),
      "nanmean": jaxpr(jnp.nanmean, x),
      "nanmean_axis": jaxpr(lambda a: jnp.nanmean(a, axis=1), x),
      "nanmean_keepdims": jaxpr(lambda a: jnp.nanmean(a, axis=0, keepdims=True), x),
      "nanmean_int": jaxpr(jnp.nanmean, m),
      "cov": jaxpr(jnp.cov, x),
      "cov_rowvar": jaxpr(lambda a: jnp.cov(a, rowvar=False), x),
      "cov_ddof": jaxpr(lambda a: jnp.cov(a, ddof=0), x),
      "cov_int": jaxpr(jnp.cov, m),
      "diff": jaxpr(jnp.diff, x),
      "diff_axis": jaxpr(lambda a: jnp.diff(a, axis=0), x),
      "diff_n2": jaxpr(lambda a: jnp.diff(a, n=2), x),
      "diff_int": jaxpr(jnp.diff, v),
      "diff_prepend": jaxpr(lambda a: jnp.diff(a, prepend=0.0), f1),
      "gradient": jaxpr(jnp.gradient, f1),
      "gradient_2d": jaxpr(jnp.gradient, x),
      "gradient_axis": jaxpr(lambda a: jnp.gradient(a, axis=1), x),
      "gradient_spacing": jaxpr(lambda a: jnp.gradient(a, 0.5), f1),
      "ptp": jaxpr(jnp.ptp, x),
      "ptp_axis": jaxpr(lambda a: jnp.ptp(a, axis=1), x),
      "ptp_keepdims": jaxpr(lambda a: jnp.ptp(a, axis=0, keepdims=True), x),
      "ptp_int": jaxpr(jnp.ptp, m),
      "cumulative_sum": jaxpr(lambda a: jnp.cumulative_sum(a, axis=1), x),
      "cumulative_sum_1d": jaxpr(jnp.cumulative_sum, f1),
      "cumulative_sum_initial": jaxpr(lambda a: jnp.cumulative_sum(a, axis=0, include_initial=True), x),
      "cumulative_sum_int": jaxpr(jnp.cumulative_sum, v),
  }
