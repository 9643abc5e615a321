"""The package, its conda mirror and its command line agree."""

from __future__ import annotations

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
