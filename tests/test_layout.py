"""The harness's layout (issue 12), checked on the source tree with `ast`, no import executed.

- harness/ holds only __init__.py and __main__.py at the top; every sub-package is a layer.
- Each layer's __init__.py opens with a docstring that says what it may import, and names no
  higher layer there.
- No module in harness/, triton_kernels/ or porting/ is longer than MAX_LINES lines.
- Every import (module level, inside functions, under `if TYPE_CHECKING:`, and
  importlib.import_module("...") with a literal name) respects the layer order
  core < compile < launch < check < report < studies < cli: a module imports its own layer or a
  lower one. triton_kernels/ imports harness.core only, and core does not import triton_kernels
  (it sits between core and compile).
- porting/ (the census, SASS counting, the porting guide's generator) sits apart from the runtime
  package: it may import harness and triton_kernels; harness and triton_kernels never import
  porting, except the one documented lazy entry (PORTING_ENTRY: harness.cli.census imports
  porting.inspect_cmd inside a function, when `inspect` runs).
  Checked on the source (no `import porting` anywhere else, the entry not at module level) and by
  importing harness and its CLI in a fresh interpreter (porting stays out of sys.modules).
- No import cycle between the modules of harness/, triton_kernels/ and porting/, function-level
  imports counted (a cycle hidden in a function still makes the modules depend on each other). An
  edge is what the statement names: `from a.b import c` is an edge to a.b.c when that is a
  module, else to a.b; the parent packages a statement runs implicitly are not edges (every module
  would otherwise sit in a cycle through harness/__init__.py, which imports the public API).
- No `mapping == "..."`, `mapping != "..."`, `mapping in ("...", ...)` string switch (nor a
  `match` on a mapping with string cases) outside harness/core/mappings.py: a tile mapping is an
  object that knows its grid, its reference partials, its chain length and its Triton
  meta-parameters.

- experiments/ (the one-off experiments, each a folder with its README.md, its code and a
  __main__.py: `python -m experiments.NAME`) may import harness, triton_kernels and porting,
  never the reverse: nothing in the product path (harness/, triton_kernels/, benchmarks/) imports an
  experiment. The one allowed path is a `reduce-ladder` command kept as an alias of a moved
  experiment (EXPERIMENT_ALIASES): it imports that experiment lazily, inside the function that
  runs it, never at module level. Experiments' modules keep the line limit too.

Every failure names the file and line. The checker's own functions are tested first, on small
snippets, so that a check that passes is known to be able to fail.
"""

from __future__ import annotations

import ast
import itertools
import re
import subprocess
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("harness", "triton_kernels", "porting", "experiments")
EXPERIMENTS = "experiments"
# The product modules that may reach an experiment: old `reduce-ladder` command names kept as
# aliases of moved experiments, each importing its experiment inside a function (lazily).
EXPERIMENT_ALIASES = {"harness.cli.main": "experiments.fastest_ablation"}
# Product code outside the packages above (the pytest-benchmark suite and its scripts).
PRODUCT_SCRIPTS = ("benchmarks",)
LAYERS = ("core", "compile", "launch", "check", "report", "studies", "cli")
RANK = {layer: i for i, layer in enumerate(LAYERS)}
TOP = len(LAYERS)  # harness/__init__.py and __main__.py: above every layer
TRITON_KERNELS_RANK = 0.5  # imports core only; imported by compile and above
MAX_LINES = 400
MAPPINGS_MODULE = "harness.core.mappings"
TOP_LEVEL_ALLOWED = {"__init__.py", "__main__.py"}
PORTING = "porting"
# The one way harness reaches the porting package: (importer, module it imports, lazily).
PORTING_ENTRY = ("harness.cli.census", "porting.inspect_cmd")


# ---------------------------------------------------------------------------------------------
# The checker (pure functions of module names and source text)


@dataclass(frozen=True)
class Import:
    target: str  # the module (or package) the statement names, resolved to a known one
    line: int
    in_function: bool = False  # inside a def (run when the function runs, not at import)


def module_name(path: Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


@cache
def source_files() -> tuple[Path, ...]:
    return tuple(sorted(p for pkg in PACKAGES for p in (ROOT / pkg).rglob("*.py")))


@cache
def known_modules() -> frozenset[str]:
    return frozenset(module_name(p) for p in source_files())


def _absolute(module: str | None, level: int, importer: str, is_package: bool) -> str:
    if not level:
        return module or ""
    base = importer.split(".")
    base = base if is_package else base[:-1]
    base = base[: len(base) - (level - 1)]
    return ".".join([*base, module] if module else base)


def _walk(tree: ast.AST, module_level_only: bool) -> Iterator[ast.AST]:
    """ast.walk, or (module_level_only) the nodes that run at import time: not inside a function
    or lambda body (a class body runs at import time and is walked)."""
    if not module_level_only:
        yield from ast.walk(tree)
        return
    todo = [tree]
    while todo:
        node = todo.pop()
        yield node
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            continue  # decorators and defaults run at import time, but import nothing here
        todo.extend(ast.iter_child_nodes(node))


def imports_of(
    importer: str,
    text: str,
    modules: Iterable[str],
    is_package: bool = False,
    module_level_only: bool = False,
) -> list[Import]:
    """Every import `importer` makes (anywhere in its tree, or only at import time:
    module_level_only) of a module in `modules`, resolved."""
    modules = frozenset(modules)

    def resolve(name: str) -> str | None:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    tree = ast.parse(text)
    in_function = {
        id(inner)
        for f in ast.walk(tree)
        if isinstance(f, ast.FunctionDef | ast.AsyncFunctionDef)
        for inner in ast.walk(f)
        if inner is not f
    }
    found = []
    for node in _walk(tree, module_level_only):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = _absolute(node.module, node.level, importer, is_package)
            names = [
                f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names
            ]
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute | ast.Name)
            and getattr(node.func, "attr", getattr(node.func, "id", None))
            in ("import_module", "__import__")
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            names = [node.args[0].value]
        for name in names:
            if (target := resolve(name)) is not None:
                found.append(Import(target, node.lineno, id(node) in in_function))
    return found


def rank(module: str) -> float:
    """A module's place in the layer order (TOP for harness/__init__ and __main__; porting is
    above it: it may import all of harness)."""
    parts = module.split(".")
    if parts[0] == EXPERIMENTS:
        return TOP + 2  # may import harness, triton_kernels and porting
    if parts[0] == PORTING:
        return TOP + 1
    if parts[0] == "triton_kernels":
        return TRITON_KERNELS_RANK
    if len(parts) == 1 or parts[1] not in RANK:
        return TOP
    return RANK[parts[1]]


def _is_experiment(module: str) -> bool:
    return module == EXPERIMENTS or module.startswith(EXPERIMENTS + ".")


def layer_violations(importer: str, imports: Iterable[Import]) -> list[tuple[int, str]]:
    """(line, message) for each import that reaches above the importer's layer (an import of an
    experiment is experiment_violations' to judge)."""
    out = []
    own = rank(importer)
    for imp in imports:
        if _is_experiment(imp.target):
            continue
        if own > TOP:
            continue  # porting, experiments: may import harness and triton_kernels
        if imp.target.split(".")[0] == PORTING:
            if (importer, imp.target) != PORTING_ENTRY:
                out.append(
                    (
                        imp.line,
                        f"{importer} imports {imp.target}: harness reaches porting only through "
                        f"{PORTING_ENTRY[0]}'s lazy entry ({PORTING_ENTRY[1]})",
                    )
                )
            continue
        if importer.startswith("triton_kernels"):
            if imp.target.startswith("harness") and not (
                imp.target == "harness.core" or imp.target.startswith("harness.core.")
            ):
                out.append((imp.line, f"triton_kernels may import harness.core only: {imp.target}"))
            continue
        if own == TOP:
            continue  # harness/__init__.py, harness/__main__.py: the entry points
        if rank(imp.target) > own:
            out.append((imp.line, f"{importer} (layer {_layer(importer)}) imports {imp.target}"))
    return out


def experiment_violations(
    importer: str, imports: Iterable[Import], aliases: dict[str, str] = EXPERIMENT_ALIASES
) -> list[tuple[int, str]]:
    """(line, message) for each import of an experiment from outside experiments/, but for the
    alias's own experiment imported inside a function of the alias module."""
    if _is_experiment(importer):
        return []
    out = []
    for imp in imports:
        if not _is_experiment(imp.target):
            continue
        own = aliases.get(importer)
        if own and imp.in_function and (imp.target == own or imp.target.startswith(own + ".")):
            continue
        why = (
            "at module level (an alias imports its experiment inside the function that runs it)"
            if own and not imp.in_function
            else "(the product never imports an experiment; experiments import harness)"
        )
        out.append((imp.line, f"{importer} imports {imp.target} {why}"))
    return out


def _layer(module: str) -> str:
    r = rank(module)
    if r == TRITON_KERNELS_RANK:
        return "triton_kernels"
    if r > TOP:
        return PORTING
    return LAYERS[int(r)] if r < TOP else "top"


def find_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (or a self-import), each as
    one cycle through it (Tarjan's algorithm, iterative; then a path search inside the SCC)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    sccs: list[list[str]] = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work: list[tuple[str, Iterator[str]]] = [(root, iter(sorted(graph.get(root, ()))))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, it = work[-1]
            nxt = next(it, None)
            if nxt is not None:
                if nxt not in index:
                    index[nxt] = low[nxt] = counter
                    counter += 1
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph.get(nxt, ())))))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                scc = []
                while True:
                    m = stack.pop()
                    on_stack.discard(m)
                    scc.append(m)
                    if m == node:
                        break
                if len(scc) > 1 or node in graph.get(node, ()):
                    sccs.append(sorted(scc))
    return [_cycle_in(graph, set(scc)) for scc in sccs]


def _cycle_in(graph: dict[str, set[str]], scc: set[str]) -> list[str]:
    """One cycle through the first module of a strongly connected component (breadth first)."""
    start = min(scc)
    parent: dict[str, str] = {}
    queue = [start]
    while queue:
        node = queue.pop(0)
        for nxt in sorted(graph.get(node, ())):
            if nxt == start:
                path = [node]
                while path[-1] != start:
                    path.append(parent[path[-1]])
                return [*reversed(path), start]
            if nxt in scc and nxt not in parent:
                parent[nxt] = node
                queue.append(nxt)
    raise AssertionError(f"no cycle through {start} in {sorted(scc)}")


def _is_mapping(node: ast.AST) -> bool:
    return isinstance(node, ast.Attribute) and node.attr == "mapping"


def _is_str_or_strs(node: ast.AST) -> bool:
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str)
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return bool(node.elts) and all(_is_str_or_strs(e) for e in node.elts)
    return False


def mapping_switches(text: str) -> list[int]:
    """Lines that compare an attribute named `mapping` with a string (==, !=, in, not in, either
    side), or `match` on one with string cases."""
    lines = []
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
            for (a, b), op in zip(itertools.pairwise(operands), node.ops, strict=True):
                if not isinstance(op, ast.Eq | ast.NotEq | ast.In | ast.NotIn):
                    continue
                if (_is_mapping(a) and _is_str_or_strs(b)) or (
                    _is_mapping(b) and _is_str_or_strs(a) and isinstance(op, ast.Eq | ast.NotEq)
                ):
                    lines.append(node.lineno)
                    break
        elif (
            isinstance(node, ast.Match)
            and _is_mapping(node.subject)
            and any(
                isinstance(c.pattern, ast.MatchValue) and _is_str_or_strs(c.pattern.value)
                for c in node.cases
            )
        ):
            lines.append(node.lineno)
    return sorted(set(lines))


# ---------------------------------------------------------------------------------------------
# The checker, tested on snippets (each check can fail)


def test_checker_resolves_every_kind_of_import():
    mods = {"harness", "harness.core", "harness.core.a", "harness.launch", "harness.launch.p"}
    text = (
        "import os\n"
        "from harness.core import a\n"
        "def f():\n"
        "    from harness.launch import p\n"
        "    import harness.launch.p.sub\n"
        "if True:\n"
        "    from . import a as b\n"
        "import importlib\n"
        "importlib.import_module('harness.launch')\n"
    )
    got = imports_of("harness.core.x", text, mods)
    assert sorted((i.target, i.line) for i in got) == [
        ("harness.core.a", 2),
        ("harness.core.a", 7),
        ("harness.launch", 9),
        ("harness.launch.p", 4),
        ("harness.launch.p", 5),
    ]
    bad = layer_violations("harness.core.x", got)
    assert [line for line, _ in bad] == [4, 5, 9]  # the function-level ones included
    assert not layer_violations("harness.studies.s", got)
    tk = [Import("harness.launch.p", 3), Import("harness.core.a", 4)]
    assert [line for line, _ in layer_violations("triton_kernels.k", tk)] == [3]
    assert layer_violations("harness.core.x", [Import("triton_kernels.k", 1)])
    assert not layer_violations("harness.compile.x", [Import("triton_kernels.k", 1)])


def test_checker_holds_harness_to_the_one_lazy_porting_entry():
    mods = {
        "harness",
        "harness.core",
        "harness.core.a",
        "porting",
        "porting.inspect_cmd",
        "porting.doc",
    }
    entry_text = (
        "import importlib\n"
        "def porting_entry():\n"
        "    return importlib.import_module('porting.inspect_cmd')\n"
    )
    entry, target = PORTING_ENTRY
    got = imports_of(entry, entry_text, mods)
    assert [(i.target, i.line) for i in got] == [("porting.inspect_cmd", 3)]
    assert not layer_violations(entry, [Import(target, 3)])
    assert not imports_of(entry, entry_text, mods, module_level_only=True)
    eager = "import importlib\nimportlib.import_module('porting.inspect_cmd')\n"
    assert imports_of(entry, eager, mods, module_level_only=True)  # at import time: caught
    # any other import of porting from harness or triton_kernels, even inside a function
    other = "def f():\n    from porting import doc\n"
    found = imports_of("harness.core.x", other, mods)
    assert [line for line, _ in layer_violations("harness.core.x", found)] == [2]
    assert layer_violations(entry, [Import("porting.doc", 1)])  # the entry names one module
    assert layer_violations("triton_kernels.k", [Import("porting.doc", 1)])
    # porting may import any layer of harness
    assert not layer_violations("porting.doc", [Import("harness.cli.common", 1)])
    # a class body runs at import time: walked
    in_class = "class C:\n    import porting.doc\n"
    assert imports_of("harness.core.x", in_class, mods, module_level_only=True)


def test_checker_keeps_experiments_out_of_the_product():
    mods = {"harness", "harness.cli.alias", "experiments", "experiments.a", "experiments.b"}
    text = (
        "from experiments import a\n"  # 1: module level
        "def run():\n"
        "    from experiments.a import main\n"  # 3: lazy, the alias's own experiment
        "    import experiments.b\n"  # 4: lazy, but another experiment
    )
    got = imports_of("harness.cli.alias", text, mods)
    assert [(i.line, i.in_function) for i in sorted(got, key=lambda i: i.line)] == [
        (1, False),
        (3, True),
        (4, True),
    ]
    aliases = {"harness.cli.alias": "experiments.a"}
    bad = experiment_violations("harness.cli.alias", got, aliases)
    assert sorted(line for line, _ in bad) == [1, 4]
    assert [line for line, _ in experiment_violations("harness.cli.other", got, aliases)] == [
        1,
        3,
        4,
    ]
    assert not experiment_violations("experiments.b", got, aliases)  # experiments: anything
    assert not layer_violations("harness.cli.alias", got)  # not the layer rule's to judge
    assert not layer_violations("experiments.b", [Import("harness.cli.alias", 1)])


def test_checker_finds_cycles_and_only_cycles():
    acyclic = {"a": {"b", "c"}, "b": {"c"}, "c": set()}
    assert find_cycles(acyclic) == []
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": set(), "e": {"e"}}
    assert sorted(find_cycles(graph)) == [["a", "b", "c", "a"], ["e", "e"]]


def test_checker_finds_mapping_switches():
    text = (
        "if launch.mapping == 'tiles':\n"  # 1
        "    pass\n"
        "x = v.launch.mapping in ('split-pair', 'grid-stride')\n"  # 3
        "y = 'chunked' != self.mapping\n"  # 4
        "z = launch.mapping == other.mapping\n"  # not a string switch
        "w = launch.mapping.grid(n)\n"
        "match launch.mapping:\n"  # 7
        "    case 'tiles':\n"
        "        pass\n"
        "u = mapping == 'tiles'\n"  # a plain name, not an attribute: not this check's target
    )
    assert mapping_switches(text) == [1, 3, 4, 7]


# ---------------------------------------------------------------------------------------------
# The tree


def _rel(path: Path) -> str:
    return str(path.relative_to(ROOT))


@cache
def _parsed() -> dict[str, tuple[Path, str]]:
    return {module_name(p): (p, p.read_text()) for p in source_files()}


@cache
def _imports() -> dict[str, list[Import]]:
    mods = known_modules()
    return {
        m: imports_of(m, text, mods, is_package=path.name == "__init__.py")
        for m, (path, text) in _parsed().items()
    }


def test_harness_has_only_init_and_main_at_the_top():
    extra = sorted(
        p.name
        for p in (ROOT / "harness").iterdir()
        if p.suffix == ".py" and p.name not in TOP_LEVEL_ALLOWED
    )
    assert not extra, "top-level modules in harness/ (move them into a layer): " + ", ".join(
        f"harness/{name}:1" for name in extra
    )


def test_porting_docstring_says_it_may_import_harness_never_the_reverse():
    path = ROOT / PORTING / "__init__.py"
    doc = " ".join((ast.get_docstring(ast.parse(path.read_text())) or "").lower().split())
    where = f"{_rel(path)}:1"
    assert "may import: harness" in doc, f"{where}: say that porting may import harness"
    assert "never the reverse" in doc, f"{where}: say that harness never imports porting"
    assert PORTING_ENTRY[0] in doc, f"{where}: name the one lazy entry ({PORTING_ENTRY[0]})"


def test_harness_reaches_porting_only_lazily_through_the_entry():
    """No import of porting runs when a harness module is imported (module-level statements,
    class bodies): the entry's import sits inside a function, and it is the only one."""
    mods = known_modules()
    eager, entries = [], []
    for module, (path, text) in _parsed().items():
        if module.split(".")[0] in (PORTING, EXPERIMENTS):  # experiments may import porting
            continue
        is_pkg = path.name == "__init__.py"
        for imp in imports_of(module, text, mods, is_pkg, module_level_only=True):
            if imp.target.split(".")[0] == PORTING:
                eager.append(f"{_rel(path)}:{imp.line}: imports {imp.target} at import time")
        entries += [
            (module, imp.target)
            for imp in _imports()[module]
            if imp.target.split(".")[0] == PORTING
        ]
    assert not eager, "harness imports porting at import time:\n" + "\n".join(eager)
    assert entries == [PORTING_ENTRY], f"harness's imports of porting: {entries}"


def test_importing_harness_and_its_cli_loads_no_porting_module():
    code = (
        "import sys, harness, harness.cli.main\n"
        "bad = sorted(m for m in sys.modules if m == 'porting' or m.startswith('porting.'))\n"
        "print(' '.join(bad))\n"
    )
    r = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True
    )
    assert r.stdout.strip() == "", f"porting modules loaded by `import harness`: {r.stdout}"


def test_every_sub_package_is_a_layer():
    problems = []
    for p in sorted((ROOT / "harness").iterdir()):
        if not p.is_dir() or p.name == "__pycache__":
            continue
        if p.name not in RANK:
            problems.append(f"harness/{p.name}/: not a layer of {LAYERS}")
        elif not (p / "__init__.py").is_file():
            problems.append(f"harness/{p.name}/__init__.py: missing")
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("layer", LAYERS)
def test_layer_docstring_says_what_it_may_import(layer):
    path = ROOT / "harness" / layer / "__init__.py"
    doc = ast.get_docstring(ast.parse(path.read_text())) or ""
    where = f"{_rel(path)}:1"
    assert doc, f"{where}: no docstring (say what the package owns and what it may import)"
    low = doc.lower()
    if layer == "core":
        ok = "imports nothing else from harness" in low or "may import: nothing" in low
        assert ok, f"{where}: the docstring must say that core imports nothing else from harness"
        return
    assert "may import" in low, f"{where}: the docstring must say what it may import"
    allowed = low.split("may import", 1)[1].split("\n\n", 1)[0]  # to the paragraph's end
    named_higher = [
        other for other in LAYERS[RANK[layer] + 1 :] if re.search(rf"\b{other}\b", allowed)
    ]
    assert not named_higher, f"{where}: names a higher layer as importable: {named_higher}"


def test_no_module_over_the_line_limit():
    long = []
    for path, text in _parsed().values():
        n = len(text.splitlines())
        if n > MAX_LINES:
            long.append(f"{_rel(path)}:{MAX_LINES + 1}: {n} lines (limit {MAX_LINES})")
    assert not long, "modules over the limit:\n" + "\n".join(long)


def test_imports_respect_the_layer_order():
    bad = []
    for module, imports in _imports().items():
        path = _parsed()[module][0]
        for line, message in layer_violations(module, imports):
            bad.append(f"{_rel(path)}:{line}: {message}")
    assert not bad, (
        f"imports against the layer order {' < '.join(LAYERS)} (triton_kernels: harness.core "
        "only):\n" + "\n".join(sorted(bad))
    )


def test_nothing_in_the_product_imports_an_experiment():
    bad = []
    for module, imports in _imports().items():
        path = _parsed()[module][0]
        for line, message in experiment_violations(module, imports):
            bad.append(f"{_rel(path)}:{line}: {message}")
    experiments = {m for m in known_modules() if _is_experiment(m)}
    for folder in PRODUCT_SCRIPTS:
        for path in sorted((ROOT / folder).rglob("*.py")):
            importer = module_name(path)
            found = imports_of(importer, path.read_text(), experiments)
            for line, message in experiment_violations(importer, found):
                bad.append(f"{_rel(path)}:{line}: {message}")
    assert not bad, "imports of experiments from the product:\n" + "\n".join(sorted(bad))


def test_every_alias_names_an_experiment_that_exists():
    for alias, experiment in EXPERIMENT_ALIASES.items():
        assert alias in known_modules(), f"{alias}: no such module (EXPERIMENT_ALIASES)"
        assert experiment in known_modules(), f"{experiment}: no such experiment"


def test_every_experiment_is_a_folder_with_a_readme_and_an_entry():
    problems = []
    for p in sorted((ROOT / EXPERIMENTS).iterdir()):
        if p.suffix == ".py" and p.name != "__init__.py":
            problems.append(f"{_rel(p)}:1: a module at the top of experiments/ (make it a folder)")
        if not p.is_dir() or p.name == "__pycache__":
            continue
        for need in ("__init__.py", "__main__.py", "README.md"):
            if not (p / need).is_file():
                problems.append(f"{_rel(p)}/{need}: missing")
        readme = p / "README.md"
        if readme.is_file() and f"python -m experiments.{p.name}" not in readme.read_text():
            problems.append(f"{_rel(readme)}:1: does not say how to run it")
    assert not problems, "\n".join(problems)


def test_no_import_cycles():
    graph: dict[str, set[str]] = {m: set() for m in _parsed()}
    where: dict[tuple[str, str], int] = {}
    for module, imports in _imports().items():
        for imp in imports:
            if imp.target != module:  # a package naming itself (from . import x) is no cycle
                graph[module].add(imp.target)
                where.setdefault((module, imp.target), imp.line)
    cycles = find_cycles(graph)
    lines = []
    for cycle in cycles:
        hops = [
            f"{_rel(_parsed()[a][0])}:{where[(a, b)]}: {a} imports {b}"
            for a, b in itertools.pairwise(cycle)
        ]
        lines.append(" -> ".join(cycle) + "\n    " + "\n    ".join(hops))
    assert not cycles, "import cycles:\n" + "\n".join(lines)


def test_no_mapping_string_switches_outside_the_mappings():
    found = []
    for module, (path, text) in _parsed().items():
        if module == MAPPINGS_MODULE:
            continue
        for line in mapping_switches(text):
            found.append(f"{_rel(path)}:{line}")
    assert not found, (
        f"`mapping ==` / `!=` / `in (...)` string switches outside {MAPPINGS_MODULE} (ask the "
        "mapping object instead):\n" + "\n".join(found)
    )


# ---------------------------------------------------------------------------------------------
# Line budgets. The one-pipeline targets are harness/ <= 10,000 lines (with the axis family) and
# all Python outside tests/, results/ and experiments/ <= 13,000, with docs/porting.md <= 1,500
# lines and the README <= 250 (tests/test_readme.py). The targets are not met yet: CEILINGS are
# what the code measures today, so that it can only shrink; lower them as it does, and replace
# them by the targets once it is there.
TARGETS = {"harness": 10_000, "product": 13_000}
# Features are paid for by cuts, never by raising these. Raised once, from 12,712 / 15,182, by the
# fixes of wrong sums in the API and of checks that passed wrong sums (runtime.md, correctness.md),
# net of this round's cuts (one row schema, the legacy readers moved to experiments/).
CEILINGS = {"harness": 12_755, "product": 15_228}
PRODUCT_EXCLUDED = ("tests", "results", "experiments")
PORTING_GUIDE_MAX = 1_500


def _python_lines(paths: Iterable[Path]) -> int:
    # is_file: the GPU machine's copy of the tree listed a deleted module it could not read
    return sum(len(p.read_text().splitlines()) for p in paths if p.is_file())


def _product_files() -> list[Path]:
    """The tracked Python files outside PRODUCT_EXCLUDED; where there is no git checkout (a copy
    of the tree, as on the GPU machine), every .py file outside hidden and build folders."""
    try:
        tracked = subprocess.run(["git", "ls-files", "*.py"], cwd=ROOT, capture_output=True,
                                 text=True, check=True).stdout.split()  # fmt: skip
    except (OSError, subprocess.CalledProcessError):
        skip = lambda part: part.startswith(".") or part.endswith(".egg-info")  # noqa: E731
        found = (p.relative_to(ROOT).as_posix() for p in ROOT.rglob("*.py"))
        tracked = [f for f in found if not any(skip(part) for part in f.split("/"))]
    return [ROOT / f for f in tracked if f.split("/")[0] not in PRODUCT_EXCLUDED]


def test_line_budgets_only_shrink():
    got = {
        "harness": _python_lines((ROOT / "harness").rglob("*.py")),
        "product": _python_lines(_product_files()),
    }
    for key, n in got.items():
        assert TARGETS[key] <= CEILINGS[key], key
        assert n <= CEILINGS[key], (
            f"{key}: {n} lines, over its ceiling {CEILINGS[key]} (target {TARGETS[key]}): "
            "cut before adding, or move a one-off study to experiments/"
        )
    guide = len((ROOT / "docs" / "porting.md").read_text().splitlines())
    assert guide <= PORTING_GUIDE_MAX, f"docs/porting.md has {guide} lines"
