"""Sharded ``jit``: the SPMD partition of a jaxpr over a mesh (DESIGN 10, 13).

Every value of the (flattened) jaxpr gets a layout: a spec (mesh axes per
dimension) and, for partial sums, the mesh axes its per-device pieces still
have to be summed over. Layouts come from the arguments' shardings and flow
through the primitives' sharding rules (Auto axes included). Each device
runs the same per-device program on its pieces (local shapes), compiled
once and dispatched on every device's stream, so devices run concurrently.
Where the partition needs data from other devices (a partial sum consumed
by a non-linear operation, a gather for an operation without a local
form) the program is split there: the parts before it run, the collective
is done on the host with NumPy on their results (all-reduce: sum the
pieces; all-gather: assemble), and the next part continues. A replicated
value needed split is sliced inside the part (each device's mesh
coordinates are an input of its program), which costs no split.
"""
from __future__ import annotations

import math

import numpy as np

from openjax._src.control.spmd_collectives import host_relayout
from openjax._src.control.spmd_donation import consumed_inputs, own_pieces, segment_donations
from openjax._src.control.spmd_labels import as_first_argument, compiler_spec
from openjax._src.control.spmd_local import dot_gathered_specs, is_local
from openjax._src.core import Array, ClosedJaxpr, Literal, ShapedArray, Var, eval_jaxpr
from openjax._src.core.array import ShardedBuffer, sharded_array_of_shards
from openjax._src.core.mesh import AxisType, Mesh
from openjax._src.core.placement import commit
from openjax._src.core.sharding import NamedSharding, PartitionSpec, aval_sharding, dim_axes
from openjax._src.core.sharding_rules import is_elementwise_rule, is_replicated, spec_of
from openjax._src.errors import ShardingTypeError
from openjax._src.interpreters.staging import trace_to_jaxpr
from openjax._src.primitives.elementwise.arithmetic import add, mul
from openjax._src.primitives.index.dynamic_slicing import dynamic_slice
from openjax._src.primitives.shape.sharding_constraint import constraint_spec
from openjax._src.runtime.executable import execute_per_device
from openjax._src.runtime.pipeline import compile_lowered, compiling, lower_closed_jaxpr
from openjax._src.runtime.sharded_arrays import put_sharded

# Partial sums flow through these (linear in the partial operand).
_PARTIAL_LINEAR = frozenset(["neg", "convert_element_type", "transpose", "reduce_sum",
                             "broadcast_in_dim", "reshape", "squeeze", "copy"])
_PARTIAL_REDUCERS = {"reduce_sum": "sum", "reduce_max": "max", "reduce_min": "min",
                     "reduce_prod": "prod", "reduce_and": "and", "reduce_or": "or"}
# Primitives whose per-device form is the primitive itself on local shapes
# (shape parameters rescaled below), given the layout their rule gives.


class Layout:
  """A value's layout: ``spec`` (one entry per dimension) and ``partial``
  (the mesh axes still to combine with ``op``)."""
  __slots__ = ("spec", "partial", "op")

  def __init__(self, spec: tuple, partial: frozenset = frozenset(), op: str | None = None):
    self.spec, self.partial, self.op = tuple(spec), frozenset(partial), op

  def __eq__(self, other):
    return (self.spec, self.partial, self.op) == (other.spec, other.partial, other.op)

  def __hash__(self):
    return hash((self.spec, self.partial, self.op))


def _replicated(ndim: int) -> Layout:
  return Layout((None,) * ndim)


class _Const:
  """A constant operand of the flattened program (a literal or a constvar's value)."""
  __slots__ = ("val", "weak_type")

  def __init__(self, val, weak_type: bool = False):
    self.val, self.weak_type = val, weak_type


def _inlined_jaxpr(eqn) -> ClosedJaxpr | None:
  """The sub-jaxpr a call computes, for the calls whose value is just their
  sub-jaxpr's (jit, custom derivatives and checkpoint without their rules),
  which the partition sees through; None for other equations."""
  name, params = eqn.primitive.name, eqn.params
  if name == "jit":
    return params["jaxpr"]
  if name in ("custom_jvp_call", "custom_vjp_call"):
    return params["call_jaxpr"]
  if name == "remat2":
    return ClosedJaxpr(params["jaxpr"], [])
  return None


def flatten_eqns(closed: ClosedJaxpr, in_keys: list, inlined: bool = False
                 ) -> tuple[list, list]:
  """The jaxpr's equations with nested calls inlined: a list of
  (primitive, operand keys, result keys, params), and the output keys.
  Keys are Vars; constants are ``_Const``s. An inlined sub-jaxpr's results
  get fresh Vars: one jaxpr object may be called several times (a cached
  ``relu`` per shape), and its calls' values must stay apart."""
  env = {}
  jaxpr = closed.jaxpr
  for v, c in zip(jaxpr.constvars, closed.consts):
    env[v] = _Const(c)
  for v, k in zip(jaxpr.invars, in_keys):
    env[v] = k
  out = []

  def read(a):
    return _Const(a.val, a.aval.weak_type) if isinstance(a, Literal) else env[a]
  for eqn in jaxpr.eqns:
    ins = [read(a) for a in eqn.invars]
    inner = _inlined_jaxpr(eqn)
    if inner is not None:
      eqns, outs = flatten_eqns(inner, ins, inlined=True)
      out.extend(eqns)
      for v, k in zip(eqn.outvars, outs):
        env[v] = k
      continue
    keys = [Var(v.aval) for v in eqn.outvars] if inlined else list(eqn.outvars)
    for v, k in zip(eqn.outvars, keys):
      env[v] = k
    out.append((eqn.primitive, ins, keys, eqn.params))
  return out, [read(a) for a in jaxpr.outvars]


class _Segment:
  """A run of equations every device computes on its own pieces."""

  def __init__(self):
    self.ops = []           # ("eqn", prim, ins, outs, params) | ("slice", src, dst, spec)
    self.defined = set()
    self.inputs = []        # keys read from outside, in order
    self.outputs = []       # keys later steps read
    self.closed = None       # the per-device program (local shapes)
    self.executable = None
    self.needs_coords = False


class SpmdPlan:
  """The partition of one jaxpr for one mesh and argument layouts."""

  def __init__(self, closed: ClosedJaxpr, mesh, in_layouts: list, out_specs: list | None,
               name: str):
    self.mesh, self.name = mesh, name
    # Results' layouts were asked for (or are types, over Explicit axes):
    # the lowered text shows them, as JAX's does.
    self._results_fixed = out_specs is not None or mesh._any_axis_explicit
    self.sizes = dict(mesh.shape)
    self.devices = mesh._flat_devices_tuple
    self.in_keys = list(closed.jaxpr.invars)
    self.avals = {}
    self.layouts = {}
    for v, lay in zip(self.in_keys, in_layouts):
      self.avals[v] = v.aval
      self.layouts[v] = lay
    eqns, self.out_keys = flatten_eqns(closed, self.in_keys)
    self._result_vars = list(self.out_keys)
    if out_specs is None and all(t is AxisType.Explicit for t in mesh.axis_types):
      # Over Explicit axes the results' types are their layouts.
      out_specs = [spec_of(a) for a in closed.out_avals]
    self.steps = []
    self._donation = None   # (consumed argument positions, segment donations), first run
    self._reduced_of = {}   # partial value -> its reduced copy
    self._foreign = {}      # value -> a constraint's sharding over another mesh
    self._seg = _Segment()
    self._uses = self._count_uses(eqns)
    for i, (prim, ins, outs, params) in enumerate(eqns):
      self._plan_eqn(i, prim, ins, outs, params)
    # Results: partial sums reduced, then laid out as asked.
    finals = []
    for j, k in enumerate(self.out_keys):
      if isinstance(k, _Const):
        finals.append(k)
        continue
      k = self._reduced_of.get(k, k)
      lay = self.layouts[k]
      if lay.partial:
        k = self._host(k, Layout(lay.spec))
        lay = self.layouts[k]
      if out_specs is not None and out_specs[j] is not None and out_specs[j] != lay.spec:
        k = self._relayout(k, Layout(out_specs[j]), len(eqns))
      finals.append(k)
    self.out_keys = finals
    self._close()
    self._wire()
    # All whole everywhere (jit under set_mesh): one device computes (callbacks once, as JAX)
    self._one_computes = all(not lay.partial and is_replicated(lay.spec) for lay in
                             self.layouts.values()) and all(
        k == "segment" and not r[0].needs_coords for k, *r in self.steps)

  # ---- planning ----
  def _count_uses(self, eqns) -> dict:
    uses = {}
    for i, (_, ins, _, _) in enumerate(eqns):
      for k in ins:
        if not isinstance(k, _Const):
          uses.setdefault(k, []).append(i)
    for k in self.out_keys:
      if not isinstance(k, _Const):
        uses.setdefault(k, []).append(len(eqns))
    return uses

  def _layout(self, k, aval) -> Layout:
    if isinstance(k, _Const):
      return _replicated(len(aval.shape))
    return self.layouts[k]

  def _aval(self, k):
    if isinstance(k, _Const):
      v = k.val
      return ShapedArray(np.shape(v), np.result_type(v) if not hasattr(v, "aval")
                         else v.aval.dtype)
    return self.avals[k]

  def _local_shape(self, shape, spec) -> tuple:
    return tuple(n // math.prod(self.sizes[a] for a in dim_axes(p)) for n, p in zip(shape, spec))

  def _sharded_aval(self, aval, spec):
    if is_replicated(spec):
      return aval.update(sharding=None) if aval.sharding is not None else aval
    return ShapedArray(aval.shape, aval.dtype, aval.weak_type,
                       NamedSharding(self.mesh, PartitionSpec(*spec)))

  def _divisible(self, shape, spec) -> bool:
    return all(n % math.prod(self.sizes[a] for a in dim_axes(p)) == 0
               for n, p in zip(shape, spec))

  def _plan_eqn(self, i, prim, ins, outs, params):
    reduced = self._reduced_of
    if reduced:   # values reduced at an earlier split are read reduced
      ins = [reduced.get(k, k) if not isinstance(k, _Const) else k for k in ins]
    avals = [self._aval(k) for k in ins]
    lays = [self._layout(k, a) for k, a in zip(ins, avals)]
    out_avals = [v.aval for v in outs]
    name = prim.name
    for v in outs:
      self.avals[v] = v.aval
    if name in ("sharding_constraint", "reshard"):
      sharding = params["sharding"]
      if sharding.mesh != self.mesh and sharding.mesh != self.mesh.abstract_mesh:
        # Another mesh over these devices: the value is whole here, and laid
        # out by ``sharding`` if it is a result.
        target = _replicated(len(avals[0].shape))
        self._foreign[outs[0]] = sharding
      else:
        target = Layout(constraint_spec(sharding, len(avals[0].shape)))
      src = self._reduced(ins[0], i)
      dst = self._relayout(src, target, i) if self.layouts[src] != target else src
      self._alias(outs[0], dst)
      return
    # Partial sums through linear operations.
    if any(l.partial for l in lays):
      lay = self._partial_through(prim, ins, lays, avals, out_avals, params)
      if lay is not None:
        self._emit(prim, ins, outs, params, [lay])
        return
      ins = [self._reduced(k, i) if not isinstance(k, _Const) and self.layouts[k].partial
             else k for k in ins]
      lays = [self._layout(k, a) for k, a in zip(ins, avals)]
    specs = [l.spec for l in lays]
    if all(is_replicated(s) for s in specs):
      self._emit(prim, ins, outs, params, [_replicated(len(a.shape)) for a in out_avals])
      return
    out_lays = self._local_layouts(prim, ins, specs, avals, out_avals, params)
    if out_lays is None and name == "dot_general":
      ins, out_lays = self._dot_contracting_whole(i, ins, specs, avals, out_avals, params)
    if out_lays is None:
      # No per-device form: gather the operands, compute whole on every device.
      ins = [k if isinstance(k, _Const) or is_replicated(self.layouts[k].spec)
             else self._relayout(k, _replicated(len(a.shape)), i) for k, a in zip(ins, avals)]
      out_lays = [_replicated(len(a.shape)) for a in out_avals]
    self._emit(prim, ins, outs, params, out_lays)

  def _partial_through(self, prim, ins, lays, avals, out_avals, params):
    name = prim.name
    partial = [l for l in lays if l.partial]
    first = partial[0]
    if first.op != "sum" or any(l.partial != first.partial or l.op != "sum" for l in partial):
      return None
    if name in ("add", "sub", "add_any"):
      if len(partial) != len(ins) or any(l.spec != first.spec for l in lays):
        return None
      return Layout(first.spec, first.partial, "sum")
    if name in ("mul", "div", "dot_general"):
      if len(partial) != 1 or (name == "div" and not lays[0].partial):
        return None
      # The other operand must be the same on every device the partial sum
      # spans (a product distributes over the sum only then).
      if any(a in first.partial for l in lays for p in l.spec for a in dim_axes(p)):
        return None
      if name == "dot_general":
        out = self._dot_layout(ins, [l.spec for l in lays], avals, params)
        if out is None:
          return None
        return Layout(out.spec, out.partial | first.partial, "sum")
      spec = self._elementwise_spec(ins, [l.spec for l in lays], avals, out_avals)
      if spec is None or any(l.spec != spec and avals[j].shape == out_avals[0].shape
                             for j, l in enumerate(lays)):
        return None
      return Layout(spec, first.partial, "sum")
    if name in _PARTIAL_LINEAR:
      if name == "convert_element_type" and np.dtype(params["new_dtype"]).kind not in "fc":
        return None
      if len(ins) != 1:
        return None
      out = self._local_layouts(prim, ins, [first.spec], avals, out_avals, params)
      if out is None or (out[0].partial and out[0].op != "sum"):
        return None
      return Layout(out[0].spec, out[0].partial | first.partial, "sum")
    return None

  def _elementwise_spec(self, ins, specs, avals, out_avals):
    shape = out_avals[0].shape
    out = [None] * len(shape)
    for spec, aval in zip(specs, avals):
      if len(aval.shape) != len(shape):
        continue
      for d, p in enumerate(spec):
        if p is None or aval.shape[d] != shape[d]:
          continue
        if out[d] is None:
          out[d] = p
        elif out[d] != p:
          return None
    return tuple(out)

  def _dot_layout(self, ins, specs, avals, params):
    (lc, rc), (lb, rb) = params["dimension_numbers"]
    ls, rs = specs
    if tuple(ls[d] for d in lb) != tuple(rs[d] for d in rb):
      return None
    lcs, rcs = tuple(ls[d] for d in lc), tuple(rs[d] for d in rc)
    if lcs != rcs:
      return None
    partial = frozenset(a for p in lcs for a in dim_axes(p))
    out = (tuple(ls[d] for d in lb) + tuple(p for d, p in enumerate(ls) if d not in lc + lb)
           + tuple(p for d, p in enumerate(rs) if d not in rc + rb))
    used = [a for p in out for a in dim_axes(p)]
    if len(used) != len(set(used)) or partial & set(used):
      return None
    return Layout(out, partial, "sum" if partial else None)

  def _dot_contracting_whole(self, i, ins, specs, avals, out_avals, params):
    """A dot per device once some operand dimensions are gathered
    (``dot_gathered_specs``), or (ins, None)."""
    for targets in dot_gathered_specs(specs, params):
      lay = self._dot_layout(ins, targets, avals, params)
      if lay is not None and self._divisible(out_avals[0].shape, lay.spec):
        return [k if isinstance(k, _Const) or spec == target
                else self._relayout(k, Layout(target), i)
                for k, spec, target in zip(ins, specs, targets)], [lay]
    return ins, None

  def _local_layouts(self, prim, ins, specs, avals, out_avals, params):
    """Result layouts when ``prim`` runs per device on operands relaid as
    needed (the relayouts are emitted here), or None (no per-device form)."""
    name = prim.name
    if name == "dot_general":
      lay = self._dot_layout(ins, specs, avals, params)
      if lay is None:
        # Contract whole: gather the operands' contracting dimensions.
        return None
      return [lay]
    if name in _PARTIAL_REDUCERS or name in ("argmax", "argmin"):
      axes = params["axes"]
      reduced = frozenset(a for d in axes for a in dim_axes(specs[0][d]))
      if reduced and name in ("argmax", "argmin"):
        return None
      keep = tuple(p for d, p in enumerate(specs[0]) if d not in axes)
      return [Layout(keep, reduced, _PARTIAL_REDUCERS.get(name) if reduced else None)]
    rule = prim.sharding_rule
    if rule is None:
      return None
    elementwise = is_elementwise_rule(rule)
    if not elementwise and not is_local(name, specs, params):
      return None
    sh_avals = [self._sharded_aval(a, s) for a, s in zip(avals, specs)]
    try:
      out_specs = rule(specs, sh_avals, out_avals, **params)
    except ShardingTypeError:
      return None
    if not all(self._divisible(a.shape, s) for a, s in zip(out_avals, out_specs)):
      return None
    if name == "broadcast_in_dim":
      # Each device broadcasts its own piece: the operand's dimensions split
      # as the result's.
      for i, d in enumerate(params["broadcast_dimensions"]):
        want = out_specs[0][d] if avals[0].shape[i] == out_avals[0].shape[d] else None
        if specs[0][i] != want:
          return None
    if name == "reshape":
      n_in = sum(p is not None for p in specs[0])
      if sum(p is not None for p in out_specs[0]) != n_in or params["dimensions"] is not None:
        return None
    if elementwise:
      # Operands of the result's shape are relaid to its layout in-segment
      # (when each only needs a local slice of its pieces).
      slices = []
      for j, (k, a) in enumerate(zip(ins, avals)):
        if len(a.shape) == len(out_avals[0].shape) and specs[j] != out_specs[0] and \
            not isinstance(k, _Const):
          target = tuple(p if a.shape[d] == out_avals[0].shape[d] else None
                         for d, p in enumerate(out_specs[0]))
          if target != specs[j]:
            if not self._refines(specs[j], target):
              return None
            slices.append((j, target))
      for j, target in slices:
        ins[j] = self._slice_in_segment(ins[j], target)
    return [Layout(s) for s in out_specs]

  def _emit(self, prim, ins, outs, params, out_lays):
    for v, lay in zip(outs, out_lays):
      self.layouts[v] = lay
    self._seg.ops.append(("eqn", prim, list(ins), list(outs), params))
    self._seg.defined.update(outs)

  def _alias(self, v, k):
    if k in self._foreign:
      self._foreign[v] = self._foreign[k]
    self.layouts[v] = self.layouts[k]
    self.avals[v] = self.avals[k]
    self._seg.ops.append(("alias", k, v))
    self._seg.defined.add(v)

  @staticmethod
  def _refines(src: tuple, dst: tuple) -> bool:
    """Whether each device's ``dst`` piece lies inside its ``src`` piece
    (every dimension's source axes lead its target axes): a local slice."""
    return all(dim_axes(d)[:len(dim_axes(s))] == dim_axes(s) for s, d in zip(src, dst))

  def _slice_in_segment(self, k, spec):
    dst = ("sliced", k, spec)
    if dst not in self.layouts:
      self.layouts[dst] = Layout(spec)
      self.avals[dst] = self.avals[k]
      self._seg.ops.append(("slice", k, dst, spec))
      self._seg.defined.add(dst)
      self._seg.needs_coords = True
    return dst

  def _reduced(self, k, i):
    """``k`` with its partial sums combined; reduces every pending partial
    value live past equation ``i`` in the same host step."""
    if isinstance(k, _Const) or not self.layouts[k].partial:
      return k
    reduced = self._reduced_of
    if k in reduced:
      return reduced[k]
    pending = [p for p in list(self.layouts) if self.layouts[p].partial and p not in reduced
               and not isinstance(p, tuple) and any(u >= i for u in self._uses.get(p, ()))]
    if k not in pending:
      pending.append(k)
    for p in pending:
      reduced[p] = self._host(p, Layout(self.layouts[p].spec))
    return reduced[k]

  def _relayout(self, k, target: Layout, i):
    lay = self.layouts[k]
    if lay == target:
      return k
    if not lay.partial and not target.partial and self._refines(lay.spec, target.spec):
      return self._slice_in_segment(k, target.spec)
    return self._host(k, target)

  def _host(self, k, target: Layout):
    """A host collective: ends the current part."""
    self._close()
    dst = ("host", k, target)
    self.layouts[dst] = target
    self.avals[dst] = self.avals[k]
    self.steps.append(("host", k, dst))
    return dst

  def _close(self):
    if self._seg.ops:
      self.steps.append(("segment", self._seg))
      self._seg = _Segment()

  def _wire(self):
    """Each part's inputs (read from earlier steps) and outputs (read later)."""
    needed_later = set(k for k in self.out_keys if not isinstance(k, _Const))
    for kind, *rest in reversed(self.steps):
      if kind == "host":
        needed_later.add(rest[0])
        continue
      seg = rest[0]
      reads = []
      for op in seg.ops:
        srcs = op[2] if op[0] == "eqn" else [op[1]]
        for s in srcs:
          if not isinstance(s, _Const) and s not in seg.defined and s not in reads:
            reads.append(s)
      seg.outputs = [k for k in self._ordered(seg) if k in needed_later]
      needed_later -= seg.defined
      needed_later.update(reads)
      seg.inputs = reads

  @staticmethod
  def _ordered(seg) -> list:
    out = []
    for op in seg.ops:
      out.extend(op[3] if op[0] == "eqn" else [op[2]])
    return out

  # ---- compiling ----
  def _local_aval(self, k):
    aval, lay = self.avals[k], self.layouts[k]
    return ShapedArray(self._local_shape(aval.shape, lay.spec), aval.dtype, aval.weak_type)

  def _compile(self, seg: _Segment):
    n_axes = len(self.sizes)
    in_avals = [self._local_aval(k) for k in seg.inputs]
    if seg.needs_coords:
      in_avals.append(ShapedArray((n_axes,), np.dtype(np.int32)))

    def local_program(*args):
      env = dict(zip(seg.inputs, args))
      coords = args[-1] if seg.needs_coords else None

      def read(k):
        if isinstance(k, _Const):
          v = k.val
          # Constants are whole on every device: typed so in per-device programs.
          return v._value if type(v) is Array and v.aval.sharding is not None else v
        return env[k]
      for op in seg.ops:
        if op[0] == "alias":
          env[op[2]] = env[op[1]]
        elif op[0] == "slice":
          env[op[2]] = self._local_slice(read(op[1]), self.avals[op[1]],
                                         self.layouts[op[1]].spec, op[3], coords)
        else:
          _, prim, ins, outs, params = op
          vals = prim.bind(*[read(k) for k in ins], **self._local_params(prim, outs, params))
          for v, x in zip(outs, vals):
            env[v] = x
      return [env[k] for k in seg.outputs]
    jaxpr, consts = trace_to_jaxpr(local_program, in_avals)
    seg.closed = ClosedJaxpr(jaxpr, consts)

  def _run_segment(self, seg: _Segment, per_device: list, devices) -> list:
    """``seg`` on each of ``devices``' pieces: compiled (``execute_per_device``),
    or interpreted (the ``interpreter`` executor) and committed to the device."""
    if seg.closed is None:
      self._compile(seg)
    if not compiling():
      closed = seg.closed
      return [commit(eval_jaxpr(closed.jaxpr, closed.consts, *args), device)
              for args, device in zip(per_device, devices)]
    if seg.executable is None:
      donated = self._donation[1].get(id(seg)) if self._donation else None
      if donated is not None:
        donated = donated + (False,) * seg.needs_coords
      seg.executable = compile_lowered(lower_closed_jaxpr(
          seg.closed, f"{self.name}_spmd", donated))
    return execute_per_device(seg.executable, per_device, devices)

  def _local_slice(self, x, aval, src_spec, spec, coords):
    """This device's ``spec`` piece of ``x``, its ``src_spec`` piece."""
    names = list(self.sizes)
    local = self._local_shape(aval.shape, spec)
    starts = []
    for d, p in enumerate(spec):
      # The axes the source already split over choose the source piece.
      axes = dim_axes(p)[len(dim_axes(src_spec[d])):]
      if not axes:
        starts.append(0)
        continue
      chunk = None
      for a in axes:
        c = coords[names.index(a)]
        chunk = c if chunk is None else add(mul(chunk, np.int32(self.sizes[a])), c)
      starts.append(mul(chunk, np.int32(local[d])))
    return dynamic_slice(x, starts, local)

  def _local_params(self, prim, outs, params):
    name = prim.name
    # Per-device programs work on local pieces, untyped: a global layout
    # asked of a result (a transpose's broadcast, an iota) is the plan's.
    if params.get("sharding") is not None or params.get("out_sharding") is not None:
      params = {k: None if k in ("sharding", "out_sharding") else v for k, v in params.items()}
    if name == "broadcast_in_dim":
      return dict(params, shape=self._local_aval(outs[0]).shape)
    if name == "reshape":
      return dict(params, new_sizes=self._local_aval(outs[0]).shape)
    return params

  # ---- running ----
  def run(self, leaves: list, donated: tuple | None = None) -> list:
    """The results of the call on ``leaves``; arguments flagged in
    ``donated`` (the same flags every call of this plan) are consumed as
    JAX consumes them (see spmd_donation)."""
    n = len(self.devices)
    consumed = ()
    if donated is not None and any(donated):
      if self._donation is None:
        consumed = consumed_inputs(self, donated)
        self._donation = (consumed, segment_donations(self, consumed))
      consumed = self._donation[0]
    env = {}
    for i, (k, x) in enumerate(zip(self.in_keys, leaves)):
      pieces = self._pieces(x, self.layouts[k], self.avals[k])
      if i in consumed and not own_pieces(x, pieces):
        # Shared by devices (or by the caller): a donating part gets copies.
        pieces = [np.asarray(p) for p in pieces]
      env[k] = pieces
    coords = self._coords()
    for kind, *rest in self.steps:
      if kind == "host":
        src, dst = rest
        s, d = self.layouts[src], self.layouts[dst]
        pieces = host_relayout(env[src], self.mesh, s.spec, s.partial, s.op, d.spec,
                               self.avals[src])
        env[dst] = [self._host_piece(v, src, dev) for v, dev in zip(pieces, self.devices)]
        continue
      seg = rest[0]
      m = 1 if self._one_computes else n
      per_device = [[env[k][d] for k in seg.inputs] + ([coords[d]] if seg.needs_coords else [])
                    for d in range(m)]
      outs = self._run_segment(seg, per_device, self.devices[:m])
      for j, k in enumerate(seg.outputs):
        env[k] = [outs[d % m][j] for d in range(n)]
    outs = [self._assemble(k, env) for k in self.out_keys]
    if not self._results_fixed and leaves:
      outs = as_first_argument(outs, leaves[0], self.mesh)
    for i in consumed:
      if type(leaves[i]) is Array:
        leaves[i].delete()
    if self._foreign:
      outs = [put_sharded(x, self._foreign[k]) if k in self._foreign else x
              for k, x in zip(self._result_vars, outs)]
    return outs

  def _host_piece(self, v, k, device) -> Array:
    """A host collective's piece for ``device``: an Array of it, so a part
    reading it imports it once (without a copy when aligned) rather than
    copying a raw NumPy input on every call."""
    if type(v) is not np.ndarray:
      return v
    if v.flags.writeable:
      v.setflags(write=False)
    return Array(v, ShapedArray(v.shape, v.dtype, self.avals[k].weak_type), device)

  def _coords(self) -> list:
    names, out = list(self.sizes), []
    for flat in range(len(self.devices)):
      pos, rest = [], flat
      for name in reversed(names):
        rest, p = divmod(rest, self.sizes[name])
        pos.append(p)
      out.append(np.array(pos[::-1], np.int32))
    return out

  def _pieces(self, x, lay: Layout, aval) -> list:
    """Each device's piece of argument ``x`` laid out by ``lay``."""
    if type(x) is Array and type(x._buffer) is ShardedBuffer and \
        x._buffer.sharding._device_assignment == self.devices and \
        tuple(x._buffer.sharding.spec._normalized_spec_for_aval(len(aval.shape))) == lay.spec:
      return list(x._buffer.shards)
    if is_replicated(lay.spec):
      if type(x) is Array and type(x._buffer) is ShardedBuffer:
        x = x._value
      return [x] * len(self.devices)
    value = x._value if type(x) is Array else np.asarray(x)
    indices = NamedSharding(self.mesh, PartitionSpec(*lay.spec))._indices(np.shape(value))
    return [value[index] for index in indices]

  # ---- what the AOT stages show ----
  def reported_sharding(self, spec: tuple) -> NamedSharding:
    """The NamedSharding JAX reports for a value laid out by ``spec``."""
    if not self.mesh._any_axis_explicit:
      # Over Auto axes JAX reports the layout the compiler chose, trailing
      # whole dimensions left out (P('x',) for P('x', None)).
      while spec and spec[-1] is None:
        spec = spec[:-1]
    return NamedSharding(self.mesh, PartitionSpec(*spec))

  def input_shardings(self) -> list:
    return [self.reported_sharding(self.layouts[k].spec) for k in self.in_keys]

  def output_shardings(self) -> list:
    out = []
    for k in self.out_keys:
      spec = (None,) * len(np.shape(k.val)) if isinstance(k, _Const) else self.layouts[k].spec
      out.append(self.reported_sharding(compiler_spec(spec, self.mesh)))
    return out

  def annotate(self, text: str) -> str:
    """``text`` (the whole program's StableHLO) with the mesh and the
    arguments' and results' shardings as JAX prints them (Shardy)."""
    names = list(self.sizes)
    mesh = ", ".join(f'"{a}"={self.sizes[a]}' for a in names)
    axes = ", ".join(f'{{name = "{a}", size = {self.sizes[a]} : i64}}' for a in names)
    lines = text.split("\n")
    out = []
    for line in lines:
      if line.startswith("module @") and line.endswith("{"):
        out.append(f"{line[:-1]}attributes {{mhlo.num_partitions = {len(self.devices)} : i32, "
                   "mhlo.num_replicas = 1 : i32} {")
        out.append(f"  sdy.mesh @mesh = <[{mesh}]> {{stablehlo.mesh = {{axes = [{axes}]}}}}")
        continue
      if line.lstrip().startswith("func.func public @main("):
        line = self._annotate_signature(line)
      out.append(line)
    return "\n".join(out)

  def _annotate_signature(self, line: str) -> str:
    head, _, results = line.partition(") -> ")
    prefix, _, params = head.partition("@main(")
    args = params.split(", %")
    new_args = []
    for i, a in enumerate(args):
      a = a if i == 0 else "%" + a
      if i < len(self.in_keys) and not is_replicated(self.layouts[self.in_keys[i]].spec):
        a += f" {{sdy.sharding = {self._sdy(self.layouts[self.in_keys[i]].spec)}}}"
      new_args.append(a)
    results = results[:-2] if results.endswith(" {") else results
    tuple_ = results.startswith("(")
    types = results[1:-1].split(", ") if tuple_ else [results]
    specs = [None if isinstance(k, _Const) else self.layouts[k].spec for k in self.out_keys]
    new_types = [t if spec is None or is_replicated(spec) or not self._results_fixed
                 else f"{t} {{sdy.sharding = {self._sdy(spec)}}}"
                 for t, spec in zip(types, specs)]
    shown = ", ".join(new_types)
    shown = f"({shown})" if tuple_ or shown != results else shown
    return f"{prefix}@main({', '.join(new_args)}) -> {shown} {{"

  @staticmethod
  def _sdy(spec: tuple) -> str:
    dims = ", ".join("{" + ", ".join(f'"{a}"' for a in dim_axes(p)) + "}" for p in spec)
    return f"#sdy.sharding<@mesh, [{dims}]>"

  def _assemble(self, k, env) -> Array:
    if isinstance(k, _Const):
      # (a constant: replicated, spelled P() as its type names no mesh, as JAX's)
      v = k.val
      if type(v) is not Array:
        v = Array(np.asarray(v), ShapedArray(np.shape(v), np.asarray(v).dtype, k.weak_type))
      return put_sharded(v, NamedSharding(self.mesh, PartitionSpec()))
    aval, lay = self.avals[k], self.layouts[k]
    sharding = self.reported_sharding(compiler_spec(lay.spec, self.mesh))
    shards = []
    for d, p in zip(self.devices, env[k]):
      if type(p) is not Array or p._device is not d:
        value = np.asarray(p)
        p = Array(value, ShapedArray(value.shape, value.dtype, aval.weak_type), d)
      shards.append(p)
    out_aval = ShapedArray(aval.shape, aval.dtype, aval.weak_type,
                           aval_sharding(sharding, aval.shape))
    return sharded_array_of_shards(out_aval, sharding, shards)


def _arg_sharding(x):
  """The sharding of argument ``x`` (an Array split over devices, or a
  ``ShapeDtypeStruct`` given one), or None."""
  if type(x) is Array:
    return x._buffer.sharding if type(x._buffer) is ShardedBuffer else None
  s = getattr(x, "sharding", None)
  return s if isinstance(s, NamedSharding) and not isinstance(x, Array) else None


def layout_of(x, mesh, ndim: int) -> Layout:
  """The layout of argument ``x`` over ``mesh`` (replicated unless split on it)."""
  s = _arg_sharding(x)
  if isinstance(s, NamedSharding) and isinstance(s.mesh, Mesh) and \
      s.mesh._flat_devices_tuple == mesh._flat_devices_tuple:
    return Layout(tuple(s.spec._normalized_spec_for_aval(ndim)))
  return _replicated(ndim)


def constraint_mesh(closed: ClosedJaxpr):
  """The mesh of the first layout asked for over several devices in the
  jaxpr (nested ``jit`` calls included): a ``sharding_constraint``, a
  ``reshard``, a result laid out by its ``sharding`` parameter (an iota);
  or None."""
  eqns, _ = flatten_eqns(closed, list(closed.jaxpr.invars))
  for prim, _, _, params in eqns:
    sharding = params.get("sharding")
    if isinstance(sharding, NamedSharding):
      mesh = sharding.mesh
      if isinstance(mesh, Mesh) and mesh.size > 1:
        return mesh
  return None


def mesh_of(leaves: list, shardings: list):
  """The mesh of the first argument or sharding over a mesh (its results
  are laid out over that mesh, as JAX's are, even on one device)."""
  for s in shardings:
    if isinstance(s, NamedSharding) and isinstance(s.mesh, Mesh) and not s.mesh.empty:
      return s.mesh
  for x in leaves:
    s = _arg_sharding(x)
    if isinstance(s, NamedSharding) and isinstance(s.mesh, Mesh) and not s.mesh.empty:
      return s.mesh
  return None


__all__ = ["Layout", "SpmdPlan", "constraint_mesh", "flatten_eqns", "layout_of", "mesh_of"]
