"""The package, its conda mirror and its command line agree."""

from __future__ import annotations

import ast
import importlib.metadata
import re
import subprocess
import sys
import tomllib

import pytest
import yaml

from tts_pipeline.cli import COMMANDS

from ..conftest import REPO


def test_conda_env_mirrors_pyproject_dependencies():
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["dependencies"]
    env = yaml.safe_load((REPO / "workflow/envs/tts.yaml").read_text())
    pip = next(item["pip"] for item in env["dependencies"] if isinstance(item, dict) and "pip" in item)
    assert "-e ../.." in pip, "the environment must install the project itself"
    assert sorted(spec for spec in pip if spec != "-e ../..") == sorted(project)


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_every_command_has_help(command):
    result = subprocess.run(
        [sys.executable, "-m", "tts_pipeline", command, "--help"], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr
    assert "usage: tts-pipeline" in result.stdout


def test_top_level_help_lists_every_command():
    result = subprocess.run([sys.executable, "-m", "tts_pipeline", "--help"], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    for command in COMMANDS:
        assert command in result.stdout


# Imported modules whose distribution metadata does not name them (compiled extension only).
MODULE_DISTRIBUTIONS = {"parselmouth": "praat-parselmouth"}
# Declared for its command, not imported: the workflow engine runs the rules.
COMMAND_ONLY = {"snakemake"}


def _distribution_name(requirement: str) -> str:
    return re.sub(r"[-_.]+", "-", re.split(r"[<>=!~ ;\[]", requirement, maxsplit=1)[0]).lower()


def _imported_modules() -> set[str]:
    """Top-level names of every absolute import in ``src/`` (also those inside functions)."""
    names: set[str] = set()
    for path in (REPO / "src").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names.add(node.module.split(".")[0])
    return names - set(sys.stdlib_module_names) - {"tts_pipeline", "__future__"}


def test_declared_dependencies_are_exactly_the_imported_ones():
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    # the server's extra counts: its modules import fastapi, uvicorn, prometheus_client, httpx
    specs = [*project["dependencies"], *project["optional-dependencies"]["serve"]]
    declared = {_distribution_name(spec) for spec in specs}
    owners = importlib.metadata.packages_distributions()
    used: set[str] = set()
    undeclared = []
    for module in sorted(_imported_modules()):
        candidates = {_distribution_name(d) for d in owners.get(module, [MODULE_DISTRIBUTIONS.get(module, module)])}
        used |= candidates
        if not candidates & declared:
            undeclared.append(f"{module} (from {sorted(candidates)})")
    assert not undeclared, f"imported in src/ but not in [project.dependencies] or the serve extra: {undeclared}"
    assert declared - used - COMMAND_ONLY == set(), "declared in [project.dependencies] but never imported"
