"""Committed and uncommitted placement, as JAX's FAQ "Controlling data and
computation placement on devices" describes it: an Array carries its device
and, separately, whether it is committed to it. An uncommitted Array made
under ``jax.default_device(d)`` stays on ``d`` after the block ends; a
computation on uncommitted Arrays alone runs on the default device of its
time; a committed operand pulls the computation (and uncommitted operands)
to its device; committed operands on two devices are an error.

Each case runs in a fresh interpreter with 4 devices (``tests.test_devices.run``),
interpreted and compiled. The expected lines were printed by JAX 0.10.2 for
the same program.
"""
import pytest

from tests.test_devices import JAX_INCOMPATIBLE, run

PROGRAM = """
    d0, d1, d2, d3 = jax.devices()
    f = jax.jit(lambda a, b: a * b + 1)
    def show(tag, a):
      print(tag, sorted(d.id for d in a.devices()), a.committed)
    with jax.default_device(d1):
      x = jnp.arange(3.0)
      y = jax.device_put(np.ones(3))
      s = jax.device_put(2.0)
      z = f(x, x)
    show('x', x); show('y', y); show('s', s); show('z', z)
    show('x*2', x * 2); show('f(x,x)', f(x, x)); show('dp(x)', jax.device_put(x))
    show('x[0]', x[0]); show('sum', jnp.sum(x))
    c = jax.device_put(np.ones(3), d2)
    show('x+c', x + c); show('f(x,c)', f(x, c)); show('c+x', c + x)
    show('dp(x,d3)', jax.device_put(x, d3))
    with jax.default_device(d3):
      show('ctx3 x*2', x * 2); show('ctx3 f(x,x)', f(x, x)); show('ctx3 x+c', x + c)
    print(x.sharding)
    print(repr(x.device))
    print([(s.device.id, s.index) for s in x.addressable_shards])
    show('dp(c)', jax.device_put(c))
    show('jnp.array(x)', jnp.array(x)); show('jnp.asarray(x)', jnp.asarray(x))
    show('x.copy()', x.copy())
    show('jnp.array(c)', jnp.array(c))
    g = jax.grad(lambda t: jnp.sum(t * t))
    show('grad x', g(x)); show('grad c', g(c))
    show('vmap c', jax.vmap(lambda t: t * 2)(c))
    show('where c', jnp.where(c > 0, c, 0.0)); show('clip c', jnp.clip(c, 0.0, 0.5))
    show('median c', jnp.median(c)); show('var c', jnp.var(c))
    try:
      jnp.where(c > 0, c, jax.device_put(np.ones(3), d3))
    except ValueError as e:
      print(str(e)[:40])
    print(np.asarray(f(x, c)).tolist(), np.asarray(z).tolist())
    try:
      jax.device_put(np.ones(3), d2) * jax.device_put(np.ones(3), d3)
    except ValueError as e:
      print(str(e)[:len("%s")])
"""

# JAX 0.10.2, the program above (its last line: the error's start).
JAX_PRINTS = """\
x [1] False
y [1] False
s [1] False
z [1] False
x*2 [0] False
f(x,x) [0] False
dp(x) [1] False
x[0] [0] False
sum [0] False
x+c [2] True
f(x,c) [2] True
c+x [2] True
dp(x,d3) [3] True
ctx3 x*2 [3] False
ctx3 f(x,x) [3] False
ctx3 x+c [2] True
SingleDeviceSharding(device=CpuDevice(id=1), memory_kind=device)
CpuDevice(id=1)
[(1, (slice(None, None, None),))]
dp(c) [2] True
jnp.array(x) [0] False
jnp.asarray(x) [1] False
x.copy() [0] False
jnp.array(c) [2] True
grad x [0] False
grad c [2] True
vmap c [2] True
where c [2] True
clip c [2] True
median c [2] True
var c [2] True
Received incompatible devices for jitted
[1.0, 2.0, 3.0] [1.0, 2.0, 5.0]
"""


@pytest.mark.parametrize("compiled", [False, True])
def test_uncommitted_placement_sticks_and_committed_moves_computation(compiled):
  out = run(PROGRAM % JAX_INCOMPATIBLE, 4, compiled=compiled)
  assert out == JAX_PRINTS + JAX_INCOMPATIBLE + "\n"


def test_compiled_results_run_on_the_default_device_of_their_time():
  # The device's stream computes the result, not only its label: a jitted
  # call under ``jax.default_device(d)`` runs on d even right after a fast
  # call on the first device, and its uncommitted result stays on d.
  out = run("""
      d0, d1 = jax.devices()[:2]
      f = jax.jit(lambda a: a * 2 + 1)
      base = jnp.arange(4.0)
      for _ in range(3):
        f(base).block_until_ready()      # warms the fast path on d0
      with jax.default_device(d1):
        r = f(base)
      assert r._buffer.idev.device is d1, r._buffer.idev.device
      assert r.devices() == {d1} and not r.committed
      after = f(base)
      assert after._buffer.idev.device is d0 and after.devices() == {d0}
      jax.config.update("jax_default_device", d1)
      made = jnp.ones(2)
      jax.config.update("jax_default_device", None)
      assert made.devices() == {d1} and jnp.ones(2).devices() == {d0}
      print(np.asarray(r).tolist(), np.asarray(f(r)).tolist())
  """, 2, compiled=True)
  assert out.strip() == "[1.0, 3.0, 5.0, 7.0] [3.0, 7.0, 11.0, 15.0]"


def test_default_device_in_another_thread_leaves_this_one_alone():
  # ``jax.default_device`` is per thread: arrays made in a thread outside a
  # block stay on the first device while another thread is inside one.
  out = run("""
      import threading
      d0, d1 = jax.devices()[:2]
      inside, release = threading.Event(), threading.Event()
      seen = {}
      def other():
        with jax.default_device(d1):
          seen["other"] = jnp.ones(2).devices()
          inside.set()
          release.wait()
      t = threading.Thread(target=other)
      t.start()
      inside.wait()
      mine = jnp.ones(2) + 1
      release.set()
      t.join()
      print(sorted(d.id for d in seen["other"]), sorted(d.id for d in mine.devices()))
  """, 2)
  assert out.strip() == "[1] [0]"
