"""The package's imports point down its layers and close no circle; synthesis and benchmarks never pull
in training code.

:data:`LAYERS` lists the package's parts (its top-level modules and subpackages), lowest first. A
module may import the modules of its own part and of the parts in lower layers, never a part beside
its own in the same layer or above it. An import inside a function counts as much as one at the top of
the file: it hides an arrow from Python's start-up, not from the design. Inside a part, modules import
each other in whatever order closes no circle.

Besides the layers, no module of ``inference/``, ``models/`` or ``benchmark/`` imports
``tts_pipeline.training``: synthesis and the benchmarks run without training code.
"""

from __future__ import annotations

import ast
import graphlib
import sys
from pathlib import Path

import pytest

import tts_pipeline

PACKAGE = "tts_pipeline"
PACKAGE_ROOT = Path(tts_pipeline.__file__).parent
ROOT_PART = "__init__"  # the package's own __init__.py, which Python runs before any of its modules

LAYERS: tuple[tuple[str, ...], ...] = (
    (ROOT_PART,),
    # import nothing of the package
    ("cpu", "errors", "failure", "files", "interleaved", "process_pool", "sizes", "snr", "stage_table", "stop_request",
     "timers"),
    ("alignment", "devices", "full_disk", "plots", "precision", "text"),  # helpers on those
    ("config",),
    ("audio", "data", "tracking"),  # what reads the config
    ("models",),
    ("features", "inference", "training"),  # what runs the models
    ("preflight",),  # settings checked against the data, memory and time they imply
    ("benchmark", "export"),  # measuring the models; exporting them for serving
    ("report", "serving"),  # results shown in the HTML report; the exported voice served
    ("stages",),  # the workflow's steps
    ("workflow",),  # what the Snakefile calls to run them
    ("commands",),
    ("cli",),
    ("__main__",),
)
LAYER_OF = {entry: index for index, layer in enumerate(LAYERS) for entry in layer}

GUARDED = ("inference", "models", "benchmark", "export")
FORBIDDEN = f"{PACKAGE}.training"


def module_name(path: Path) -> str:
    """``<package>/models/fastpitch/data.py`` -> ``tts_pipeline.models.fastpitch.data``; a package is
    named by its ``__init__.py``."""
    parts = path.relative_to(PACKAGE_ROOT).with_suffix("").parts
    return ".".join((PACKAGE, *(parts[:-1] if parts[-1] == "__init__" else parts)))


def package_files() -> list[Path]:
    return sorted(PACKAGE_ROOT.rglob("*.py"))


def package_modules() -> dict[str, Path]:
    return {module_name(path): path for path in package_files()}


def relative(path: Path) -> str:
    return str(path.relative_to(PACKAGE_ROOT))


def imports(path: Path) -> list[tuple[str, list[str]]]:
    """Every import of a file, anywhere in it, as (absolute module, names imported from it); relative
    imports resolved, ``import x`` as ``(x, [])``."""
    package = ".".join((PACKAGE, *path.relative_to(PACKAGE_ROOT).parent.parts))
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            found.extend((alias.name, []) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                module = ".".join([*base, node.module] if node.module else base)
            else:
                module = node.module or ""
            found.append((module, [alias.name for alias in node.names]))
    return found


def imported_modules(path: Path) -> list[str]:
    """Absolute names of every module a file imports; ``from x import y`` gives ``x`` and ``x.y``, since
    ``y`` may be a submodule (``from tts_pipeline import training`` imports the package)."""
    return [name for module, names in imports(path) for name in (module, *(f"{module}.{name}" for name in names))]


def in_package(name: str) -> bool:
    return name == PACKAGE or name.startswith(f"{PACKAGE}.")


def part(name: str) -> str:
    """The part a module belongs to: ``tts_pipeline.models.fastpitch`` -> ``models``; the package itself,
    and a name imported from it that is no module (``__version__``), -> ``__init__``."""
    parts = name.split(".")
    if len(parts) > 1 and ((PACKAGE_ROOT / parts[1]).is_dir() or (PACKAGE_ROOT / f"{parts[1]}.py").is_file()):
        return parts[1]
    return ROOT_PART


def upward_imports(path: Path) -> list[str]:
    """The package modules a file imports from another part of its own layer or a higher one."""
    own = part(module_name(path))
    top = len(LAYERS)  # a part missing from LAYERS ranks above all (test_every_part_has_one_layer)
    return sorted(
        name
        for name in set(imported_modules(path))
        if in_package(name) and part(name) != own and LAYER_OF.get(part(name), top) >= LAYER_OF.get(own, top)
    )


def is_within(name: str, package: str) -> bool:
    return name == package or name.startswith(f"{package}.")


def module_arrows(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The package modules that importing module ``name`` (file ``path``) runs: each one it imports
    (``from x import y``: ``x.y`` when that is a module, else ``x``), and the packages above those,
    except the packages ``name`` itself is in (Python has already started them)."""
    arrows = set()
    for module, names in imports(path):
        targets = [f"{module}.{item}" if f"{module}.{item}" in modules else module for item in names]
        for target in targets or [module]:
            parts = target.split(".")
            above = (".".join(parts[:end]) for end in range(1, len(parts)))
            arrows.update(package for package in above if package in modules and not is_within(name, package))
            if target in modules and target != name:
                arrows.add(target)
    return arrows


def import_circle() -> list[str]:
    """One circle of module imports, as the modules along it, or ``[]``."""
    modules = package_modules()
    graph = {name: module_arrows(name, path, modules) for name, path in modules.items()}
    try:
        graphlib.TopologicalSorter(graph).prepare()
    except graphlib.CycleError as error:
        return list(error.args[1])
    return []


# --------------------------------------------------------------------------------------------------
# the layers
# --------------------------------------------------------------------------------------------------


def test_every_part_has_one_layer():
    listed = [entry for layer in LAYERS for entry in layer]
    assert len(listed) == len(set(listed)), "a part listed twice"
    parts = {part(name) for name in package_modules()}
    assert set(listed) == parts, "LAYERS and the package's top-level modules and subpackages differ"


@pytest.mark.parametrize("path", package_files(), ids=relative)
def test_imports_point_down_the_layers(path):
    offending = upward_imports(path)
    assert not offending, f"{relative(path)} (part {part(module_name(path))}) imports {offending}"


def test_no_import_circle():
    circle = import_circle()
    assert not circle, "import circle: " + " -> ".join(circle)


def write_package(root: Path, files: dict[str, str]) -> None:
    for name, source in {"__init__.py": "", **files}.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(source + "\n", encoding="utf-8")


@pytest.mark.parametrize(
    ("source", "where", "upward"),
    [
        ("from tts_pipeline.config import AudioConfig", "models/x.py", False),
        ("from tts_pipeline import files", "config/x.py", False),
        ("from tts_pipeline import __version__", "errors.py", False),
        ("from . import y", "models/x.py", False),  # its own part
        ("from tts_pipeline.inference.denoiser import Denoiser", "models/x.py", True),
        ("def f():\n    from tts_pipeline.workflow import Pipeline", "stages/x.py", True),  # a layer above
        ("from tts_pipeline import tracking", "config/x.py", True),
        ("from ..features import layout", "models/x.py", True),
        ("import tts_pipeline.cli", "commands/x.py", True),
    ],
)
def test_the_layer_check_sees_every_upward_import(tmp_path, monkeypatch, source, where, upward):
    monkeypatch.setattr(sys.modules[__name__], "PACKAGE_ROOT", tmp_path)
    parts = ["errors.py", "files.py", "workflow/pipeline.py", "cli.py"]
    parts += [f"{folder}/__init__.py" for folder in ("config", "tracking", "models", "features", "inference")]
    write_package(tmp_path, {**dict.fromkeys(parts, ""), where: source})
    assert bool(upward_imports(tmp_path / where)) is upward


@pytest.mark.parametrize(
    ("files", "circle"),
    [
        ({"a.py": "import tts_pipeline.b", "b.py": "def f():\n    from tts_pipeline.a import x"}, True),
        ({"a.py": "from tts_pipeline.p import y", "p/__init__.py": "from tts_pipeline.a import x"}, True),
        ({"p/__init__.py": "from tts_pipeline.p.x import X", "p/x.py": "from tts_pipeline.p import P"}, True),
        # a package that gathers its modules, whose modules import each other through it
        ({"p/__init__.py": "from tts_pipeline.p.x import X", "p/x.py": "from tts_pipeline.p import y"}, False),
        ({"a.py": "import tts_pipeline.b", "b.py": "import numpy"}, False),
    ],
)
def test_the_circle_check_sees_circles(tmp_path, monkeypatch, files, circle):
    monkeypatch.setattr(sys.modules[__name__], "PACKAGE_ROOT", tmp_path)
    write_package(tmp_path, {"p/y.py": "", **files})
    assert bool(import_circle()) is circle


# --------------------------------------------------------------------------------------------------
# no training code in synthesis and benchmarks
# --------------------------------------------------------------------------------------------------


def is_training(name: str) -> bool:
    return name == FORBIDDEN or name.startswith(f"{FORBIDDEN}.")


def guarded_files() -> list[Path]:
    return sorted(path for folder in GUARDED for path in (PACKAGE_ROOT / folder).rglob("*.py"))


def test_the_guarded_folders_have_modules():
    files = guarded_files()
    for folder in GUARDED:
        assert any(path.is_relative_to(PACKAGE_ROOT / folder) for path in files), folder


@pytest.mark.parametrize("path", guarded_files(), ids=relative)
def test_no_training_import(path):
    offending = sorted({name for name in imported_modules(path) if is_training(name)})
    assert not offending, f"{relative(path)} imports {offending}"


@pytest.mark.parametrize(
    ("source", "where", "expected"),
    [
        ("import tts_pipeline.training.engine", "inference/x.py", True),
        ("def f():\n    from tts_pipeline.training import hifigan", "inference/x.py", True),
        ("from tts_pipeline import training", "models/x.py", True),
        ("from ..training import loop", "benchmark/x.py", True),
        ("from ...training.checkpoint import Checkpoint", "models/hifigan/x.py", True),
        ("from . import training", "benchmark/x.py", False),  # tts_pipeline.benchmark.training
        ("from tts_pipeline.trainingwheels import x", "models/x.py", False),
        ("from tts_pipeline.timers import Timer", "inference/x.py", False),
    ],
)
def test_the_check_sees_every_form_of_import(tmp_path, monkeypatch, source, where, expected):
    monkeypatch.setattr(sys.modules[__name__], "PACKAGE_ROOT", tmp_path)
    path = tmp_path / where
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(source + "\n", encoding="utf-8")
    assert any(is_training(name) for name in imported_modules(path)) is expected
