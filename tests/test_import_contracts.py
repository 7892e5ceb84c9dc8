"""The rules of docs/architecture.md, checked on the source: which part of the package may import which.

The import graph is read with ``ast`` from every .py file of the wheel (the folders pyproject.toml maps into
``muttlab``, and the Python files it ships as package data: the dashboard's pages in ``views/``), so nothing
is imported to build it. An import inside a function counts like one at the top, and so does
``importlib.import_module("muttlab.…")`` with a literal name. A *unit* is a folder of the package
(``muttlab.engine``, ``muttlab.metrics``…) or one of its top-level modules (``muttlab.api``, ``muttlab.trials``…);
the layers are kept between units, the front door and the circles file by file.
"""
from __future__ import annotations

import ast
import subprocess
import sys
import tomllib
from collections import defaultdict
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

# Lowest first. A unit imports only units of lower layers: nothing imports back up, and no two units of one
# layer import each other. A new folder or top-level module gets its place here.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("errors", "escaping"),
    ("checks", "rules"),
    ("settings", "allocation", "stats"),
    ("resources", "access", "trials", "redact"),
    ("metrics", "corruptions"),
    ("sources",),
    ("judged", "pairs"),
    ("engine",),
    ("suites", "severity", "conformance", "learned", "meta"),
    ("human", "validation", "profile"),
    ("snapshots",),
    ("api",),
    ("cli", "dashboard"),
    ("__main__",),
)
# ``muttlab/__init__.py`` (the version) and the package data import nothing of ours.
OUTSIDE_LAYERS = ("", "data")

# Imports across the layers above that the design keeps on purpose, each with its reason.
ALLOWED_ACROSS = {
    ("muttlab.cli.report", "muttlab.dashboard.report"):
        "`muttlab report` is the dashboard's own offline export of a view: the page's charts, without a server",
    ("muttlab.cli.serve", "muttlab.dashboard.services"):
        "`muttlab serve` runs the dashboard in its own process and warms the dashboard's caches before the first page",
    ("muttlab.cli.serve", "muttlab.dashboard.signin"):
        "`muttlab serve` mounts the dashboard's sign-in routes (they set the HttpOnly session cookie) on its server",
    ("muttlab.cli.serve", "muttlab.dashboard.plotly_hint"):
        "`muttlab serve` mounts the dashboard's paint-hint route (it sets the cookie that orders a page's paint)",
    ("muttlab.cli.serve", "muttlab.dashboard.shared"):
        "`muttlab serve` refuses the browser's clear-cache message before the first page runs",
}

# Metrics and corruption types see strings and return numbers or sentences: besides themselves they may use
# only these leaves.
LEAVES = {"errors", "settings", "resources"}

# What a front-end (the CLI, the dashboard) may import besides the API and itself, file by file: the exception
# tree, the settings every command and page starts from and the rules they hold (a tie rule read from
# --tie-rule), the scrubbing of secrets and server paths from messages, the checks of a value's kind (the seed's
# range), and the escaping of text for each output format and for the files people download. Everything else of
# the package a front-end reaches through muttlab.api; nothing is allowed past it.
FRONT_END_MAY_IMPORT = {"api", "errors", "settings", "rules", "redact", "checks", "escaping"}

FRONT_ENDS = ("cli", "dashboard")

SCIENTIFIC = ("numpy", "pandas", "scipy", "torch", "spacy", "streamlit", "sqlalchemy", "nltk", "gensim", "numba")


def _package_folders() -> dict[str, Path]:
    """Import name -> folder, from pyproject.toml: the one place that says what the wheel holds (a package
    under a mapped one lies in the mapped folder, as setuptools places it)."""
    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]
    mapped = config.get("package-dir", {})
    folders = {}
    for name in config["packages"]:
        parent = max((m for m in mapped if name == m or name.startswith(m + ".")), key=len, default=None)
        rest = name[len(parent) + 1:] if parent and name != parent else ("" if parent else name)
        base = REPO / mapped[parent] if parent else REPO
        folders[name] = base.joinpath(*rest.split(".")) if rest else base
    return folders


def _modules() -> dict[str, Path]:
    """Import name -> file, for every .py file the wheel carries: the packages' modules and the Python files
    shipped as package data (the dashboard's pages, ``views/*.py``, which Streamlit runs as scripts), each
    named as if it were a module of its folder (``muttlab.dashboard.views.learned``)."""
    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]
    data = config.get("package-data", {})
    out = {}
    for package, folder in _package_folders().items():
        out[package] = folder / "__init__.py"
        for path in folder.glob("*.py"):
            if path.name != "__init__.py":
                out[f"{package}.{path.stem}"] = path
        for pattern in data.get(package, []):
            for path in folder.glob(pattern):
                if path.suffix == ".py":
                    relative = path.relative_to(folder).with_suffix("")
                    out[".".join((package, *relative.parts))] = path
    return {name: path for name, path in out.items() if path.is_file()}


MODULES = _modules()


def _resolve(name: str) -> str | None:
    """The module of ours that ``name`` (a module, or a name inside one) is, or None for an outside one."""
    while name:
        if name in MODULES:
            return name
        name = name.rpartition(".")[0]
    return None


def _catches_import_errors(node: ast.Try) -> bool:
    caught = [h.type for h in node.handlers]
    caught += [e for t in caught if isinstance(t, ast.Tuple) for e in t.elts]
    return any(getattr(t, "id", None) in ("ImportError", "ModuleNotFoundError", "Exception") or t is None
               for t in caught)


def _import_guards() -> dict[str, str]:
    """Function name -> where it is defined, for every function of ours that imports or looks for a module named
    by a variable (``importlib.import_module(name)``, ``__import__(name)``, ``importlib.util.find_spec(name)``)
    inside a ``try`` that catches the import's failure: an optional-import guard, whatever it is called."""
    found = {}
    for module, path in MODULES.items():
        for fn in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for node in ast.walk(fn):
                if isinstance(node, ast.Try) and _catches_import_errors(node) and any(
                        isinstance(call, ast.Call) and call.args and not isinstance(call.args[0], ast.Constant)
                        and getattr(call.func, "attr", getattr(call.func, "id", "")) in ("import_module", "__import__",
                                                                                         "find_spec")
                        for call in ast.walk(ast.Module(body=node.body, type_ignores=[]))):
                    found[fn.name] = f"{path.relative_to(REPO)}:{fn.lineno}"
    return found


GUARDS = _import_guards()


def _imported(module: str, path: Path) -> list[tuple[str, int]]:
    is_package = path.name == "__init__.py"
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = module.split(".") if is_package else module.split(".")[:-1]
                parts = parts[:len(parts) - node.level + 1]
                base = ".".join(parts + ([node.module] if node.module else []))
            names = [f"{base}.{alias.name}" for alias in node.names]
        elif (isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant)
              and isinstance(node.args[0].value, str)
              and getattr(node.func, "attr", getattr(node.func, "id", "")) in ("import_module", *GUARDS)):
            # importlib.import_module("muttlab.…"), or a helper of ours that imports the module it is given
            names = [node.args[0].value]
        for name in names:
            target = _resolve(name)
            if target is not None and target != module:
                found.append((target, node.lineno))
    return found


GRAPH = {module: _imported(module, path) for module, path in MODULES.items()}


def unit(module: str) -> str:
    """``muttlab.engine.runner`` -> ``engine``; ``muttlab.api`` -> ``api``; ``muttlab`` -> ``""``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def _where(module: str, line: int) -> str:
    return f"{MODULES[module].relative_to(REPO)}:{line}"


def _edges():
    for module, targets in GRAPH.items():
        for target, line in targets:
            if unit(module) != unit(target):
                yield module, target, line


LAYER_OF = {name: i for i, layer in enumerate(LAYERS) for name in layer}


def test_the_graph_is_read_from_the_whole_package():
    # A wrong folder mapping would silently check nothing.
    assert {"muttlab.api", "muttlab.metrics.base", "muttlab.corruptions.catalog", "muttlab.dashboard.app",
            "muttlab.engine.runner", "muttlab.cli.correlate", "muttlab.metrics.reval.metric",
            "muttlab.dashboard.views.learned", "muttlab.dashboard.views.run"} <= set(MODULES)
    # The pages ship as package data, not as modules: they are read all the same, their function-local
    # imports included.
    assert any(t == "muttlab.dashboard.services" for t, _ in GRAPH["muttlab.dashboard.views.learned"])
    assert any(t == "muttlab.settings" for t, _ in GRAPH["muttlab.metrics.base"])
    assert any(t == "muttlab.engine.runner" for t, _ in GRAPH["muttlab.api"])


def test_every_unit_has_a_layer():
    units = {unit(m) for m in MODULES} - set(OUTSIDE_LAYERS)
    assert units - set(LAYER_OF) == set(), "place the new folder or module in LAYERS"
    assert set(LAYER_OF) - units == set(), "LAYERS names a unit the package no longer has"


def test_no_unit_imports_back_up_or_sideways():
    wrong = [f"{_where(m, line)}: {m} imports {t} ({unit(t) or 'muttlab'} is not below {unit(m)})"
             for m, t, line in _edges()
             if unit(m) not in OUTSIDE_LAYERS and unit(t) not in OUTSIDE_LAYERS
             and LAYER_OF[unit(t)] >= LAYER_OF[unit(m)] and (m, t) not in ALLOWED_ACROSS]
    assert not wrong, "\n".join(wrong)


def test_units_form_no_cycle():
    # Implied by the layers, and said on its own because a cycle is what the layers exist to prevent.
    after = defaultdict(set)
    for m, t, _ in _edges():
        if (m, t) not in ALLOWED_ACROSS:
            after[unit(m)].add(unit(t))
    seen: dict[str, int] = {}

    def visit(node: str, path: list[str]) -> None:
        seen[node] = 1
        for nxt in after[node]:
            assert seen.get(nxt) != 1, f"import cycle: {' -> '.join(path + [nxt])}"
            if nxt not in seen:
                visit(nxt, path + [nxt])
        seen[node] = 2

    for start in list(after):
        if start not in seen:
            visit(start, [start])


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one file (Tarjan 1972), each sorted: files that import
    each other, however long the way round."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found = []

    def visit(node: str) -> None:  # the package's import chains are short: recursion is enough
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in graph.get(node, ()):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while not component or component[-1] != node:
                component.append(stack.pop())
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_no_files_import_each_other():
    # Imports inside functions count: a circle hidden in one is still a circle (and an import that may fail
    # half-way, depending on which file a process imports first).
    graph = {m: {t for t, _ in targets if t != m} for m, targets in GRAPH.items()}
    circles = _circles(graph)
    named = []
    for circle in circles:
        edges = [f"{_where(m, line)} imports {t}" for m in circle for t, line in GRAPH[m] if t in circle and t != m]
        named.append(f"circle of {len(circle)} files: " + ", ".join(circle) + "\n    " + "\n    ".join(edges))
    assert not circles, "\n".join(named)


def test_circles_are_found():
    assert _circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _circles({"a": {"b"}, "b": set()}) == []


def test_the_allowed_exceptions_are_still_needed():
    used = {(m, t) for m, t, _ in _edges()}
    assert set(ALLOWED_ACROSS) <= used, "drop the exceptions no module needs any more"


@pytest.mark.parametrize("folder", ["metrics", "corruptions"])
def test_metrics_and_corruptions_import_only_the_leaves(folder):
    wrong = [f"{_where(m, line)}: {m} imports {t}" for m, t, line in _edges()
             if unit(m) == folder and unit(t) not in LEAVES]
    assert not wrong, "\n".join(wrong)


def test_front_ends_import_the_api():
    # File by file, pages included, imports inside functions included: a page reaching past the API is named
    # with its line, whatever else its folder imports.
    wrong = [f"{_where(m, line)}: {m} imports {t}" for m, t, line in _edges()
             if unit(m) in FRONT_ENDS and unit(t) not in FRONT_END_MAY_IMPORT | set(FRONT_ENDS)]
    assert not wrong, "a front-end reaches past muttlab.api; add what it needs to muttlab.api instead:\n" + \
        "\n".join(wrong)


def test_every_name_the_api_imports_when_used_is_there():
    # The names a front-end reads from muttlab.api without the API importing their modules up front: a renamed
    # function fails here, not on the one page or command that uses it.
    from muttlab import api

    missing = [name for name in api._IMPORTED_WHEN_USED if not hasattr(api, name)]
    assert not missing, f"muttlab.api names these, but their modules do not hold them: {missing}"
    assert not set(api._IMPORTED_WHEN_USED) & set(vars(api)), "a name both imported up front and when used"
    with pytest.raises(AttributeError):
        api.no_such_name  # noqa: B018


def test_the_core_never_imports_a_front_end():
    wrong = [f"{_where(m, line)}: {m} imports {t}" for m, t, line in _edges()
             if unit(t) in ("cli", "dashboard") and unit(m) not in ("cli", "dashboard", "__main__")]
    assert not wrong, "\n".join(wrong)


def test_no_optional_import_guards_around_our_own_modules():
    # Every module of the package ships in the same wheel: a try/except ImportError around one only hides a bug.
    wrong = []
    for module, path in MODULES.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Try):
                continue
            catches = {getattr(h.type, "id", None) for h in node.handlers}
            catches |= {getattr(e, "id", None) for h in node.handlers if isinstance(h.type, ast.Tuple)
                        for e in h.type.elts}
            if not catches & {"ImportError", "ModuleNotFoundError"}:
                continue
            inner = ast.Module(body=node.body, type_ignores=[])
            ours = [n for n in ast.walk(inner) if isinstance(n, (ast.Import, ast.ImportFrom))
                    and any(_resolve(name) for name in _names_of(n))]
            wrong += [f"{_where(module, n.lineno)}" for n in ours]
    assert not wrong, "\n".join(wrong)


def test_no_helper_guards_the_import_of_our_own_modules():
    # An outside package of an extra (torch, COMET) may be looked for this way: the metric registry reports it
    # unavailable with its reason. Our own modules always ship, so a guard around one only hides a bug.
    guards = GUARDS
    assert "require_module" in guards, "the search for guards finds none: metrics/base.py's require_module is one"
    wrong = []
    for module, path in MODULES.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            name = getattr(getattr(node, "func", None), "attr", getattr(getattr(node, "func", None), "id", None))
            if (isinstance(node, ast.Call) and name in guards and node.args
                    and isinstance(node.args[0], ast.Constant) and _resolve(str(node.args[0].value))):
                wrong.append(f"{_where(module, node.lineno)}: {name}({node.args[0].value!r}) "
                             f"(the guard is defined at {guards[name]})")
    assert not wrong, "\n".join(wrong)


def _names_of(node) -> list[str]:
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    return [f"{node.module}.{a.name}" for a in node.names] if node.module and not node.level else []


def test_settings_are_read_only_in_muttlab_settings():
    """Only muttlab/settings.py looks a variable up in the environment; everything else receives a Settings."""
    wrong = []
    for module, path in MODULES.items():
        if module == "muttlab.settings":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            text = ast.unparse(node) if isinstance(node, (ast.Call, ast.Subscript, ast.Compare)) else ""
            looks_up = (isinstance(node, ast.Call) and text.startswith(("os.getenv(", "os.environ.get(")))
            looks_up |= isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load) and \
                text.startswith("os.environ[")
            looks_up |= isinstance(node, ast.Compare) and "in os.environ" in text
            if looks_up:
                wrong.append(f"{_where(module, node.lineno)}: {text}")
    assert not wrong, "\n".join(wrong)


def test_the_command_line_starts_without_the_scientific_stack():
    """`muttlab --help` imports no scientific package (benchmarks/bench_startup.py times it)."""
    code = ("import contextlib, io, sys\nfrom muttlab.cli import main\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n    assert main(['--help']) == 0\n"
            f"print(','.join(m for m in {SCIENTIFIC!r} if m in sys.modules))")
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert loaded == "", f"muttlab --help imported {loaded}"


def test_the_version_is_printed_without_the_api():
    """`muttlab --version` prints the installed distribution's version and imports neither the API nor numpy."""
    from importlib import metadata

    code = ("import contextlib, io, sys\nfrom muttlab.cli import main\nout = io.StringIO()\n"
            "with contextlib.redirect_stdout(out), contextlib.suppress(SystemExit):\n    main(['--version'])\n"
            "print(out.getvalue().strip(), 'muttlab.api' in sys.modules, 'numpy' in sys.modules, sep='|')")
    shown = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert shown == f"muttlab {metadata.version('muttlab')}|False|False"
