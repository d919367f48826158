"""Import structure, read from the source (AST): every module of ours is
imported under its own name and every module under one name code-base wide;
no names made through ``globals()``; ``primitives/`` is family folders with
no import cycle, each family importing only ``base`` and the families before
it; and each primitive reads as one block: the ``Primitive``, its wrapper,
impl, abstract eval, JVP/transpose/batching rules, lowering."""
from __future__ import annotations

import ast
import collections
import os
import pathlib
import subprocess
import sys

from tests.test_structure import find_cycles

REPO = pathlib.Path(__file__).resolve().parent.parent
PACKAGE = REPO / "openjax"
PRIMITIVES = PACKAGE / "_src" / "primitives"
PRIM = "openjax._src.primitives"

# Each family imports only families before it (DESIGN.md: one bottom module
# of structural primitives every family's rules may use, families in order).
FAMILY_ORDER = ("base", "identity", "shape", "elementwise", "reduce", "index", "dot_conv",
                "random_bits", "fft", "sort", "collectives", "linalg")

# The rule slots of a primitive block, in reading order (equal ranks: any order).
_SLOT_RANK = {"primitive": 0, "wrapper": 1, "impl": 2, "eval_kernel": 2, "abstract_eval": 3,
              "pp": 3, "sharding_rule": 3, "jvp": 4, "transpose": 4, "batch": 4, "lower": 5, "cost": 5}
_BUILDER_SLOT = {"defjvp": "jvp", "defjvp2": "jvp", "deflinear": "jvp", "defjvp_zero": "jvp",
                 "defbroadcasting": "batch", "defvectorized": "batch"}


def _module_name(path: pathlib.Path) -> str:
  parts = list(path.relative_to(REPO).with_suffix("").parts)
  if parts[-1] == "__init__":
    parts.pop()
  return ".".join(parts)


def _is_module(dotted: str) -> bool:
  path = REPO.joinpath(*dotted.split("."))
  return path.with_suffix(".py").exists() or (path / "__init__.py").exists()


def _sources(*folders: str):
  for folder in folders:
    base = REPO / folder
    if base.exists():
      yield from sorted(base.rglob("*.py"))


def _module_bindings(path: pathlib.Path):
  """(line, module, name) for every import that binds a module to a name."""
  for node in ast.walk(ast.parse(path.read_text())):
    if isinstance(node, ast.Import):
      for a in node.names:
        if a.asname:
          yield node.lineno, a.name, a.asname
        else:
          yield node.lineno, a.name.split(".")[0], a.name.split(".")[0]
    elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
      for a in node.names:
        full = f"{node.module}.{a.name}"
        if full.startswith("openjax") and _is_module(full):
          yield node.lineno, full, a.asname or a.name


def test_our_modules_are_imported_under_their_own_name():
  bad = []
  for path in _sources("openjax", "tests", "benchmarks", "tools", "examples"):
    library = path.is_relative_to(PACKAGE)
    for line, module, name in _module_bindings(path):
      ours = module.startswith("openjax" if library else "openjax._src.")
      if ours and name != module.split(".")[-1]:
        bad.append(f"{path.relative_to(REPO)}:{line}: {module} imported as {name!r} "
                   f"(import it as {module.split('.')[-1]!r}, or import the names it uses)")
  assert not bad, "\n".join(bad)


def test_each_module_is_imported_under_one_name():
  names = collections.defaultdict(lambda: collections.defaultdict(list))
  for path in _sources("openjax"):
    for line, module, name in _module_bindings(path):
      names[module][name].append(f"{path.relative_to(REPO)}:{line}")
  bad = [f"{module} is imported as {', '.join(f'{n!r} ({where[0]})' for n, where in by.items())}"
         for module, by in sorted(names.items()) if len(by) > 1]
  assert not bad, "\n".join(bad)


def test_no_names_are_made_through_globals():
  bad = [f"{path.relative_to(REPO)}:{node.lineno}"
         for path in _sources("openjax")
         for node in ast.walk(ast.parse(path.read_text()))
         if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
         and node.func.id == "globals"]
  assert not bad, "globals() makes names grep cannot find: " + ", ".join(bad)


# ------------------------------------------------------------- primitives/
def _primitive_modules() -> dict[str, pathlib.Path]:
  return {_module_name(p): p for p in sorted(PRIMITIVES.rglob("*.py"))}


def _family(module: str) -> str | None:
  parts = module.split(".")
  return parts[3] if len(parts) > 4 else None


def _imported_primitive_modules(path: pathlib.Path, modules) -> set[str]:
  out = set()
  for node in ast.walk(ast.parse(path.read_text())):   # function-level imports too
    if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith(PRIM):
      for a in node.names:
        full = f"{node.module}.{a.name}"
        out.add(full if full in modules else node.module)
    elif isinstance(node, ast.Import):
      out |= {a.name for a in node.names if a.name.startswith(PRIM)}
  return out & set(modules)


def test_primitives_are_family_folders_whose_init_only_documents():
  stray = [p.name for p in PRIMITIVES.glob("*.py") if p.name != "__init__.py"]
  assert not stray, f"modules outside a family folder: {stray}"
  families = {p.name for p in PRIMITIVES.iterdir() if (p / "__init__.py").exists()}
  assert families == set(FAMILY_ORDER), families ^ set(FAMILY_ORDER)
  for init in [PRIMITIVES / "__init__.py", *PRIMITIVES.glob("*/__init__.py")]:
    body = ast.parse(init.read_text()).body
    assert len(body) == 1 and isinstance(body[0], ast.Expr) and \
        isinstance(body[0].value, ast.Constant), f"{init.relative_to(REPO)} holds code"


def test_primitives_have_no_import_cycle():
  modules = _primitive_modules()
  graph = {m: dict.fromkeys(_imported_primitive_modules(p, modules) - {m}, 0)
           for m, p in modules.items()}
  cycles = [cycle for cycle, _ in find_cycles(graph)]
  assert not cycles, f"import cycles in primitives/: {cycles}"


def test_families_import_only_base_and_families_before_them():
  modules = _primitive_modules()
  bad = []
  for module, path in modules.items():
    family = _family(module)
    if family is None:
      continue
    for target in _imported_primitive_modules(path, modules):
      other = _family(target)
      if other and FAMILY_ORDER.index(other) > FAMILY_ORDER.index(family):
        bad.append(f"{module} ({family}) imports {target} ({other}, later in FAMILY_ORDER)")
  assert not bad, "\n".join(bad)


def _primitive_events(tree: ast.Module):
  """(line, primitive, slot) for each rule a module sets on its primitives."""
  prims = {n.targets[0].id for n in tree.body if isinstance(n, ast.Assign)
           and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name)
           and n.targets[0].id.endswith("_p") and isinstance(n.value, ast.Call)}
  events = []
  for node in tree.body:
    if isinstance(node, ast.Assign) and len(node.targets) == 1 and \
        isinstance(node.targets[0], ast.Name) and node.targets[0].id in prims:
      events.append((node.lineno, node.targets[0].id, "primitive"))
    elif isinstance(node, ast.FunctionDef):
      for d in node.decorator_list:
        if isinstance(d, ast.Attribute) and isinstance(d.value, ast.Name) and \
            d.value.id in prims and d.attr.startswith("def_"):
          events.append((node.lineno, d.value.id, d.attr[4:]))
      if not node.decorator_list and not node.name.startswith("_"):
        bound = {n.value.id for n in ast.walk(node) if isinstance(n, ast.Attribute)
                 and n.attr in ("bind", "bind1") and isinstance(n.value, ast.Name)}
        bound |= {a.id for n in ast.walk(node) if isinstance(n, ast.Call)
                  for a in n.args if isinstance(a, ast.Name)}
        events += [(node.lineno, p, "wrapper") for p in sorted(bound & prims)]
    elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
      call = node.value
      if isinstance(call.func, ast.Attribute) and isinstance(call.func.value, ast.Name) and \
          call.func.value.id in prims:
        slot = call.func.attr[4:] if call.func.attr.startswith("def_") else None
        if call.func.attr == "mark_not_applicable" and isinstance(call.args[0], ast.Constant):
          slot = call.args[0].value
        if slot:
          events.append((node.lineno, call.func.value.id, slot))
      elif isinstance(call.func, ast.Name) and call.func.id in _BUILDER_SLOT:
        events += [(node.lineno, a.id, _BUILDER_SLOT[call.func.id]) for a in call.args
                   if isinstance(a, ast.Name) and a.id in prims]
  return prims, sorted(events)


def test_each_primitive_reads_as_one_block_in_order():
  bad = []
  for path in sorted(PRIMITIVES.rglob("*.py")):
    prims, events = _primitive_events(ast.parse(path.read_text()))
    starts = [line for line, _, slot in events if slot == "primitive"]
    for prim in sorted(prims):
      mine = [(line, slot) for line, p, slot in events if p == prim]
      # The first public function binding the primitive is its wrapper; others
      # (rule builders, variants such as lax.dot beside lax.dot_general) may follow.
      wrappers = [i for i, (_, slot) in enumerate(mine) if slot == "wrapper"]
      mine = [e for i, e in enumerate(mine) if e[1] != "wrapper" or i == wrappers[:1][0]]
      ranks = [_SLOT_RANK.get(slot, 9) for _, slot in mine]
      where = f"{path.relative_to(REPO)}: {prim}"
      if ranks != sorted(ranks):
        bad.append(f"{where}: " + ", ".join(f"{slot}@{line}" for line, slot in mine))
      first, last = mine[0][0], mine[-1][0]
      others = [line for line in starts if first < line <= last]
      if others:
        bad.append(f"{where}: another primitive is defined inside its block (line {others[0]})")
  assert not bad, "\n".join(bad)



def test_openblas_threads_sleep_when_openjax_loads_first():
  # openjax/_src/blas_threads.py: set before NumPy (OpenBLAS) loads; a value
  # the user set is kept.
  code = ("import os; import openjax, numpy; "
          "print(os.environ['OPENBLAS_THREAD_TIMEOUT'])")
  env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_THREAD_TIMEOUT"}
  out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                       check=True, timeout=120).stdout.split()
  assert out == ["4"]
  env["OPENBLAS_THREAD_TIMEOUT"] = "20"
  out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                       check=True, timeout=120).stdout.split()
  assert out == ["20"]
