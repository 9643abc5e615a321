"""The GPU kit's lists (tools/gpu-kit): hash-locked, the same for both Pythons, apart from the image's packages,
and together with the image and the left-out list covering every runtime dependency of the project."""

from __future__ import annotations

import importlib.metadata
import re
import tomllib

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from ..conftest import REPO

KIT = REPO / "tools" / "gpu-kit"
TAGS = ("cp312", "cp311")
# One kit line: name==version, one sha256, and an optional comment (the sdist mark).
LOCK_LINE = re.compile(r"(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)==(?P<version>\S+) --hash=sha256:[0-9a-f]{64}(  # .+)?")
# image.txt's versions as the GPU machine's Python sees them.
GPU_PYTHON = {"python_version": "3.12", "python_full_version": "3.12.3"}


def _lines(name: str) -> list[str]:
    return [line for line in (KIT / name).read_text().splitlines() if line.strip() and not line.startswith("#")]


def _kit(tag: str) -> dict[str, str]:
    """name -> version of a kit list."""
    matches = [LOCK_LINE.fullmatch(line) for line in _lines(f"{tag}.txt")]
    return {canonicalize_name(match["name"]): match["version"] for match in matches if match}


def _image() -> dict[str, str]:
    """name -> version of image.txt, for the GPU machine's Python."""
    requirements = [Requirement(line) for line in _lines("image.txt")]
    return {
        canonicalize_name(req.name): str(req.specifier).removeprefix("==")
        for req in requirements
        if req.marker is None or req.marker.evaluate(GPU_PYTHON)
    }


def _image_names() -> set[str]:
    """Every package the image has: image.txt's pins and its ``# image-names:`` lines."""
    listed = re.findall(r"^# image-names:(.*)$", (KIT / "image.txt").read_text(), re.M)
    return {canonicalize_name(name) for line in listed for name in line.split()} | set(_image())


def _left_out() -> dict[str, str]:
    """name -> reason of left-out.txt."""
    entries = [line.split("#", 1) for line in _lines("left-out.txt")]
    return {canonicalize_name(entry[0].strip()): entry[1].strip() if len(entry) > 1 else "" for entry in entries}


def _runtime_dependencies() -> list[Requirement]:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    return [Requirement(spec) for spec in project["dependencies"]]


@pytest.mark.parametrize("tag", TAGS)
def test_every_kit_line_is_hash_pinned(tag):
    lines = _lines(f"{tag}.txt")
    assert lines, f"{tag}.txt is empty: run tools/gpu-kit/lock"
    assert [line for line in lines if not LOCK_LINE.fullmatch(line)] == []
    assert len(_kit(tag)) == len(lines), "a package is locked twice"


def test_both_pythons_get_the_same_packages_at_the_same_versions():
    assert _kit("cp312") == _kit("cp311")


def test_the_kit_carries_no_package_of_the_image():
    # On the GPU machine the kit comes first on PYTHONPATH: a package in both would shadow the image's build.
    assert sorted(set(_kit("cp312")) & _image_names()) == []


def test_image_txt_pins_exact_versions():
    for line in _lines("image.txt"):
        requirement = Requirement(line)
        assert re.fullmatch(r"==[^,*]+", str(requirement.specifier)), line


def test_every_left_out_package_says_why():
    assert {name: reason for name, reason in _left_out().items() if len(reason) < 20} == {}


def test_every_runtime_dependency_is_covered_within_its_range():
    """Each of [project].dependencies is in the kit or the image at a version it accepts, or is left out."""
    kit, image, left_out = _kit("cp312"), _image(), _left_out()
    uncovered = []
    for requirement in _runtime_dependencies():
        name = canonicalize_name(requirement.name)
        version = kit.get(name) or image.get(name)
        if name in left_out:
            continue
        if version is None or not requirement.specifier.contains(version, prereleases=True):
            uncovered.append(f"{requirement} (kit or image: {version})")
    assert uncovered == []


def test_mlflow_is_replaced_by_its_tracking_client_in_the_project_range():
    mlflow = next(req for req in _runtime_dependencies() if req.name == "mlflow")
    kit = _kit("cp312")
    assert "mlflow" in _left_out() and "mlflow" not in kit
    assert mlflow.specifier.contains(kit["mlflow-skinny"])
    assert {"sqlalchemy", "alembic"} <= set(kit), "mlflow's SQLite store needs them"


def _installed(name: str) -> bool:
    try:
        importlib.metadata.distribution(name)
    except importlib.metadata.PackageNotFoundError:
        return False
    return True


def _project_closure() -> set[str]:
    """Every distribution the installed project requires, directly or not (no extras), as installed here."""
    # The walk reads installed metadata: it needs the project and the left-out packages (the development venv
    # has them; the kit's environment on the GPU machine does not, by design).
    missing = [name for name in ["tts-pipeline", *_left_out()] if not _installed(name)]
    if missing:
        pytest.skip(f"not installed here: {missing} (make setup installs them)")
    seen: set[str] = set()
    todo = ["tts-pipeline"]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        try:
            requires = importlib.metadata.requires(name) or []
        except importlib.metadata.PackageNotFoundError:
            continue  # a dependency of another platform or Python, not installed here
        for spec in requires:
            requirement = Requirement(spec)
            if requirement.marker is None or requirement.marker.evaluate({"extra": ""}):
                todo.append(canonicalize_name(requirement.name))
    return seen


def test_every_left_out_package_is_a_dependency_of_the_project():
    closure = _project_closure()
    assert sorted(set(_left_out()) - closure) == []
