"""Keys for caching what control flow and transformations trace.

JAX caches a traced branch or body by the function object and the argument
types, so calling ``lax.cond``/``while_loop``/``scan`` again with the same
function reuses its jaxpr. Eager code usually passes fresh closures
(``lax.cond(p, lambda x: x * y, ...)`` inside a function called in a loop):
a new function object each call, the same code, which JAX traces again.
``fun_key`` keys a module-level function by its identity, as JAX does, and
a nested one by what its trace depends on (``pure_fun_key``): its code, and
the value (identity, for arrays and modules) of everything it can read -
closure cells, defaults, the globals its code names, the functions it calls
- so a closure over new values, a mutated list, or a rebound global traces
again, as JAX's fresh trace would. That is only sound for functions that do
nothing but compute: a function that may print, write an outer variable or
call an unknown object is keyed by its identity, so a fresh one traces (and
prints) every call, as in JAX.

The cache holds at most ``MAX_ENTRIES`` traces and ``MAX_BYTES`` of the
constants they close over (the oldest go first); a trace that closes over
tracers is never kept.
"""
from __future__ import annotations

import dis
import functools
import sys
import types

import numpy as np

from openjax._src.core import Array
from openjax._src.control.ref_threading import RefThreading

MAX_ENTRIES = 256
MAX_BYTES = 64 << 20
_MAX_DEPTH = 4


class IdentityKey:
  """A key part equal only to the same object (held, so its id stays valid)."""
  __slots__ = ("obj",)

  def __init__(self, obj):
    self.obj = obj

  def __hash__(self):
    return id(self.obj)

  def __eq__(self, other):
    return type(other) is IdentityKey and other.obj is self.obj


class _Mutable(Exception):
  """A function may have an effect, or reads a value no key can stand for
  (an object that may change without a new identity)."""


_SCALARS = (bool, int, str, bytes, type(None))


def _value_key(v):
  """An immutable scalar value as a key part."""
  t = type(v)
  if t is float or t is complex:
    return (t, repr(v))   # -0.0 and nan trace to other constants than 0.0
  if isinstance(v, np.generic):
    return (t, v.tobytes())
  if isinstance(v, np.dtype):
    return v
  return (t, v)


# ------------------------------------------------ effect-free functions
# Eager ``vmap``/``grad``/``vectorize`` trace the user's function on every
# call in JAX, so what the function does besides computing its result (a
# ``print``, appending to a list, reading a random number generator) happens
# every call. A cached program may stand in for such a call only when the
# function cannot do any of that: ``pure_fun_key`` reads the bytecode of the
# function and of every function it can reach, and keys only functions that
# write no global, no outer variable and no attribute, import nothing, call
# only the builtins below, and name no attribute below; the globals and
# closure values they read must be keyable values, modules of the libraries
# below, or such functions themselves.
_PURE_BUILTINS = frozenset({
    "abs", "all", "any", "bool", "complex", "dict", "divmod", "enumerate", "filter",
    "float", "frozenset", "getattr", "hasattr", "int", "isinstance", "issubclass", "len",
    "list", "map", "max", "min", "pow", "range", "reversed", "round", "set", "slice",
    "sorted", "str", "sum", "tuple", "type", "zip", "ValueError", "TypeError",
    "IndexError", "KeyError", "NotImplementedError", "RuntimeError", "True", "False",
    "None", "Ellipsis", "NotImplemented"})
# Attribute names that reach effects through a library module (``np.random``,
# ``jax.debug.print``, host callbacks, ``jax.config.update``) or mutate a
# container in place.
_EFFECT_ATTRS = frozenset({
    "debug", "print", "callback", "pure_callback", "io_callback", "config", "write", "save",
    "savez", "savetxt", "tofile", "seterr", "set_printoptions", "__setitem__", "__delitem__",
    "__setattr__"})
# Methods that change a container, allowed on a local variable (a list the
# call builds; the containers of an argument, which transformations rebuild
# per call) or a global (a library function of that name, ``jnp.append``, or
# a container keyed by its contents before the call: a change makes the next
# call's key another one, so a cached trace never hides it), an effect on
# anything else (an attribute's list).
_MUTATING_METHODS = frozenset({
    "update", "append", "extend", "insert", "pop", "popitem", "remove", "clear",
    "setdefault", "discard"})
_LIBRARY_MODULES = frozenset({"openjax", "numpy", "math", "cmath", "operator", "functools",
                              "itertools"})
# NumPy arrays (and uncommitted Arrays whose value is on the host) a
# function reads are keyed by their bytes up to this size.
_MAX_KEYED_ELEMENTS = 1024
_EFFECT_OPS = frozenset({"STORE_GLOBAL", "DELETE_GLOBAL", "STORE_ATTR", "DELETE_ATTR",
                         "IMPORT_NAME", "IMPORT_FROM", "IMPORT_STAR", "LOAD_NAME",
                         "STORE_NAME", "DELETE_NAME", "LOAD_CLASSDEREF", "YIELD_VALUE",
                         "SETUP_ANNOTATIONS"})

# code -> the sorted global names it (and the code nested in it) loads, or
# None when it may have an effect.
_code_reads: dict = {}


def _effect_free_reads(code: types.CodeType) -> tuple | None:
  if code in _code_reads:
    return _code_reads[code]
  reads: set = set()
  todo = [(code, frozenset())]
  ok = True
  while todo and ok:
    c, outer_cells = todo.pop()
    cells = outer_cells | set(c.co_cellvars)
    prev = None
    for ins in dis.get_instructions(c):
      op = ins.opname
      if op in _EFFECT_OPS:
        ok = False
      elif op == "LOAD_GLOBAL":
        reads.add(ins.argval)
      elif op in ("LOAD_ATTR", "LOAD_METHOD"):
        # ``random`` only as a global module's attribute (``jax.random``,
        # checked when keyed; ``np.random`` is not effect-free).
        ok = ins.argval not in _EFFECT_ATTRS and (ins.argval != "random" or (
            prev is not None and prev.opname == "LOAD_GLOBAL")) and (
            ins.argval not in _MUTATING_METHODS or (
                prev is not None and prev.opname in ("LOAD_FAST", "LOAD_GLOBAL")))
        if ok and ins.argval == "random":
          reads.add((prev.argval, "random"))
      elif op in ("STORE_DEREF", "DELETE_DEREF"):
        ok = ins.argval in cells   # a variable of this call, not an outer one
      elif op == "LOAD_CONST" and type(ins.argval) is types.CodeType:
        todo.append((ins.argval, cells))
      if not ok:
        break
      prev = ins
  result = _code_reads[code] = tuple(sorted(reads, key=str)) if ok else None
  return result


def _library_module(v) -> bool:
  name = getattr(v, "__name__", "")
  return name.partition(".")[0] in _LIBRARY_MODULES and not name.startswith("numpy.random")


# module -> whether it is a library module: a global ``jnp`` is checked on
# every key of every function reading it (~0.5 us a read by name).
_library_modules: dict = {}


def _library_module_cached(v) -> bool:
  ok = _library_modules.get(v)   # modules hash by identity
  if ok is None:
    ok = _library_modules[v] = _library_module(v)
  return ok


def _pure_value_key(v, depth: int):
  global _arrays_keyed
  t = type(v)
  # The common kinds first: this runs on every eager transformation call.
  if t is types.ModuleType:
    if not _library_module_cached(v):
      raise _Mutable
    return v   # modules hash and compare by identity
  if t is types.FunctionType:
    if depth >= _MAX_DEPTH:
      raise _Mutable
    return _pure_callable_key(v, depth + 1)
  if t is Array:
    _arrays_keyed += 1
    if v._np is not None and v.aval.size <= _MAX_KEYED_ELEMENTS and v._device is None \
        and v._home is None:
      # A small uncommitted array by its value: a closure over an array made
      # afresh per call (``a.T``, ``jnp.diag(a)``) traces to the same program
      # when the values are equal, which identity never finds again.
      return (Array, v.aval, v._np.tobytes())
    return IdentityKey(v)
  if t in _SCALARS or t is float or t is complex or isinstance(v, (np.generic, np.dtype)):
    return _value_key(v)
  if t is np.ufunc:
    return IdentityKey(v)
  if t is RefThreading and not v.refs:
    # The ref scopes of an operation whose bodies use no outside refs: what
    # they trace does not depend on which operation's they are.
    return RefThreading
  if t is tuple or t is list:
    # A list by its contents now: reading it is what the trace depends on
    # (the function cannot write it: see _EFFECT_ATTRS).
    return (t, tuple(_pure_value_key(x, depth) for x in v))
  if t is dict:
    return (dict, tuple((k, _pure_value_key(x, depth)) for k, x in v.items()))
  if t is np.ndarray and v.size <= _MAX_KEYED_ELEMENTS:
    return (np.ndarray, v.shape, v.dtype, v.tobytes())
  if t is types.BuiltinFunctionType:
    if not _library_module(getattr(v, "__self__", None) or v):
      raise _Mutable   # ``print``, a bound method of an object
    return IdentityKey(v)
  if isinstance(v, type):
    if _library_module(sys.modules.get(v.__module__)) or v.__module__ == "builtins" or (
        issubclass(v, tuple) and hasattr(v, "_fields")):   # a NamedTuple's constructor
      return IdentityKey(v)
    raise _Mutable
  if depth >= _MAX_DEPTH:
    raise _Mutable
  if t is types.FunctionType or t is functools.partial:
    return _pure_callable_key(v, depth + 1)
  if callable(v) and t.__module__.startswith("openjax.") and callable(getattr(v, "fun", None)):
    # jit wrappers trace once per signature, as JAX's jit does; custom
    # derivative wrappers are as pure as the functions they hold. Other
    # library callables (a vjp's pullback holding its residuals) are made
    # afresh per use: keying them would only keep them alive.
    if not hasattr(v, "lower"):
      for name in ("fun", "jvp", "fwd", "bwd"):
        held = getattr(v, name, None)
        if callable(held):
          _pure_value_key(held, depth + 1)
    return IdentityKey(v)
  raise _Mutable


# code -> (its globals, IdentityKey(code), IdentityKey(globals), whether
# they are the library's, the globals it reads or None): what keying a
# function of that code reads of them, found once (a fresh closure of the
# same code, the common eager call, keyed ~2x faster: two lambdas 9 -> 4.5 us).
_code_plans: dict = {}


def _code_plan(code, glob) -> tuple:
  plan = _code_plans.get(code)
  if plan is None or plan[0] is not glob:
    library = glob.get("__name__", "").startswith("openjax.")
    plan = _code_plans[code] = (glob, IdentityKey(code), IdentityKey(glob), library,
                                None if library else _effect_free_reads(code))
  return plan


def _pure_callable_key(fun, depth: int):
  if type(fun) is functools.partial:
    return (functools.partial, _pure_value_key(fun.func, depth),
            tuple(_pure_value_key(a, depth) for a in fun.args),
            tuple(sorted((k, _pure_value_key(v, depth)) for k, v in fun.keywords.items())))
  glob = fun.__globals__
  _, code_key, glob_key, library, reads = _code_plan(fun.__code__, glob)
  closure = fun.__closure__
  if library:
    # Library code (a transformation's wrapper): effect-free, its globals
    # are the library's; what the user gave it is in its closure.
    return (code_key, tuple(_pure_value_key(c.cell_contents, depth) for c in closure or ()),
            _pure_value_key(fun.__defaults__, depth))
  if reads is None:
    raise _Mutable
  parts = []
  for n in reads:
    if type(n) is tuple:   # (global, "random"): that global's random module
      name, attr = n
      if not _library_module(getattr(glob.get(name), attr, None)):
        raise _Mutable
    elif n in glob:
      v = glob[n]
      if type(v) is types.ModuleType:   # the common global (``jnp``), inline
        if not _library_module_cached(v):
          raise _Mutable
        parts.append((n, v))
      else:
        parts.append((n, _pure_value_key(v, depth)))
    elif n not in _PURE_BUILTINS:
      raise _Mutable
  defaults, kwdefaults = fun.__defaults__, fun.__kwdefaults__
  return (code_key, glob_key, tuple(parts),
          closure and tuple(_pure_value_key(c.cell_contents, depth) for c in closure),
          defaults and _pure_value_key(defaults, depth),
          kwdefaults and tuple(sorted((k, _pure_value_key(v, depth))
                                      for k, v in kwdefaults.items())))


# How many arrays keys have held by identity (``keys_arrays``); a count, not
# a flag, so that no lock is needed: a race only misreports the hint.
_arrays_keyed = 0


def keys_arrays(fun) -> tuple:
  """``(pure_fun_key(fun), whether that key holds an array by identity)``:
  such a key may never come back (a closure over an array computed afresh
  each call). The key may be unhashable: the caller's lookup raises
  TypeError then (``TraceCache.find``)."""
  before = _arrays_keyed
  try:
    # Not hashed here: the caller's cache lookup hashes it (and raises
    # TypeError for an unhashable part): one hash of four IdentityKeys less.
    key = _pure_value_key(fun, 0)
  except (_Mutable, ValueError, TypeError, RecursionError):
    key = None
  return key, _arrays_keyed != before


def pure_fun_key(fun):
  """A hashable key standing for everything calling ``fun`` depends on
  besides its arguments, or None when ``fun`` may have an effect (a print, a
  write to an outer variable, a call of an unknown object): see
  ``_PURE_BUILTINS`` above. Module-level functions are keyed by their code
  and the globals they read too, so rebinding a global traces again, as
  JAX's eager transformations (which trace every call) would see."""
  try:
    key = _pure_value_key(fun, 0)
    hash(key)
    return key
  except (_Mutable, ValueError, TypeError, RecursionError):
    return None


def avals_key(avals) -> tuple:
  """``avals`` as a key part, with the manual axes each varies over (inside a
  ``shard_map``, part of a value's type that aval equality leaves out)."""
  return tuple((a, v) if (v := getattr(a, "vma", None)) else a for a in avals)


def fun_key(fun):
  """A hashable key standing for what tracing ``fun`` depends on besides its
  arguments' types (see the module docstring)."""
  if type(fun) is types.FunctionType and fun.__closure__ is None \
      and "<locals>" not in fun.__qualname__:
    return IdentityKey(fun)   # a module-level function: called again as itself, as JAX keys it
  key = pure_fun_key(fun)
  return IdentityKey(fun) if key is None else key


def _nbytes(consts) -> int:
  total = 0
  for c in consts:
    try:
      total += int(c.nbytes)
    except (AttributeError, TypeError):
      pass
  return total


class TraceCache:
  """A bounded map of traces: ``get(key)``/``put(key, value, consts)``; the
  oldest entries go first (a plain dict: a hit hashes its key once). The
  constants the traces hold (closed-over arrays) count against
  ``MAX_BYTES``: a loop closing over new parameters each step must not keep
  the old ones alive."""

  def __init__(self, max_entries: int = MAX_ENTRIES, max_bytes: int = MAX_BYTES):
    self._entries: dict = {}   # key -> (value, bytes of its constants)
    self._max, self._max_bytes, self._bytes = max_entries, max_bytes, 0

  def get(self, key):
    try:
      hit = self._entries.get(key)
    except TypeError:   # an unhashable part of the key
      return None
    return None if hit is None else hit[0]

  def find(self, key):
    """``get`` that raises TypeError for an unhashable key."""
    hit = self._entries.get(key)
    return None if hit is None else hit[0]

  def put(self, key, value, consts=()) -> None:
    nbytes = _nbytes(consts)
    if nbytes > self._max_bytes // 4:
      return
    try:
      old = self._entries.pop(key, None)
      self._entries[key] = (value, nbytes)
    except TypeError:
      return
    self._bytes += nbytes - (old[1] if old is not None else 0)
    while len(self._entries) > self._max or self._bytes > self._max_bytes:
      _, (_, b) = self._pop_oldest()
      self._bytes -= b

  def _pop_oldest(self):
    k = next(iter(self._entries))
    return k, self._entries.pop(k)

  def clear(self) -> None:
    self._entries.clear()
    self._bytes = 0
