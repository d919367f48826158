"""Fused kernels of whole library functions found by their equations:
``jnp.frexp`` and ``jnp.ldexp`` are JAX's bit arithmetic, ~33 and ~47
equations of elementwise kernels (one NumPy pass each), where NumPy's
``np.frexp``/``np.ldexp`` make one; ``jnp.power`` of integers is 38
(square and multiply over 6 exponent bits) where ``np.power`` makes one. A template below spells out the
equations of such a function as its jnp wrapper stages them (after
``inline_interpreted_calls``); ``match_templates`` finds them in a program
equation by equation -- every primitive, operand, literal, result dtype and
shape -- so the fused kernel replaces exactly that computation, whose bits
it gives on every input (tests compare both ways bit for bit: every float16,
float32/float64/bfloat16 edges, subnormals, overflow, NaNs, +-0, +-inf).
The jaxpr is unchanged.

Template lines are ``name:T = primitive operand ...``; ``T`` is the result
dtype (``F`` the function's float, ``I`` the signed integer of its width,
``J`` int32, ``B`` bool); an operand is a template name, an input name
(``x``, ``k``, ``a``, ``b``) or a literal ``#name`` (its value and dtype
from ``_constants``; ``T`` and ``#0``/``#1`` the integer power's type).
Every result has the shape of the root's. Measured (loaded 2-core machine,
min of repeats, 10 elements): frexp ~120 -> ~12-23 us, ldexp ~165 -> ~11
us, integer power ~90 -> ~29 us; at 1e6 frexp 248 -> ~10 ms, ldexp 362 ->
~20 ms (NumPy's own 3-15 and 18-23 ms on that machine).
"""
from __future__ import annotations

import numpy as np

from openjax._src.core.jaxpr import Literal, eqn_effects

__all__ = ["match_templates"]

_INT_OF_BITS = {2: np.dtype(np.int16), 4: np.dtype(np.int32), 8: np.dtype(np.int64)}

_FREXP = """
g:I = bitcast_convert_type x
h:I = and g #mant_mask
i:I = and g #exp_mask
j:B = eq i #0i
k_:B = ne h #0i
l:B = and j k_
m:F = convert_element_type h
n:B = lt g #0i
o:F = neg m
p:F = select_n n m o
q:F = select_n l x p
r:I = broadcast_in_dim #sub_exp
s:I = broadcast_in_dim #0i
t:I = select_n l s r
u:I = bitcast_convert_type q
v:I = shift_right_arithmetic u #nmant
w:I = and v #emask
x_:I = sub w #bias
y:I = add x_ #1i
z:I = add t y
ba:I = and u #not_exp
bb:I = or ba #half_exp
bc:F = bitcast_convert_type bb
bd:B = eq i #0i
be:B = eq h #0i
bf:B = and bd be
bh:F = abs x
bg:B = eq bh #inf
bi:B = ne x x
bj:B = or bg bi
bk:B = or bj bf
bl:I = broadcast_in_dim #0i
bm:I = select_n bk z bl
mant:F = select_n bk bc x
"""
# the exponent as int32 (a convert when the float is not 32 bits wide)
_FREXP_EXP_I32 = "exp:J = select_n bk z bl\n"
_FREXP_EXP_WIDE = "exp:J = convert_element_type bm\n"

# jnp.ldexp(x, k) of an integer k: frexp, then JAX's m * 2**e with one
# factor of 2 moved into the mantissa
_LDEXP_TAIL = """
c:F = convert_element_type k
bo:F = convert_element_type exp
bp:F = add bo c
bq:B = gt bp #0f
br:F = mul mant #2f
bs:F = select_n bq mant br
bt:F = sub bp #1f
bu:F = select_n bq bp bt
bv:F = pow #2f bu
bw:F = mul bs bv
ab:F = abs x
bx:B = eq ab #inf
by:B = eq x #0f
bz:B = or bx by
out:F = select_n bz bw x
"""


# jnp.trunc: where(x < 0, ceil(x), floor(x)) -- np.trunc, one pass (the
# select's predicate is random on signed data: np.where's branches or the
# bit blend took ~4 passes more)
_TRUNC = """
n:B = lt x #0f
c:F = ceil x
f:F = floor x
out:F = select_n n f c
"""
# jnp.fmax / jnp.fmin: where((a > b) | isnan(b), a, b) (< for fmin)
_FMAX = """
g:B = gt a b
n:B = ne b b
o:B = or g n
out:F = select_n o b a
"""
_FMIN = _FMAX.replace("gt a b", "lt a b")


def _int_pow_text() -> str:
  """``jnp.power`` of integers (``_pow_int_int``): square and multiply over
  the exponent's low 6 bits, from 0 for a zero base (nonzero exponent)."""
  lines = ["z0:B = eq a #0", "z1:B = ne b #0", "z2:B = and z0 z1",
           "zero:T = broadcast_in_dim #0", "one:T = broadcast_in_dim #1",
           "acc0:T = select_n z2 one zero"]
  for i in range(6):
    bits = "b" if i == 0 else f"b{i}"
    power = "a" if i == 0 else f"p{i}"
    if i:
      prev_bits = "b" if i == 1 else f"b{i - 1}"
      prev_power = "a" if i == 1 else f"p{i - 1}"
      lines += [f"{bits}:T = shift_right_logical {prev_bits} #1",
                f"{power}:T = mul {prev_power} {prev_power}"]
    lines += [f"bit{i}:T = and {bits} #1", f"prod{i}:T = mul acc{i} {power}",
              f"set{i}:B = ne bit{i} #0", f"acc{i + 1}:T = select_n set{i} acc{i} prod{i}"]
  return "\n".join(lines)


# float dtypes fused: float16 and bfloat16 through float32 (exact both
# ways: their mantissas fit, their subnormal results round once, tested)
_DTYPES: dict = {}


def _float_dtypes() -> dict:
  if not _DTYPES:
    import ml_dtypes   # noqa: PLC0415 - numpy's dtypes alone until asked
    for t in (np.float16, np.float32, np.float64, ml_dtypes.bfloat16):
      _DTYPES[np.dtype(t)] = ml_dtypes.finfo(t)
  return _DTYPES


def _parse(text: str) -> dict:
  lines = {}
  for line in text.strip().splitlines():
    head, rhs = line.split(" = ")
    name, kind = head.split(":")
    prim, *operands = rhs.split()
    lines[name] = (kind, prim, tuple(operands))
  return lines


_TEMPLATES = None


def _templates():
  global _TEMPLATES
  if _TEMPLATES is None:
    _TEMPLATES = {"frexp32": _parse(_FREXP + _FREXP_EXP_I32),
                  "frexp": _parse(_FREXP + _FREXP_EXP_WIDE)}
    _TEMPLATES["ldexp32"] = {**_TEMPLATES["frexp32"], **_parse(_LDEXP_TAIL)}
    _TEMPLATES["ldexp"] = {**_TEMPLATES["frexp"], **_parse(_LDEXP_TAIL)}
    _TEMPLATES["int_pow"] = _parse(_int_pow_text())
    _TEMPLATES["trunc"] = _parse(_TRUNC)
    _TEMPLATES["fmax"] = _parse(_FMAX)
    _TEMPLATES["fmin"] = _parse(_FMIN)
  return _TEMPLATES


def _constants(dt: np.dtype, info) -> dict:
  """``#name`` -> (value, dtype) for float dtype ``dt``."""
  it = _INT_OF_BITS[dt.itemsize]
  nmant, nexp = info.nmant, info.nexp
  mask = (1 << nexp) - 1
  bias = 1 - info.minexp

  def signed(v: int) -> int:   # two's complement in the integer's width
    bits = 8 * it.itemsize
    v &= (1 << bits) - 1
    return v - (1 << bits) if v >> (bits - 1) else v
  return {"mant_mask": ((1 << nmant) - 1, it), "exp_mask": (signed(mask << nmant), it),
          "0i": (0, it), "1i": (1, it), "sub_exp": (info.minexp - nmant, it),
          "nmant": (nmant, it), "emask": (mask, it), "bias": (bias, it),
          "not_exp": (signed(~(mask << nmant)), it),
          "half_exp": (signed((bias - 1) << nmant), it),
          "inf": (np.inf, dt), "0f": (0.0, dt), "1f": (1.0, dt), "2f": (2.0, dt)}


def _match(template: dict, root: str, var, eqns, producer, x_dtype=None):
  """{template name: equation index} and {input name: var} when ``var`` is
  computed by ``template`` from ``root`` down, else None."""
  bound, at, inputs = {}, {}, {}
  dt = x_dtype
  consts = kinds = None
  shape = None

  def setup(d):
    nonlocal dt, consts, kinds
    if d.kind in "iu":   # integer power: T the integer type
      dt, consts = d, {"0": (0, d), "1": (1, d), "63": (63, d)}
      kinds = {"T": d, "B": np.dtype(np.bool_)}
      return True
    info = _float_dtypes().get(d)
    if info is None or d.itemsize not in _INT_OF_BITS:
      return False
    dt, consts = d, _constants(d, info)
    kinds = {"F": d, "I": _INT_OF_BITS[d.itemsize], "J": np.dtype(np.int32),
             "B": np.dtype(np.bool_)}
    return True

  def unify(name: str, v) -> bool:
    if name in bound:
      return bound[name] is v
    if type(v) is Literal or v.aval.shape != shape:
      return False
    if name not in template:   # an input: k an integer, the others of the dtype
      if (v.aval.dtype.kind not in "biu") if name == "k" else v.aval.dtype != dt:
        return False
      bound[name] = inputs[name] = v
      return True
    kind, prim, operands = template[name]
    k = producer.get(v)
    if k is None:
      return False
    eqn = eqns[k]
    if (eqn.primitive.name != prim or len(eqn.outvars) != 1 or v.aval.dtype != kinds.get(kind)
        or len(eqn.invars) != len(operands)):
      return False
    bound[name], at[name] = v, k
    for op, a in zip(operands, eqn.invars):
      if op[0] == "#":
        value, want = consts.get(op[1:], (None, None))
        if (want is None or type(a) is not Literal or np.ndim(a.val) or a.aval.dtype != want
            or a.val != value):
          return False
      elif not unify(op, a):
        return False
    return True

  if type(var) is Literal:
    return None
  shape = var.aval.shape
  if not setup(np.dtype(var.aval.dtype) if x_dtype is None else x_dtype):
    return None
  if not unify(root, var) or not inputs:
    return None
  return at, inputs, dt


def match_templates(eqns: list, producer: dict, out_vars: list) -> dict:
  """{index of a pattern's last equation: (kernel, operands, dropped,
  out_steps)} for the frexp/ldexp/integer power patterns in ``eqns``
  (``fused_steps``' entries: operands as (equation, operand) pairs)."""
  # reads by live equations only (the integer power's unrolled loop leaves
  # a dead last square and shift reading its intermediates)
  used = {v for v in out_vars if type(v) is not Literal}
  live = set()
  for k in range(len(eqns) - 1, -1, -1):
    eqn = eqns[k]
    if eqn_effects(eqn) or any(v in used for v in eqn.outvars):
      live.add(k)
      used.update(a for a in eqn.invars if type(a) is not Literal)
  readers: dict = {}
  uses: dict = {}
  for k in sorted(live):
    for a in eqns[k].invars:
      if type(a) is not Literal:
        readers.setdefault(a, []).append(k)
        uses[a] = uses.get(a, 0) + 1
  for a in out_vars:
    if type(a) is not Literal:
      uses[a] = uses.get(a, 0) + 2   # never an intermediate to drop
  graph = (uses, readers, live)
  found, taken = {}, set()
  templates = _templates()
  # from the last equation back: ldexp's pattern holds a frexp pattern
  for k in range(len(eqns) - 1, -1, -1):
    eqn = eqns[k]
    if eqn.primitive.name != "select_n" or k in taken:
      continue
    out, = eqn.outvars
    entry = None
    for name in ("ldexp32", "ldexp"):
      m = _match(templates[name], "out", out, eqns, producer)
      if m is not None:
        at, inputs, dt = m
        # the kernel reads the exponent as the convert step makes it (kept):
        # bfloat16 rounds integers past 256 there, as JAX's formula does
        entry = _entry(at, {"out": out}, [inputs["x"], eqns[at["c"]].outvars[0]],
                       _ldexp_kernel(dt), eqns, graph, keep=("c",))
        break
    if entry is None and out.aval.dtype.kind in "iu":
      m = _match(templates["int_pow"], "acc6", out, eqns, producer)
      if m is not None:
        at, inputs, dt = m
        entry = _entry(at, {"out": out}, [inputs["a"], inputs["b"]], _int_pow_kernel,
                       eqns, graph)
    if entry is None and out.aval.dtype.kind not in "iub":
      entry = _elementwise_entry(templates, out, eqns, producer, graph)
    if entry is None:
      entry = _frexp_entry(templates, out, eqns, producer, graph)
    if entry is not None and not ((entry[3] | {entry[0]}) & taken):
      last, fused = entry[0], entry[1:]
      found[last] = fused
      taken |= fused[2] | {last}
  return found


def _elementwise_entry(templates, out, eqns, producer, graph):
  """trunc, fmax or fmin computing ``out``."""
  m = _match(templates["trunc"], "out", out, eqns, producer)
  if m is not None:
    at, inputs, dt = m
    return _entry(at, {"out": out}, [inputs["x"]], _trunc_kernel(dt), eqns, graph)
  for name in ("fmax", "fmin"):
    m = _match(templates[name], "out", out, eqns, producer)
    if m is not None:
      at, inputs, dt = m
      return _entry(at, {"out": out}, [inputs["a"], inputs["b"]],
                    _fmax_kernel(dt, name == "fmax"), eqns, graph)
  return None


def _frexp_entry(templates, mant, eqns, producer, graph):
  """The frexp pattern whose mantissa is ``mant``: its exponent is the
  other select of the same predicate."""
  for name in ("frexp32", "frexp"):
    m = _match(templates[name], "mant", mant, eqns, producer)
    if m is None:
      continue
    at, inputs, dt = m
    pred = eqns[at["mant"]].invars[0]
    # the exponent's select reads the predicate (and is converted to int32
    # when the float is not 32 bits wide)
    readers = graph[1]
    near = [j for j in readers.get(pred, ()) if j != at["mant"]]
    near += [i for j in near for i in readers.get(eqns[j].outvars[0], ())]
    for j in near:
      if len(eqns[j].outvars) != 1:
        continue
      exp, = eqns[j].outvars
      if exp.aval.dtype != np.int32:
        continue
      m2 = _match(templates[name], "exp", exp, eqns, producer, dt)
      if m2 is None or m2[1]["x"] is not inputs["x"]:
        continue
      both = {**m2[0], **at}
      if any(both[n] != m2[0][n] for n in m2[0]):
        continue
      return _entry(both, {"mant": mant, "exp": exp}, [inputs["x"]], _frexp_kernel(dt),
                    eqns, graph)
  return None


def _entry(at: dict, outs: dict, operand_vars: list, kernel, eqns, graph: tuple,
           keep: tuple = ()):
  """(last, kernel, operands, dropped, out_steps) when the matched
  equations' intermediate results (but those of ``keep``, which stay and
  may be read by the kernel) have no reader outside them and the pattern's
  results none before its last equation; else None."""
  uses, readers, live = graph
  at = {n: k for n, k in at.items() if n not in keep}
  steps = set(at.values())
  last = max(steps)
  out_ids = {id(v) for v in outs.values()}
  inner: dict = {}   # reads by the pattern's live equations (uses counts live ones)
  for k in steps & live:
    for a in eqns[k].invars:
      if type(a) is not Literal:
        inner[id(a)] = inner.get(id(a), 0) + 1
  for name, k in at.items():
    v = eqns[k].outvars[0]
    if id(v) in out_ids:
      if any(r <= last for r in readers.get(v, ()) if r not in steps):
        return None
    elif uses.get(v, 0) != inner.get(id(v), 0):
      return None
  # each operand as (equation, operand index) of an equation reading it
  operands = []
  for v in operand_vars:
    k = next(k for k in sorted(steps) if any(a is v for a in eqns[k].invars))
    operands.append((k, next(i for i, a in enumerate(eqns[k].invars) if a is v)))
  out_steps = None if len(outs) == 1 else tuple(at[n] for n in outs)
  return last, kernel, tuple(operands), steps - {last}, out_steps


# ------------------------------------------------------------ kernels
_F32 = np.dtype(np.float32)
_I32 = np.dtype(np.int32)
# |exponent| past which every float saturates to 0 or inf (float64 spans
# 2**-1074 .. 2**1024), exact in every float type (float16's largest is
# 65504: a larger bound would be inf); np.ldexp takes C ints
_EXP_LIMIT = 1 << 11


def _frexp_kernel(dt: np.dtype):
  narrow = dt.itemsize < 4 or dt.kind != "f"   # float16, bfloat16: through float32

  def kernel(x):
    m, e = np.frexp(x.astype(_F32) if narrow else x)
    # JAX returns NaNs as they are (np.frexp quiets signalling ones): the
    # sum of squares is NaN when there are any (BLAS's dot: at 10 elements
    # ~1 us less than np.add.reduce, at 1e6 ~4x faster)
    total = np.vdot(m, m)
    if narrow:
      m = m.astype(dt)
    if total != total:
      np.copyto(m, x, where=m != m)
    return m, e
  return kernel


def _ldexp_kernel(dt: np.dtype):
  narrow = dt.itemsize < 4 or dt.kind != "f"

  if dt.kind != "f":   # bfloat16: JAX's exponent sum rounds in bfloat16 too
    def kernel(x, c):
      m, e = np.frexp(x.astype(_F32))
      e = np.add(e.astype(dt), c)
      return np.ldexp(m, np.clip(e, -_EXP_LIMIT, _EXP_LIMIT).astype(_I32)).astype(dt)
    return kernel

  def kernel(x, c):
    # c: the integer exponents in x's float type, exact where they matter
    # (float16 past 2048, float32 past 2**24 saturate either way; float16
    # turns 65520 and more into inf, clipped here)
    k = np.clip(c, -_EXP_LIMIT, _EXP_LIMIT).astype(_I32)
    if narrow:
      return np.ldexp(x.astype(_F32), k).astype(dt)
    return np.ldexp(x, k)
  return kernel


_LOW6: dict = {}


def _int_pow_kernel(a, b):
  # JAX's square and multiply is a ** (b & 63) in wrapping arithmetic (the
  # same residue in any order of products): np.power's integer loop; from
  # 0 where the base is 0 and b != 0, also when b's low 6 bits are 0
  low6 = _LOW6.get(b.dtype)
  if low6 is None:   # a 0-d array: a NumPy scalar operand costs ~2 us more
    low6 = _LOW6[b.dtype] = np.array(63, b.dtype)
  e = np.bitwise_and(b, low6)
  r = np.power(a, e)
  if np.count_nonzero(b) != np.count_nonzero(e):   # b a nonzero multiple of 64
    np.copyto(r, a != 0, where=(b != 0) & (e == 0))
  return r


def _trunc_kernel(dt: np.dtype):
  # np.trunc rounds toward zero as ceil below 0 and floor elsewhere do (-0.0
  # for -1 < x < 0, NaNs quieted as both quiet them); float16 and bfloat16
  # through float32 (exact both ways), as floor and ceil take bfloat16
  if dt.itemsize >= 4:
    return np.trunc

  def kernel(x):
    return np.trunc(x.astype(_F32)).astype(dt)
  return kernel


# fmax/fmin up to this size run JAX's select as it is (the fewest NumPy calls)
_SELECT_MAX = 4096


def _fmax_kernel(dt: np.dtype, is_max: bool):
  """JAX's ``where((a > b) | isnan(b), a, b)`` (``<`` for fmin): np.fmax's
  value wherever the result is not NaN, with the zero ties (+-0 against
  +-0, where np.fmax's pick of a sign varies along the array) set to b's
  bits at their positions; NaN results (both operands NaN: a's bits) go
  through the select itself, bit for bit."""
  narrow = dt.kind != "f"   # bfloat16 through float32 (float16's casts are slow)
  ufunc, order = (np.fmax, np.greater) if is_max else (np.fmin, np.less)

  def select(a, b):
    a32, b32 = (a.astype(_F32), b.astype(_F32)) if narrow else (a, b)
    pick = order(a32, b32)
    pick |= b32 != b32
    return np.where(pick, a, b)

  def kernel(a, b):
    if a.size <= _SELECT_MAX:
      # the select itself: 4 NumPy calls where the checks below take 5-9
      # (1e3 float32 with ties: ~17 -> ~13 us)
      return select(a, b)
    # (fresh 1e6-element buffers cost page faults, ~1 ms each on a loaded
    # machine: the float32 copies are reused)
    if narrow:
      r, b32 = a.astype(_F32), b.astype(_F32)
      ufunc(r, b32, out=r)
    else:
      r, b32 = ufunc(a, b), b
    # NaNs (both NaN: a's bits) by a NaN sum of squares (1e6 float32: ~0.13
    # ms; np.count_nonzero of floats took 1.2)
    total = np.vdot(r, r)
    if total != total:
      return select(a, b)
    zero = r == 0
    if zero.any():
      # a zero result is a tie (b's bits) where b is zero, else a's zero,
      # which np.fmax returned; the ties written by index, not by a select
      # over all elements (1e6 f32 with 8% ties: 4.1 -> ~1.5 ms; np.where or
      # a masked copyto ran 1-5 ms on their own)
      zero &= b32 == 0
      if r.flags.c_contiguous:
        ties = np.flatnonzero(zero)
        r.reshape(-1)[ties] = b32.reshape(-1)[ties]
      else:
        np.copyto(r, b32, where=zero)
    if not narrow:
      return r
    # r holds one operand's bfloat16 bits in its high half: kept as they
    # are (ml_dtypes' rounding cast: ~1 ms at 1e6)
    bits = r.view(np.uint32)
    np.right_shift(bits, 16, out=bits)
    return bits.astype(np.uint16).view(dt)
  return kernel
