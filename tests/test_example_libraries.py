"""jax.example_libraries (optimizers, stax) against JAX 0.10.2's values.

tests/libs/example_libraries_program.py is written against JAX; under JAX it
wrote tests/data/example_libraries.json, here it runs under ``alias_jax``.
"""
import importlib.util
import json
import pathlib

import numpy as np
import pytest

import openjax as jax
import openjax.numpy as jnp
from openjax._src import alias
from openjax.example_libraries import optimizers, stax

HERE = pathlib.Path(__file__).parent
EXPECTED = json.loads((HERE / "data" / "example_libraries.json").read_text())


@pytest.fixture(scope="module")
def program():
  alias.alias_jax()
  try:
    spec = importlib.util.spec_from_file_location(
        "example_libraries_program", HERE / "libs" / "example_libraries_program.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    yield module
  finally:
    alias.unalias_jax()


def _assert_close_tree(actual, expected, rtol=2e-5, atol=1e-6):
  if isinstance(expected, dict):
    assert actual.keys() == expected.keys()
    for key in expected:
      _assert_close_tree(actual[key], expected[key], rtol, atol)
  else:
    np.testing.assert_allclose(np.asarray(actual, np.float64), np.asarray(expected), rtol=rtol,
                               atol=atol)


@pytest.mark.parametrize("part", ["optimizers", "schedules", "clipping"])
def test_optimizers_match_jax(program, part):
  values = {"optimizers": program.optimizer_trajectories, "schedules": program.schedules,
            "clipping": program.clipping}[part]()
  _assert_close_tree(values, EXPECTED[part])


def test_stax_network_matches_jax(program):
  _assert_close_tree(program.stax_network(), EXPECTED["stax_network"])


def test_stax_transpose_and_combinators_match_jax(program):
  _assert_close_tree(program.stax_transpose_and_residual(), EXPECTED["stax_transpose"])


def test_optimizer_rejects_a_gradient_tree_of_another_structure():
  init, update, _ = optimizers.sgd(0.1)
  state = init({"a": jnp.zeros(2)})
  with pytest.raises(TypeError, match="did not match the parameter tree structure"):
    update(0, {"b": jnp.zeros(2)}, state)


def test_optimizer_state_is_a_pytree_and_packs_back():
  init, update, get_params = optimizers.adam(0.1)
  state = init((jnp.ones(3), {"k": jnp.zeros((2, 2))}))
  assert len(jax.tree.leaves(state)) == 6  # x, m, v per parameter
  state = jax.jit(update)(0, (jnp.ones(3), {"k": jnp.ones((2, 2))}), state)
  unpacked = optimizers.unpack_optimizer_state(state)
  assert isinstance(unpacked[0], optimizers.JoinPoint)
  repacked = optimizers.pack_optimizer_state(unpacked)
  for a, b in zip(jax.tree.leaves(repacked), jax.tree.leaves(state)):
    np.testing.assert_array_equal(a, b)
  np.testing.assert_allclose(get_params(repacked)[0], np.full(3, 0.9), rtol=1e-6)


def test_schedule_errors():
  with pytest.raises(TypeError):
    optimizers.make_schedule(jnp.ones(3))
  with pytest.raises(ValueError, match="one shorter"):
    optimizers.piecewise_constant([1, 2], [1.0, 2.0])


def test_stax_dropout_needs_a_key():
  init, apply = stax.Dropout(0.5)
  _, params = init(jax.random.key(0), (4,))
  with pytest.raises(ValueError, match="requires apply_fun to be called with a PRNG key"):
    apply(params, jnp.ones(4))
  _, apply_test = stax.Dropout(0.5, mode="test")
  np.testing.assert_array_equal(apply_test(params, jnp.ones(4), rng=jax.random.key(1)),
                                np.ones(4))


def test_stax_mlp_trains_with_grad():
  init, apply = stax.serial(stax.Dense(8), stax.Relu, stax.Dense(1))
  _, params = init(jax.random.key(0), (-1, 3))
  x = jnp.linspace(-1, 1, 30).reshape(10, 3)
  y = jnp.sum(x, axis=1, keepdims=True)
  opt_init, opt_update, get_params = optimizers.momentum(0.05, 0.9)

  def loss(p):
    return jnp.mean((apply(p, x) - y) ** 2)

  state = opt_init(params)
  first = float(loss(params))
  for i in range(30):
    state = opt_update(i, jax.grad(loss)(get_params(state)), state)
  assert float(loss(get_params(state))) < 0.2 * first
