"""The layering of ``jaxlite._src`` (docs/architecture.md), checked on the source.

The import graph is read with ``ast`` and counts imports inside functions too: a
function-level import that closes a cycle is still a cycle.
"""
import ast
import os
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "jaxlite"
PUBLIC = {p.stem if p.is_file() else p.name for p in PACKAGE.iterdir()
          if p.name != "_src" and (p.suffix == ".py" or (p / "__init__.py").exists())} - {"__init__"}


def _module_name(path):
  parts = path.relative_to(ROOT).with_suffix("").parts
  return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules():
  return {_module_name(p): p for p in PACKAGE.rglob("*.py")}


def _imports(name, path, modules):
  """Every module ``name`` imports, at any depth of its source, with the line."""
  is_package = path.name == "__init__.py"
  found = []
  for node in ast.walk(ast.parse(path.read_text())):
    if isinstance(node, ast.Import):
      targets = [a.name for a in node.names]
    elif isinstance(node, ast.ImportFrom):
      if node.level:
        base = name.split(".") if is_package else name.split(".")[:-1]
        base = ".".join(base[:len(base) - node.level + 1] + ([node.module] if node.module else []))
      else:
        base = node.module
      targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base
                 for a in node.names]
    else:
      continue
    for target in targets:
      while target and target not in modules:
        target = target.rpartition(".")[0]
      if target and target != name:
        found.append((target, node.lineno))
  return found


def _graph():
  modules = _modules()
  return {name: _imports(name, path, modules) for name, path in modules.items()}


def _strongly_connected(graph):
  """Tarjan's components of more than one module."""
  index, low, stack, on_stack, out = {}, {}, [], set(), []

  def visit(v):
    index[v] = low[v] = len(index)
    stack.append(v)
    on_stack.add(v)
    for w in graph[v]:
      if w not in index:
        visit(w)
        low[v] = min(low[v], low[w])
      elif w in on_stack:
        low[v] = min(low[v], index[w])
    if low[v] == index[v]:
      component = set()
      while True:
        w = stack.pop()
        on_stack.discard(w)
        component.add(w)
        if w == v:
          break
      if len(component) > 1:
        out.append(component)

  old = sys.getrecursionlimit()
  sys.setrecursionlimit(max(old, 10000))
  try:
    for v in graph:
      if v not in index:
        visit(v)
  finally:
    sys.setrecursionlimit(old)
  return out


def test_src_never_imports_the_public_package():
  graph = _graph()
  bad = [f"{m} -> {t} (line {line})" for m, edges in graph.items()
         if m.startswith("jaxlite._src") for t, line in edges
         if t == "jaxlite" or t.split(".")[1] in PUBLIC]
  assert not bad, "modules under jaxlite._src import the public package:\n" + "\n".join(bad)


def test_no_import_cycles():
  """No cycle among the modules of jaxlite._src, counting function-level imports."""
  full = _graph()
  src = {m: {t for t, _ in edges if t.startswith("jaxlite._src.")}
         for m, edges in full.items() if m.startswith("jaxlite._src.")}
  cycles = [sorted(m[len("jaxlite._src."):] for m in c) for c in _strongly_connected(src)]
  assert not cycles, f"import cycles (counting function-level imports): {cycles}"


def test_import_linter_contracts_pass():
  pytest.importorskip("importlinter")
  env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
  lint = pathlib.Path(sys.executable).with_name("lint-imports")
  command = [str(lint)] if lint.exists() else [
      sys.executable, "-c", "import sys; from importlinter.cli import lint_imports_command; "
      "sys.exit(lint_imports_command())"]
  run = subprocess.run(command + ["--no-cache"], cwd=ROOT, env=env, capture_output=True,
                       text=True, timeout=300)
  assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
  assert "2 kept, 0 broken" in run.stdout


def _layers_contract():
  import tomllib
  config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
  contract, = [c for c in config["contracts"] if c["type"] == "layers"]
  return [[name.strip() for name in layer.split(":")] for layer in contract["layers"]]


def test_the_folders_of_src_are_its_layers():
  """Each folder of ``jaxlite/_src`` is one layer of the import-linter contract (or one of
  the layer's siblings), and the modules at its root are the API layer, the top one: so a
  module's place on disk says which layer it is in, and a new module is placed in one."""
  top, *below = _layers_contract()
  src = PACKAGE / "_src"
  folders = {p.name for p in src.iterdir() if (p / "__init__.py").exists()}
  root_modules = {p.stem for p in src.glob("*.py")} - {"__init__"}
  assert folders == {name for layer in below for name in layer}, (
      "folders of _src and layers below the API layer differ")
  assert root_modules == set(top), (
      f"root modules not in the API layer: {sorted(root_modules - set(top))}; "
      f"API layer names without a module: {sorted(set(top) - root_modules)}")


def _assigned_attributes(tree):
  for node in ast.walk(tree):
    if isinstance(node, ast.Assign):
      yield from (t for t in node.targets if isinstance(t, ast.Attribute))
    elif isinstance(node, (ast.AugAssign, ast.AnnAssign)) and isinstance(node.target,
                                                                         ast.Attribute):
      yield node.target


def test_no_class_swaps_and_no_assignments_on_other_modules_classes():
  """An object never switches its class (a lazy value holds a state field), and no module
  assigns attributes on a class another module defines (``core.EvalTrace.x = ...``): the
  owner offers an extension point (a registry, an ``install`` call) instead."""
  offenders = []
  for name, path in _modules().items():
    tree = ast.parse(path.read_text())
    imported = {alias.asname or alias.name.split(".")[0]
                for node in ast.walk(tree) if isinstance(node, (ast.Import, ast.ImportFrom))
                for alias in node.names}
    for target in _assigned_attributes(tree):
      owner = target.value
      if target.attr in ("__class__", "__code__"):
        offenders.append(f"{name}:{target.lineno} assigns {target.attr}")
      elif (isinstance(owner, ast.Attribute) and isinstance(owner.value, ast.Name)
            and owner.value.id in imported and owner.attr[:1].isupper()):
        offenders.append(f"{name}:{target.lineno} assigns {owner.value.id}.{owner.attr}."
                         f"{target.attr}")
      elif isinstance(owner, ast.Name) and owner.id in imported and owner.id[:1].isupper():
        offenders.append(f"{name}:{target.lineno} assigns {owner.id}.{target.attr}")
    offenders += [f"{name}:{line} calls setattr on {what}" for line, what in _setattrs(tree)]
  assert not offenders, "\n".join(offenders)


def _setattrs(tree):
  """setattr calls on anything but ``self``, a module object, or ``cls`` in a classmethod
  (the owner class's own extension point, as ``core.ArrayMethods.install_methods``)."""
  found = []

  class Visitor(ast.NodeVisitor):
    in_classmethod = [False]

    def visit_FunctionDef(self, node):
      self.in_classmethod.append(any(isinstance(d, ast.Name) and d.id == "classmethod"
                                     for d in node.decorator_list))
      self.generic_visit(node)
      self.in_classmethod.pop()

    def visit_Call(self, node):
      if isinstance(node.func, ast.Name) and node.func.id == "setattr" and node.args:
        first = node.args[0]
        if not (isinstance(first, ast.Name) and (
            first.id in ("self", "module") or (first.id == "cls" and self.in_classmethod[-1]))):
          found.append((node.lineno, ast.unparse(first)))
      self.generic_visit(node)

  Visitor().visit(tree)
  return found
