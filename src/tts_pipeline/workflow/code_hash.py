"""The code hash of a stage: Snakemake reruns a stage when a package source file it runs changes.

A rule's ``params`` carry the hash of the stage module's import closure inside the package (found by
reading the files, not by importing them), so editing a module reruns exactly the stages that import
it, directly or not.
"""

from __future__ import annotations

import ast
import hashlib
import importlib.util
from functools import cache
from pathlib import Path

from tts_pipeline import stage_table

PACKAGE = "tts_pipeline"

# Left out of every code hash: the stage table and this workflow layer are wiring, and what they hand
# a stage (its config slice, its paths) reaches its rule through ``params`` and files that Snakemake
# tracks itself; hashing them would rerun every stage when a row or a path helper is added. (Stages
# import the stage table to check their ``--section`` and, run by hand, to cut it from ``--config``.)
UNHASHED_MODULES = frozenset({f"{PACKAGE}.stage_table", f"{PACKAGE}.workflow"})


def _unhashed(module: str) -> bool:
    return any(module == name or module.startswith(name + ".") for name in UNHASHED_MODULES)



def _package_dir() -> Path:
    spec = importlib.util.find_spec(PACKAGE)
    assert spec is not None and spec.submodule_search_locations, f"{PACKAGE} is not importable"
    return Path(next(iter(spec.submodule_search_locations)))


def _module_file(module: str) -> Path | None:
    """The source file of a package module, found on disk without importing anything."""
    base = _package_dir().joinpath(*module.split(".")[1:])
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def _package_imports(module: str, path: Path) -> set[str]:
    """Modules of this package imported (anywhere, also inside functions) by one source file."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    is_package = path.name == "__init__.py"
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative import: resolve against this module's package
                base_parts = module.split(".")[: len(module.split(".")) - node.level + (1 if is_package else 0)]
                base = ".".join(base_parts + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            # "from pkg import name" may name a submodule or an attribute; keep both candidates.
            names = [base] + [f"{base}.{alias.name}" for alias in node.names]
        else:
            continue
        for name in names:
            if name == PACKAGE or name.startswith(PACKAGE + "."):
                found.add(name)
    return found


@cache
def source_files(module: str) -> tuple[Path, ...]:
    """Every package source file ``module`` depends on: its import closure within the package,
    including each imported module's parent ``__init__`` files. Sorted, for a stable hash."""
    seen: dict[str, Path] = {}
    pending = [module]
    while pending:
        name = pending.pop()
        if name in seen or _unhashed(name):
            continue
        parts = name.split(".")
        parents = [".".join(parts[:i]) for i in range(1, len(parts))]
        path = _module_file(name)
        if path is None:  # an attribute imported with "from x import y", not a module
            seen[name] = Path()
            continue
        seen[name] = path
        pending.extend(parents)
        pending.extend(_package_imports(name, path))
    return tuple(sorted({p for p in seen.values() if p != Path()}))


def code_hash(stage: str) -> str:
    """SHA-256 (12 hex digits) of the sources a stage runs, keyed by path inside the package."""
    digest = hashlib.sha256()
    for path in source_files(stage_table.stage(stage).module):
        relative = path.as_posix().rsplit(f"/{PACKAGE}/", 1)[-1]
        digest.update(relative.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:12]
