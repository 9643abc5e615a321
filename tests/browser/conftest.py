"""What the browser tests share: one tiny demo run, one headless Chromium, a folder for screenshots."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from ..workflow.test_data_workflow import snakemake, tiny_demo


def chromium_executable() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    pytest.fail("no chromium on PATH: `make test-browser` installs Debian's chromium")


@pytest.fixture(scope="session")
def tiny_run(tmp_path_factory) -> tuple[Path, Path]:
    """The tiny demo DAG run for real: ``(working directory, config)``.

    ``$REPORT_RUN_DIR`` names a working directory to run it in instead of a fresh one: a finished tiny
    run there is brought up to date (only what changed reruns) rather than run again.
    """
    chosen = os.environ.get("REPORT_RUN_DIR")
    workdir = Path(chosen) if chosen else tmp_path_factory.mktemp("report_run")
    config = tiny_demo(workdir)
    snakemake(workdir, config=config)
    return workdir, config


@pytest.fixture(scope="session")
def browser():
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.fail("Playwright is missing: `make test-browser` installs the browser extra (.[browser])")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium_executable(), headless=True)
        yield browser
        browser.close()


@pytest.fixture(scope="session")
def screenshot_dir(tmp_path_factory) -> Path:
    """``$REPORT_SCREENSHOT_DIR`` when set (``docs/`` holds the ones the README shows), else a temporary one."""
    chosen = os.environ.get("REPORT_SCREENSHOT_DIR")
    path = Path(chosen) if chosen else tmp_path_factory.getbasetemp() / "screenshots"
    path.mkdir(parents=True, exist_ok=True)
    return path
