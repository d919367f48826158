"""Structure tests: DESIGN.md's layer order, import cycles, the explicit order
of ``_src/numpy/`` and the size of modules, read from the source (AST) so a
violation fails here before anyone has to find it by hand."""
from __future__ import annotations

import ast
import pathlib

import pytest

import openjax

PACKAGE_ROOT = pathlib.Path(openjax.__file__).parent
MAX_LINES = 800

# DESIGN.md's layer table, bottom-up: a module imports only its own layer and
# those before it. Prefixes are matched longest first.
LAYERS = ("core", "tree_util", "lowering", "primitives", "interpreters", "runtime", "control",
          "transforms", "libraries", "public")
LAYER_OF_PREFIX = {
    "openjax._src.blas_threads": "core",
    "openjax._src.config": "core",
    "openjax._src.dtypes": "core",
    "openjax._src.errors": "core",
    "openjax._src.openblas": "core",
    "openjax._src.core": "core",
    "openjax._src.tree_util": "tree_util",
    "openjax._src.lowering": "lowering",
    "openjax._src.primitives": "primitives",
    "openjax._src.interpreters": "interpreters",
    "openjax._src.runtime": "runtime",
    "openjax._src.control": "control",
    "openjax._src.api": "transforms",
    "openjax._src.numpy": "libraries",
    "openjax._src.lax": "libraries",
    "openjax._src.random": "libraries",
    "openjax._src.scipy": "libraries",
    "openjax._src.nn": "libraries",
    "openjax._src.testing": "libraries",
    "openjax._src.sharding": "libraries",
    "openjax._src.distributed": "libraries",
    "openjax._src.debug": "libraries",
    "openjax._src.alias": "libraries",
    "openjax._src.traceback_util": "core",
    "openjax._src.extend": "libraries",
    "openjax._src.extend_rules": "libraries",
    "openjax._src.layout": "libraries",
    "openjax._src.image": "libraries",
    "openjax._src.flatten_util": "libraries",
    "openjax._src.example_libraries": "libraries",
    "openjax._src.state": "libraries",
    "openjax._src.hijax": "libraries",
}

# ``_src/numpy/``'s internal order: each module imports only modules before it
# (util -> ufuncs -> shape -> indexing -> reductions -> the libraries built on
# them -> array methods). A new module takes its place here.
NUMPY_ORDER = (
    "__init__",
    "util",
    "eager_programs",
    "creation",
    "scalar_types",
    "_ufunc_helpers",
    "ufuncs_bitwise",
    "ufuncs_float",
    "ufuncs",
    "shape_reshaping",
    "shape_joining",
    "indexer",
    "index_plans",
    "index_update",
    "indexing",
    "repeating",
    "reduction_plans",
    "reductions",
    "nan_reductions",
    "misc",
    "statistics",
    "searching",
    "sorting",
    "vectorize",
    "functional",
    "shape_padding",     # pad's stat modes use reductions and median, its callable mode
                         # functional.apply_along_axis
    "einsum",
    "linalg_ops",
    "ranges",            # diag uses linalg_ops.diagonal
    "convolution",
    "linalg",
    "fft",
    "stats",
    "polynomial",
    "setops",
    "index_tricks",
    "bits",
    "histograms",
    "windows",
    "ufunc_api",
    "array_methods",
)


def _module_name(path: pathlib.Path, root: pathlib.Path = PACKAGE_ROOT) -> str:
  parts = path.relative_to(root.parent).with_suffix("").parts
  if parts[-1] == "__init__":
    parts = parts[:-1]
  return ".".join(parts)


def _is_module(name: str, root: pathlib.Path) -> bool:
  base = root.parent.joinpath(*name.split("."))
  return base.with_suffix(".py").is_file() or (base / "__init__.py").is_file()


def _package_of(path: pathlib.Path, root: pathlib.Path) -> str:
  name = _module_name(path, root)
  return name if path.name == "__init__.py" else name.rpartition(".")[0]


def _imports(path: pathlib.Path, root: pathlib.Path = PACKAGE_ROOT) -> list[tuple[int, str]]:
  """(line, module) for every openjax module ``path`` imports, at module level
  or inside functions alike; ``from pkg import name`` counts as an import of
  ``pkg.name`` when that is a module, else of ``pkg``."""
  found = []
  for node in ast.walk(ast.parse(path.read_text(), str(path))):
    if isinstance(node, ast.Import):
      found.extend((node.lineno, a.name) for a in node.names)
    elif isinstance(node, ast.ImportFrom):
      base = node.module or ""
      if node.level:
        pkg = _package_of(path, root).split(".")
        pkg = pkg[:len(pkg) - node.level + 1]
        base = ".".join(pkg + ([base] if base else []))
      for a in node.names:
        sub = f"{base}.{a.name}"
        found.append((node.lineno, sub if a.name != "*" and _is_module(sub, root) else base))
  return [(line, m) for line, m in found if m == "openjax" or m.startswith("openjax.")]


def _layer(module: str) -> str | None:
  if not module.startswith("openjax._src"):
    return "public"
  if module == "openjax._src":
    return "core"    # the package itself (an empty __init__)
  best = max((p for p in LAYER_OF_PREFIX if module == p or module.startswith(p + ".")),
             key=len, default=None)
  return None if best is None else LAYER_OF_PREFIX[best]


def _sources() -> list[pathlib.Path]:
  return sorted(PACKAGE_ROOT.rglob("*.py"))


def _rel(path: pathlib.Path) -> str:
  return str(path.relative_to(PACKAGE_ROOT.parent))


def test_every_module_has_a_layer():
  unplaced = [_rel(p) for p in _sources() if _layer(_module_name(p)) is None]
  assert not unplaced, (
      f"modules outside DESIGN.md's layer table: {unplaced}; add their package to "
      "LAYER_OF_PREFIX in tests/test_structure.py (and to DESIGN.md's table)")


def layer_violations(paths, root: pathlib.Path = PACKAGE_ROOT) -> list[str]:
  """'file:line: importer (layer) imports module (higher layer)' for each
  import against the layer order."""
  violations = []
  for path in paths:
    importer = _module_name(path, root)
    low = _layer(importer)
    for line, imported in _imports(path, root):
      high = _layer(imported)
      if low is None or high is None or LAYERS.index(high) <= LAYERS.index(low):
        continue
      violations.append(f"{path.relative_to(root.parent)}:{line}: {importer} ({low}) imports "
                        f"{imported} ({high})")
  return violations


def test_imports_follow_the_layer_order():
  violations = layer_violations(_sources())
  assert not violations, (
      "imports against DESIGN.md's layer order (core -> tree_util -> lowering -> primitives "
      "-> interpreters -> runtime -> control -> transforms -> libraries -> public; a layer "
      "imports only those before it):\n  " + "\n  ".join(violations))


def _graph_of(folder: pathlib.Path) -> dict[str, dict[str, int]]:
  """Module -> {module of the same folder it imports: line} for a package folder."""
  package = _module_name(folder / "__init__.py")
  graph = {}
  for path in sorted(folder.glob("*.py")):
    deps: dict[str, int] = {}
    for line, imported in _imports(path):
      if imported.startswith(package + "."):
        deps.setdefault(imported[len(package) + 1:].split(".")[0], line)
    graph[path.stem] = deps
  return graph


def find_cycles(graph: dict[str, dict[str, int]]) -> list[tuple[list[str], list[str]]]:
  """For each knot of mutually importing modules (a strongly connected
  component of more than one module, or a module importing itself, found with
  Tarjan's search): a shortest cycle through it (first module repeated last)
  and all of its modules."""
  index, low, on_stack, stack, components = {}, {}, set(), [], []

  def visit(v):
    index[v] = low[v] = len(index)
    stack.append(v)
    on_stack.add(v)
    for w in graph.get(v, ()):
      if w not in index:
        visit(w)
        low[v] = min(low[v], low[w])
      elif w in on_stack:
        low[v] = min(low[v], index[w])
    if low[v] == index[v]:
      component = []
      while True:
        w = stack.pop()
        on_stack.discard(w)
        component.append(w)
        if w == v:
          break
      if len(component) > 1 or v in graph.get(v, ()):
        components.append(set(component))

  for v in sorted(graph):
    if v not in index:
      visit(v)
  return [(_shortest_cycle(graph, c, min(c)), sorted(c)) for c in components]


def _shortest_cycle(graph, component: set[str], start: str) -> list[str]:
  # Breadth-first from start, inside the component, back to start.
  parents, frontier = {start: None}, [start]
  while frontier:
    following = []
    for v in frontier:
      for w in sorted(graph[v]):
        if w == start:
          path = [v]
          while parents[path[-1]] is not None:
            path.append(parents[path[-1]])
          return path[::-1] + [start]
        if w in component and w not in parents:
          parents[w] = v
          following.append(w)
    frontier = following
  raise AssertionError(f"no cycle through {start} in {sorted(component)}")


def test_find_cycles_reports_each_cycle():
  assert find_cycles({"a": {"b": 1}, "b": {"c": 1}, "c": {}}) == []
  assert find_cycles({"a": {"b": 1}, "b": {"c": 1}, "c": {"a": 1}}) == [
      (["a", "b", "c", "a"], ["a", "b", "c"])]
  assert find_cycles({"a": {"a": 1}}) == [(["a", "a"], ["a"])]
  two = find_cycles({"a": {"b": 1}, "b": {"a": 1}, "c": {"d": 1}, "d": {"c": 1, "a": 1}})
  assert sorted(two) == [(["a", "b", "a"], ["a", "b"]), (["c", "d", "c"], ["c", "d"])]
  knot = find_cycles({"a": {"b": 1, "c": 1}, "b": {"a": 1}, "c": {"b": 1}})
  assert knot == [(["a", "b", "a"], ["a", "b", "c"])]


def _cycle_folders() -> list[pathlib.Path]:
  # numpy/ and every family folder under primitives/ (packages inside it).
  folders = [PACKAGE_ROOT / "_src" / "numpy"]
  folders += sorted(p.parent for p in (PACKAGE_ROOT / "_src" / "primitives").glob("*/__init__.py"))
  return folders


def test_no_import_cycle_inside_numpy_or_a_family_folder():
  messages = []
  for folder in _cycle_folders():
    graph = _graph_of(folder)
    for cycle, knot in find_cycles(graph):
      steps = [f"{a} (line {graph[a][b]}) -> {b}" for a, b in zip(cycle, cycle[1:])]
      messages.append(f"{_rel(folder)}: " + ", ".join(steps) +
                      f" ({len(knot)} modules import each other: {', '.join(knot)})")
  assert not messages, "import cycles (a module imports one that imports it back):\n  " + \
      "\n  ".join(messages)


def test_numpy_modules_import_only_earlier_ones():
  folder = PACKAGE_ROOT / "_src" / "numpy"
  graph = _graph_of(folder)
  unplaced = sorted(set(graph) - set(NUMPY_ORDER))
  assert not unplaced, f"_src/numpy modules missing from NUMPY_ORDER: {unplaced}"
  stale = sorted(set(NUMPY_ORDER) - set(graph))
  assert not stale, f"NUMPY_ORDER names modules that do not exist: {stale}"
  late = []
  for module, deps in graph.items():
    for dep, line in deps.items():
      if NUMPY_ORDER.index(dep) >= NUMPY_ORDER.index(module):
        late.append(f"_src/numpy/{module}.py:{line} imports {dep}, which comes after it in "
                    "NUMPY_ORDER")
  assert not late, "\n".join(late)


def test_modules_stay_under_800_lines():
  long = {}
  for path in _sources():
    with path.open() as f:
      n = sum(1 for _ in f)
    if n > MAX_LINES:
      long[_rel(path)] = n
  assert not long, f"modules over {MAX_LINES} lines (split them by concept): {long}"


@pytest.mark.parametrize("name,layer", [
    ("openjax._src.core.jaxpr", "core"), ("openjax._src.dtypes", "core"),
    ("openjax._src.control.cond", "control"), ("openjax._src.api.jit", "transforms"),
    ("openjax._src.numpy.ufuncs", "libraries"), ("openjax.numpy", "public"),
    ("openjax._src.primitives.elementwise.arithmetic", "primitives"), ("openjax._src.unknown", None)])
def test_layer_of_module_names(name, layer):
  assert _layer(name) == layer


def test_imports_are_read_inside_functions_too(tmp_path):
  root = tmp_path / "openjax"
  (root / "_src" / "core").mkdir(parents=True)
  (root / "_src" / "api").mkdir()
  (root / "_src" / "api" / "__init__.py").write_text("")
  (root / "_src" / "api" / "jit.py").write_text("")
  src = root / "_src" / "core" / "probe.py"
  src.write_text("import numpy\n\ndef f():\n  from openjax._src.api import jit\n"
                 "  from openjax._src.api import helper\n  import openjax.numpy\n"
                 "  from . import avals\n")
  assert _imports(src, root) == [(4, "openjax._src.api.jit"), (5, "openjax._src.api"),
                                 (6, "openjax.numpy"), (7, "openjax._src.core")]


def test_layer_violations_name_importer_imported_and_layers(tmp_path):
  root = tmp_path / "openjax"
  for folder in ("core", "api", "numpy"):
    (root / "_src" / folder).mkdir(parents=True)
    (root / "_src" / folder / "__init__.py").write_text("")
  (root / "_src" / "api" / "jit.py").write_text("from openjax._src.core import avals\n")
  probe = root / "_src" / "core" / "probe.py"
  probe.write_text("from openjax._src.api import jit\n\ndef f():\n  import openjax.numpy\n")
  assert layer_violations([root / "_src" / "api" / "jit.py", probe], root) == [
      "openjax/_src/core/probe.py:1: openjax._src.core.probe (core) imports "
      "openjax._src.api.jit (transforms)",
      "openjax/_src/core/probe.py:4: openjax._src.core.probe (core) imports "
      "openjax.numpy (public)"]
