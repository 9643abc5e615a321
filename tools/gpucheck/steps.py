"""The steps of the check (:data:`gpucheck.plan.STEPS`), each filling its entry of the record.

Every step runs its commands through :func:`gpucheck.process.run` under the step's limit, so a step
that hangs or fails is recorded as such and the next one still runs with its own time.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tarfile
import xml.etree.ElementTree as ElementTree
from dataclasses import asdict, dataclass, field
from pathlib import Path

from . import process
from .plan import NVIDIA, Sizes, Variant, benchmark_variants
from .record import Record, StepRecord

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent


@dataclass
class Context:
    """What every step needs: where things are, the Python under test and the environment it runs in."""

    record: Record
    sizes: Sizes
    python: str
    kit: Path
    work: Path
    out: Path
    env: dict[str, str] = field(default_factory=lambda: dict(os.environ))

    @property
    def log(self) -> Path:
        return self.out / "gpu-check.log"

    def limit(self, entry: StepRecord) -> float:
        return entry.step.limit_s * self.sizes.limit_scale


# -- environment ------------------------------------------------------------------------------------


def environment(ctx: Context, entry: StepRecord) -> None:
    outcome = process.run([ctx.python, str(HERE / "probe.py")], ctx.limit(entry), ctx.log, ctx.env, cwd=REPO)
    if not outcome.ok:
        entry.status = "timed out" if outcome.timed_out else "failed"
        entry.notes.append(f"probe: {outcome.tail(5)}")
        return
    facts = json.loads(outcome.output.strip().splitlines()[-1])
    differs = facts.pop("image_list_differs", [])
    packages = facts.pop("image_packages", {})
    facts["commit"] = ctx.record.commit = commit(ctx.kit)
    ctx.record.device = str(facts.get("gpu") or f"CPU: {facts.get('cpu')}")
    entry.rows = [{"fact": key, "value": value} for key, value in facts.items()]
    entry.notes.append("image packages the kit was resolved against: "
                       + ", ".join(f"{name} {version}" for name, version in packages.items()))
    entry.notes += [f"differs from the kit's image list: {line}" for line in differs]
    if ctx.sizes.device == "cuda" and not facts.get("cuda_available"):
        entry.status = "failed"
        entry.notes.append("torch sees no CUDA device: every GPU step below will fail")
        return
    entry.status = "ok"


def commit(kit: Path) -> str:
    """The project's commit: git where the tree is a clone, else the one ``make gpu-kit`` wrote in the kit."""
    try:
        head = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, cwd=REPO, check=True)
        dirty = subprocess.run(["git", "status", "--porcelain"], capture_output=True, text=True, cwd=REPO).stdout
        return head.stdout.strip() + (" (modified)" if dirty.strip() else "")
    except (subprocess.SubprocessError, OSError):
        marker = kit / "COMMIT"
        return marker.read_text().strip() if marker.exists() else "unknown"


# -- kit --------------------------------------------------------------------------------------------


def kit(ctx: Context, entry: StepRecord) -> None:
    """Install the kit's wheels on top of the image, and the environment every later step runs in."""
    wheels = sorted(ctx.kit.glob("*.whl"))
    if not wheels:
        entry.status = "failed"
        entry.notes.append(f"no wheels in {ctx.kit}: run `make gpu-kit` and carry {ctx.kit} with the tree")
        return
    site, bin_dir = ctx.work / "site", ctx.work / "bin"
    shutil.rmtree(site, ignore_errors=True)
    bin_dir.mkdir(parents=True, exist_ok=True)
    install = [ctx.python, "-m", "pip", "install", "--quiet", "--no-index", "--no-deps", "--no-compile",
               "--disable-pip-version-check", "--target", str(site), *map(str, wheels)]
    outcome = process.run(install, ctx.limit(entry), ctx.log, ctx.env)
    size_mib = sum(path.stat().st_size for path in wheels) / 2**20
    entry.rows.append({"check": "install", "result": "ok" if outcome.ok else outcome.tail(3),
                       "seconds": round(outcome.seconds, 1), "detail": f"{len(wheels)} wheels, {size_mib:.1f} MiB"})
    if not outcome.ok:
        entry.status = "timed out" if outcome.timed_out else "failed"
        return
    # The project runs from src/ (no pip install of it): a `tts-pipeline` command for Snakemake's rules.
    launcher = bin_dir / "tts-pipeline"
    launcher.write_text(f'#!/bin/sh\nexec "{ctx.python}" -m tts_pipeline "$@"\n')
    launcher.chmod(0o755)
    python_bin = str(Path(ctx.python).parent)
    ctx.env.update(
        PYTHONPATH=os.pathsep.join([str(site), str(REPO / "src")]),
        PATH=os.pathsep.join([str(bin_dir), str(site / "bin"), python_bin, ctx.env.get("PATH", "")]),
        MPLBACKEND="Agg",
        PYTHONUNBUFFERED="1",
    )
    remaining = max(ctx.limit(entry) - outcome.seconds, 5)
    checks = {
        "pip check": [ctx.python, "-m", "pip", "check"],
        "imports": [ctx.python, "-c", "import tts_pipeline.cli, tts_pipeline.stages.benchmark, "
                    "tts_pipeline.training.hifigan, tts_pipeline.training.fastpitch, mlflow, librosa, parselmouth, "
                    "soundfile, snakemake; print('imports ok')"],
        "snakemake": [str(site / "bin" / "snakemake"), "--version"],
    }
    failed = False
    for name, command in checks.items():
        result = process.run(command, remaining / len(checks), ctx.log, ctx.env, cwd=REPO)
        verdict = "ok" if result.ok else "problems"
        if name == "pip check" and not result.ok:
            # Requirements on the packages the kit leaves out on purpose are expected; any other is a finding.
            others = [line for line in result.output.splitlines() if line.strip() and not _left_out(line)]
            # The image's own packages may disagree among themselves: recorded for a person to read, not fatal.
            verdict = "ok (only packages left out on purpose)" if not others else "problems (see detail)"
        else:
            failed |= not result.ok
        entry.rows.append({"check": name, "result": verdict, "seconds": round(result.seconds, 1),
                           "detail": result.tail(6)})
    entry.status = "failed" if failed else "ok"


def _left_out(pip_check_line: str) -> bool:
    """Whether a ``pip check`` line is about a package of ``tools/gpu-kit/left-out.txt``, or about the
    project's own metadata (an editable install's ``src/*.egg-info`` names the full dependency list)."""
    left_out = [line.split("#")[0].strip() for line in (REPO / "tools/gpu-kit/left-out.txt").read_text().splitlines()]
    names = {name.lower() for name in left_out if name}
    words = {word.strip(",.").lower() for word in pip_check_line.split()}
    return bool(names & words) or pip_check_line.lower().startswith("tts-pipeline ")


# -- tests ------------------------------------------------------------------------------------------


def gpu_tests(ctx: Context, entry: StepRecord) -> None:
    report = ctx.out / "gpu-tests.xml"
    command = [ctx.python, "-m", "pytest", "-m", "gpu", "-q", "-p", "no:cacheprovider", "-rfEs",
               "--continue-on-collection-errors", f"--junitxml={report}", "tests"]
    outcome = process.run(command, ctx.limit(entry), ctx.log, ctx.env, cwd=REPO)
    counts, failures = junit_summary(report) if report.exists() else ({}, [])
    entry.rows = [{"outcome": key, "tests": value} for key, value in counts.items()]
    entry.rows += [{"outcome": "failed: " + name, "tests": message} for name, message in failures]
    entry.notes.append(f"pytest: {outcome.tail(1)}")
    if outcome.timed_out:
        entry.status = "timed out"
    else:
        entry.status = "ok" if outcome.ok or (outcome.returncode == 5 and not failures) else "failed"


def junit_summary(report: Path) -> tuple[dict[str, int], list[tuple[str, str]]]:
    """Counts of passed / failed / errors / skipped, and each failure's test name and first message line."""
    root = ElementTree.parse(report).getroot()
    counts = {"passed": 0, "failed": 0, "errors": 0, "skipped": 0}
    failures = []
    for case in root.iter("testcase"):
        problem = next((child for child in case if child.tag in ("failure", "error")), None)
        skipped = next((child for child in case if child.tag == "skipped"), None)
        if problem is not None:
            counts["failed" if problem.tag == "failure" else "errors"] += 1
            name = f"{case.get('classname', '')}::{case.get('name', '')}"
            failures.append((name, (problem.get("message") or "").splitlines()[0][:200] if problem.get("message")
                             else ""))
        elif skipped is not None:
            counts["skipped"] += 1
        else:
            counts["passed"] += 1
    return counts, failures


# -- benchmarks -------------------------------------------------------------------------------------


def benchmark(ctx: Context, entry: StepRecord) -> None:
    """Run the step's variants in one process and turn each result into a row."""
    planned = benchmark_variants(entry.step.name, ctx.sizes)
    variants = [variant for variant in planned if ctx.sizes.device == "cuda" or not variant.gpu_only]
    spec = ctx.work / f"{entry.step.name}.spec.json"
    results = ctx.work / f"{entry.step.name}.results.jsonl"
    spec.parent.mkdir(parents=True, exist_ok=True)
    spec.write_text(json.dumps([asdict(variant) for variant in variants]))
    results.unlink(missing_ok=True)
    outcome = process.run([ctx.python, str(HERE / "variants.py"), str(spec), str(results)], ctx.limit(entry),
                          ctx.log, ctx.env, cwd=REPO)
    entry.notes += [f"{variant.name}: `tts-pipeline {' '.join(variant.argv)} {variant.flag} N`" for variant in variants]
    done = [json.loads(line) for line in results.read_text().splitlines()] if results.exists() else []
    by_name = {variant.name: variant for variant in variants}
    entry.rows = [benchmark_row(entry.step.name, by_name[result["name"]], result) for result in done]
    entry.rows += [{"variant": variant.name, "status": "skipped: GPU only (compiling takes minutes on a CPU; "
                    "CUDA graphs need CUDA)"} for variant in planned if variant not in variants]
    missing = [variant.name for variant in variants if variant.name not in {result["name"] for result in done}]
    if missing:
        entry.notes.append("not measured (the step ran out of time): " + ", ".join(missing))
    failed = [result for result in done if result["status"] != "ok"]
    entry.notes += [f"{result['name']}: {result['status']}: {result.get('error', '')}" for result in failed]
    entry.status = "timed out" if outcome.timed_out else ("ok" if outcome.ok and not failed else "failed")


def benchmark_row(step: str, variant: Variant, result: dict) -> dict:
    """One table row: the variant, its batch and figures, and NVIDIA's figure beside ours."""
    row: dict = {"variant": variant.name, "batch": result.get("batch"), "status": result["status"]}
    figures = result.get("result") or {}
    if step == "train-hifigan":
        row.update(frames_per_s=_find(figures, "frames_per_s"),
                   nvidia_unit_frames_per_s=_find(figures, "frames_per_s_nvidia_units"),
                   step_s=_find(figures, "median_step_seconds"))
        ours = row["nvidia_unit_frames_per_s"]
    elif step == "train-fastpitch":
        row.update(frames_per_s=_find(figures, "median_frames_per_s"),
                   steps_per_s=_find(figures, "median_steps_per_s"))
        ours = row["frames_per_s"]
    else:
        medians = figures.get("medians", {})
        row.update(fastpitch_ms=medians.get("fastpitch_p50_ms"), hifigan_ms=medians.get("hifigan_p50_ms"),
                   total_ms=medians.get("total_p50_ms"), x_real_time=medians.get("total_x_real_time"))
        ours = row["total_ms"]
    if variant.nvidia is not None:
        figure = NVIDIA[variant.nvidia]
        row["nvidia_a100"] = figure.value * 1000 if figure.unit == "s" else figure.value
        if isinstance(ours, (int, float)) and ours:
            # Throughputs: ours / theirs; latencies: theirs / ours. Both read "x times NVIDIA's".
            row["vs_nvidia"] = round(ours / row["nvidia_a100"] if step != "inference" else row["nvidia_a100"] / ours,
                                     2)
    return row


def _find(figures: dict, *keys: str):
    """The first of ``keys`` found in ``figures`` or one level down (``{"median": {...}}`` layouts)."""
    for key in keys:
        if figures.get(key) is not None:
            return figures[key]
    for value in figures.values():
        if isinstance(value, dict):
            found = _find(value, *keys)
            if found is not None:
                return found
    return None


# -- the demo ---------------------------------------------------------------------------------------


def demo(ctx: Context, entry: StepRecord) -> None:
    """The demo DAG on the device, then its audio, models and benchmark report packed for the way back."""
    overlays = list(ctx.sizes.demo_overlays)
    command = [str(ctx.work / "site" / "bin" / "snakemake"), "--configfile", *overlays,
               "--cores", str(ctx.sizes.demo_cores), "--resources", f"gpu={ctx.sizes.gpu_resources}",
               "--scheduler", "greedy", "--quiet", "reason"]
    outcome = process.run(command, ctx.limit(entry), ctx.log, ctx.env, cwd=REPO)
    experiment = experiment_dir(overlays)
    entry.rows = stage_rows(experiment)
    entry.notes += pack_demo(experiment, ctx.out)
    if not outcome.ok:
        entry.notes.append(f"snakemake: {outcome.tail(8)}")
    entry.status = "timed out" if outcome.timed_out else ("ok" if outcome.ok else "failed")


def experiment_dir(overlays: list[str]) -> Path:
    """``<results_dir>/<experiment>`` of the overlaid configs (later files win, as in Snakemake)."""
    import yaml

    config: dict = {}
    for path in overlays:
        config.update({key: value for key, value in (yaml.safe_load((REPO / path).read_text()) or {}).items()
                       if key in ("results_dir", "experiment")})
    return REPO / config.get("results_dir", "results") / config["experiment"]


TRAINING_OUTPUTS = {"train_aligner": "aligner", "train_hifigan": "hifigan", "train_fastpitch": "fastpitch",
                    "finetune_hifigan": "hifigan_finetuned"}
"""The output folder (under ``R/``) of each training job, where its ``metrics.json`` lies."""


def stage_rows(experiment: Path) -> list[dict]:
    """Per job: wall time (Snakemake's benchmark file) and, for the training stages, their final figures."""
    rows = []
    for tsv in sorted((experiment / "benchmarks").glob("*.tsv"), key=lambda path: path.stat().st_mtime):
        header, values = tsv.read_text().splitlines()[:2]
        seconds = float(dict(zip(header.split("\t"), values.split("\t"), strict=False))["s"])
        row = {"job": tsv.stem, "wall_s": seconds}
        metrics_path = experiment / TRAINING_OUTPUTS.get(tsv.stem, tsv.stem) / "metrics.json"
        if metrics_path.exists():
            metrics = json.loads(metrics_path.read_text())
            for key in ("device", "amp", "step", "frames_per_s", "val_loss_mel", "val_loss"):
                if isinstance(metrics.get(key), (str, int, float)):
                    row[key] = metrics[key]
        rows.append(row)
    return rows


DEMO_AUDIO = ("inference/*", "benchmark/*", "benchmark/audio/*", "benchmark/figures/*", "data/*.jsonl", "data/*.json",
              "*/metrics.json", "benchmarks/*.tsv", "logs/*.log")
DEMO_MODELS = ("fastpitch/model.pt", "hifigan_finetuned/model.pt", "hifigan/model.pt")
MAX_BACK_BYTES = 15 * 2**20
"""A file that comes back from the device machine may hold 16 MiB."""


def pack_demo(experiment: Path, out: Path) -> list[str]:
    """``demo-audio.tar.gz`` and ``demo-models.tar.gz`` in ``out``, and the benchmark's Markdown beside them."""
    notes = []
    if not experiment.exists():
        return [f"no demo outputs in {experiment.relative_to(REPO)}"]
    report = experiment / "benchmark" / "report.md"
    if report.exists():
        shutil.copyfile(report, out / "demo-benchmark.md")
    for name, patterns in (("demo-audio", DEMO_AUDIO), ("demo-models", DEMO_MODELS)):
        files = sorted({path for pattern in patterns for path in experiment.glob(pattern) if path.is_file()})
        archive = out / f"{name}.tar.gz"
        with tarfile.open(archive, "w:gz") as tar:
            for path in files:
                tar.add(path, arcname=str(path.relative_to(experiment.parent)))
        size = archive.stat().st_size
        if size > MAX_BACK_BYTES:
            archive.unlink()
            notes.append(f"{archive.name}: {size / 2**20:.1f} MiB is too big to come back; left out")
        else:
            notes.append(f"{archive.name}: {len(files)} files, {size / 2**20:.1f} MiB")
    return notes


STEP_FUNCTIONS = {
    "environment": environment,
    "kit": kit,
    "gpu-tests": gpu_tests,
    "train-hifigan": benchmark,
    "train-fastpitch": benchmark,
    "inference": benchmark,
    "demo": demo,
}

