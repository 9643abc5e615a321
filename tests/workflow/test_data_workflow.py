"""The workflow through Snakemake: lint, dry runs, corpus + manifest for real, reruns, bad config."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
import yaml

from tts_pipeline.benchmark.inference import plan_precisions

from ..conftest import REPO

pytestmark = pytest.mark.slow

STAGES = (
    "corpus",
    "manifest",
    "features",
    "train_aligner",
    "durations",
    "train_hifigan",
    "train_fastpitch",
    "extract_fastpitch_mels",
    "finetune_hifigan",
    "synthesize",
    "benchmark",
    "export_voice",
)

BIN = Path(sys.executable).parent


def snakemake(workdir: Path, *args: str, config: Path | None = None, check: bool = True) -> subprocess.CompletedProcess:
    """Run Snakemake on the repository's workflow in ``workdir`` with the package's command on PATH."""
    command = [
        str(BIN / "snakemake"),
        "--snakefile", str(REPO / "workflow/Snakefile"),
        "--workflow-profile", str(REPO / "workflow/profiles/default"),
        "--directory", str(workdir),
        "--cores", "2",
    ]
    command += args  # before --configfile, which would take a target as one more config file
    if config is not None:
        command += ["--configfile", str(config)]
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}"}
    env = {key: value for key, value in env.items() if not key.startswith("TTS_")}
    result = subprocess.run(command, capture_output=True, text=True, env=env, cwd=workdir)
    if check and result.returncode != 0:
        raise AssertionError(f"snakemake {' '.join(args)} failed:\n{result.stdout}\n{result.stderr}")
    return result


def jobs(result: subprocess.CompletedProcess) -> set[str]:
    """The rules Snakemake ran (or, in a dry run, would run): each job's message line starts with its rule."""
    lines = (result.stdout + result.stderr).splitlines()
    return {m.group(1) for line in lines if (m := re.match(r"(?:Job \d+: |localrule )(\w+):", line))}


def tiny_demo(workdir: Path, **changes) -> Path:
    """config/demo.yaml shrunk to 24 utterances and a tiny aligner, written into ``workdir``."""
    config = yaml.safe_load((REPO / "config/demo.yaml").read_text())
    config["corpus"]["demo"]["n_utterances"] = 24
    config["data"]["split"].update(val_size=3, test_size=3)
    config["aligner"].update(epochs=2, embedding_dim=32, checkpoint_every_n_steps=2)
    config["hifigan"].update(
        upsample_initial_channel=16, resblock_kernel_sizes=[3], resblock_dilation_sizes=[[1, 3]],
        mpd_periods=[2, 3], discriminator_channels_scale=0.0625, segment_size=2048,
        global_batch_size=4, batch_size=4, epochs=2, validation_every_n_epochs=1,
        samples_every_n_epochs=2, n_samples=1, checkpoint_every_n_epochs=1, fine_tune_epochs=1,
    )
    config["fastpitch"].update(
        symbols_embedding_dim=32, in_fft_n_layers=1, in_fft_d_head=16, in_fft_conv1d_filter_size=64,
        in_fft_output_size=32, out_fft_n_layers=1, out_fft_d_head=16, out_fft_conv1d_filter_size=64,
        out_fft_output_size=32, dur_predictor_filter_size=32, pitch_predictor_filter_size=32,
        energy_predictor_filter_size=32, global_batch_size=4, batch_size=4, epochs=2, warmup_steps=4,
        validation_every_n_epochs=1, checkpoint_every_n_epochs=1, n_plots=1, extract_batch_size=8,
    )
    # Relative paths in the config are relative to the working directory (the repository in the README).
    config["inference"]["phrases"] = str(REPO / "config/phrases/demo.txt")
    config["benchmark"].update(phrases=str(REPO / "config/phrases/benchmark_128.txt"), batch_sizes=[1, 2],
                               warmup=1, repeats=2, n_quality=3, intelligibility_clips=2, n_figures=1)
    for dotted, value in changes.items():
        section = config
        *parents, key = dotted.split("__")
        for name in parents:
            section = section[name]
        section[key] = value
    path = workdir / "config.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


@pytest.mark.parametrize("name", ["demo.yaml", "config.yaml"])
def test_lint_is_clean(tmp_path, name):
    result = snakemake(tmp_path, "--lint", config=REPO / "config" / name)
    assert "Congratulations" in result.stdout + result.stderr


@pytest.mark.parametrize("name", ["demo.yaml", "config.yaml"])
def test_dry_run_lists_rules_with_resources(tmp_path, name):
    result = snakemake(tmp_path, "-n", config=REPO / "config" / name)
    out = result.stdout + result.stderr
    for rule in ("corpus", "manifest"):  # one line per job: the rule's message, naming its log
        assert re.search(rf"^Job \d+: {rule}: .+ \(log: results/.+/logs/{rule}\.log\)$", out, re.M), rule
    assert re.search(r"^all +1$", out, re.M) and "Reason: Missing output files" in out
    assert not (tmp_path / "results").exists(), "a dry run writes nothing"


def test_bad_config_fails_before_any_job(tmp_path):
    config = tiny_demo(tmp_path, data__on_invalid="ignore", data__split__val_sise=3)
    result = snakemake(tmp_path, config=config, check=False)
    assert result.returncode != 0
    out = result.stdout + result.stderr
    assert "data.on_invalid" in out and "'error' or 'skip'" in out
    assert "val_sise: unknown key" in out
    assert not (tmp_path / "results").exists() and not (tmp_path / "resources").exists()


# A folder name a shell would run if any rule, stage or make target handed it over unquoted.
HOSTILE = "out dir 'single' \"double\" $(touch INJECTED) `touch INJECTED2`"
INJECTED = {"INJECTED", "INJECTED2"}


def demo_dirs() -> dict[str, str]:
    """``results_dir`` and ``resources_dir`` of the shared run: in the ``HOSTILE`` folder of its working
    folder, relative as in ``config/demo.yaml``."""
    return {"results_dir": f"{HOSTILE}/results", "resources_dir": f"{HOSTILE}/resources"}


@pytest.fixture(scope="module")
def demo_run(tmp_path_factory):
    """One real run of the whole tiny DAG (``all``), shared by the tests below.

    ``results_dir`` and ``resources_dir`` lie in a folder named like a shell injection (``HOSTILE``:
    a space, both quotes, ``$(...)`` and backticks), so every rule's command, every stage, the MLflow
    store and ``snakemake --report`` meet that name; the last test checks that nothing ran. This is
    the module's only end-to-end run (about 2.5 min on 2 cores): a second one with ordinary folders
    would double the module's cost and test nothing more, since ordinary paths give the same shell
    commands (``:q`` leaves them as they are). Tests that rewrite the config pass ``demo_dirs()``.

    The working directory itself keeps an ordinary name: MLflow (3.x) writes the artifact location
    of its "Default" experiment, ``<cwd>/mlruns/0``, into an SQL statement with Python's ``repr``,
    which SQLite rejects when the current folder's name holds both kinds of quote.
    """
    workdir = tmp_path_factory.mktemp("demo_run")
    config = tiny_demo(workdir, **demo_dirs())
    result = snakemake(workdir, "--quiet", "reason", config=config)  # as `make demo` runs it
    (workdir / "terminal.txt").write_text(result.stdout + result.stderr)
    return workdir, config


def test_the_terminal_shows_a_line_per_job_and_training_progress(demo_run):
    workdir, _ = demo_run
    terminal = (workdir / "terminal.txt").read_text()
    logs = re.escape(f"{HOSTILE}/results/demo/logs/")
    for stage in STAGES:
        assert re.search(rf"^Job \d+: {stage}: .+ \(log: {logs}{stage}\.log\)$", terminal, re.M), stage
    for section in ("aligner", "hifigan", "fastpitch"):
        assert re.search(rf"^{section}: epoch \d+/\d+ \(step \d+\): .*s/epoch", terminal, re.M), section
    # the lines the stages print (Snakemake's own header names absolute paths of any length), with the
    # results folder named as in config/demo.yaml
    ours = [line.replace(f"{HOSTILE}/", "") for line in terminal.splitlines()
            if re.match(r"(Job \d+: |\w+: epoch )", line)]
    assert ours and max(len(line) for line in ours) <= 300
    assert "--section" not in terminal  # the commands (2 KB of JSON each) only with -p


def test_contract_files(demo_run):
    workdir, _ = demo_run
    corpus = workdir / HOSTILE / "resources/demo"
    assert len(list((corpus / "wavs").glob("*.wav"))) == 24
    assert len((corpus / "metadata.csv").read_text().splitlines()) == 24
    record = json.loads((corpus / "corpus.json").read_text())
    assert record["n_wavs"] == 24 and record["source"] == "demo"

    data = workdir / HOSTILE / "results/demo/data"
    splits = {name: [json.loads(line) for line in (data / f"manifest.{name}.jsonl").read_text().splitlines()]
              for name in ("train", "val", "test")}
    assert {name: len(records) for name, records in splits.items()} == {"train": 18, "val": 3, "test": 3}
    ids = [r["id"] for records in splits.values() for r in records]
    assert len(ids) == len(set(ids)) == 24
    for record in splits["train"]:
        assert {"id", "wav", "text", "n_samples"} <= set(record)
        assert (workdir / record["wav"]).is_file()
        assert not any(ch.isdigit() for ch in record["text"])
    validation = json.loads((data / "validation.json").read_text())
    assert validation["n_valid"] == 24 and validation["n_rejected"] == 0
    for stage in STAGES:
        assert (workdir / HOSTILE / f"results/demo/logs/{stage}.log").is_file()
        assert (workdir / HOSTILE / f"results/demo/benchmarks/{stage}.tsv").is_file()


def test_feature_contracts(demo_run):
    """Mels (n_mels, n_samples // hop), pitch (T,), durations summing to T, one per symbol."""
    workdir, _ = demo_run
    features = workdir / HOSTILE / "results/demo/features"
    index = [json.loads(line) for line in (features / "features.jsonl").read_text().splitlines()]
    assert len(index) == 24
    records = {
        json.loads(line)["id"]: json.loads(line)
        for split in ("train", "val", "test")
        for line in (workdir / HOSTILE / f"results/demo/data/manifest.{split}.jsonl").read_text().splitlines()
    }
    for entry in index:
        mel = np.load(features / "mels" / f"{entry['id']}.npy")
        pitch = np.load(features / "pitch" / f"{entry['id']}.npy")
        durations = np.load(features / "durations" / f"{entry['id']}.npy")
        symbols = np.load(features / "symbols" / f"{entry['id']}.npy")
        n_frames = records[entry["id"]]["n_samples"] // 256
        assert mel.shape == (80, n_frames) and mel.dtype == np.float32
        assert pitch.shape == (n_frames,) and (pitch > 0).any()
        assert durations.sum() == n_frames and durations.shape == symbols.shape and (durations >= 1).all()
    stats = json.loads((features / "pitch_stats.json").read_text())
    assert 50 < stats["mean"] < 400 and stats["std"] > 0
    summary = json.loads((features / "durations.json").read_text())
    assert summary["alignment_quality"]["n_evaluated"] == 3
    assert (workdir / HOSTILE / "results/demo/aligner/model.pt").is_file()


def test_vocoder_contracts(demo_run):
    """The base vocoder: a self-describing model file and its validation metrics."""
    workdir, _ = demo_run
    from tts_pipeline.models.hifigan.model_file import load_generator

    generator, info = load_generator(workdir / HOSTILE / "results/demo/hifigan/model.pt")
    assert info.step > 0
    metrics = json.loads((workdir / HOSTILE / "results/demo/hifigan/metrics.json").read_text())
    assert metrics["step"] > 0 and metrics["val_loss_mel"] > 0


def test_mlflow_has_a_parent_run_with_one_child_per_job(demo_run):
    workdir, config = demo_run
    from tts_pipeline import tracking

    settings = tracking.TrackingSettings.from_parts(results_dir=workdir / HOSTILE / "results", experiment="demo")
    import mlflow

    client = mlflow.MlflowClient(settings.uri)
    experiment = client.get_experiment_by_name("demo")
    runs = client.search_runs([experiment.experiment_id])
    parents = [run for run in runs if run.data.tags.get("kind") == "workflow"]
    assert len(parents) == 1 and parents[0].info.status == "FINISHED"
    children = tracking.find_child_runs(settings, parents[0].info.run_id)
    by_stage = {child["tags"]["stage"]: child for child in children}
    assert set(by_stage) == set(STAGES)
    manifest = by_stage["manifest"]
    assert manifest["status"] == "FINISHED"
    assert manifest["tags"]["config_hash"] and manifest["tags"]["experiment"] == "demo"
    assert manifest["tags"]["git_commit"]
    assert manifest["metrics"]["n_valid"] == 24
    assert manifest["params"]["data.split.val_size"] == "3"

    # a dashboard: model-training experiment, loss curves in sections, what made each model
    assert experiment.tags["mlflow.experimentKind"] == "custom_model_development"
    fastpitch = by_stage["train_fastpitch"]
    assert {"train/loss", "val/loss", "val/loss_mel"} <= set(fastpitch["metrics"])
    assert not any(key.startswith("final_") for key in fastpitch["metrics"])
    from urllib.parse import urlparse
    from urllib.request import url2pathname

    artifacts = Path(url2pathname(urlparse(fastpitch["artifact_uri"]).path))  # a file:// URI, percent-encoded
    for name in ("model/model.pt", "metrics.json", "config.yaml", "logs/train_fastpitch.log"):
        assert (artifacts / name).is_file(), name
    assert "train_fastpitch" in (artifacts / "logs/train_fastpitch.log").read_text()
    # the parent: one row per workflow run, with the figures two runs are compared by
    parent = tracking.get_run(settings, parents[0].info.run_id)
    for key in ("data/n_valid", "fastpitch/val_loss", "hifigan/val_loss_mel", "finetune_hifigan/val_loss_mel",
                "benchmark/b1_fp32_x_real_time"):
        assert key in parent["metrics"], key
    assert parent["params"]["fastpitch.epochs"] == "2" and parent["tags"]["mlflow.user"]

    # an invocation with nothing to do leaves no run
    snakemake(workdir, config=config)
    assert len(client.search_runs([experiment.experiment_id], "tags.kind = 'workflow'")) == 1


def test_nothing_to_do_after_a_run(demo_run):
    workdir, config = demo_run
    result = snakemake(workdir, "-n", config=config)
    assert "Nothing to be done" in result.stdout + result.stderr


def test_rerunning_one_stage_reruns_it_and_its_dependants_only(demo_run):
    workdir, config = demo_run
    experiment = workdir / HOSTILE / "results/demo"
    upstream = [experiment / "fastpitch/model.pt", experiment / "hifigan_finetuned/model.pt",
                experiment / "fastpitch_mels/index.json", experiment / "features/features.jsonl"]
    downstream = [experiment / "inference/manifest.jsonl", experiment / "benchmark/report.json",
                  experiment / "report/benchmark.html"]
    before = {path: path.stat().st_mtime_ns for path in upstream + downstream}
    result = snakemake(workdir, "-R", "synthesize", config=config)
    ran = jobs(result)
    assert ran == {"synthesize", "benchmark", "report_pages", "all"}, ran
    for path in upstream:
        assert path.stat().st_mtime_ns == before[path], f"{path} must not be rewritten"
    for path in downstream:
        assert path.stat().st_mtime_ns > before[path], f"{path} must be rewritten"
    plan = snakemake(workdir, "-n", config=config)
    assert "Nothing to be done" in plan.stdout + plan.stderr


def test_benchmark_and_report_contracts(demo_run):
    workdir, config = demo_run
    experiment = workdir / HOSTILE / "results/demo"
    report = json.loads((experiment / "benchmark/report.json").read_text())
    rows = report["speed"]["rows"]  # the demo times fp32 and bf16 (native or emulated, any CPU runs it)
    emulated = plan_precisions(["bf16"], torch.device("cpu")).runnable[0].emulated
    bf16_batches = (1,) if emulated else (1, 2)
    expected = {("fp32", 1), ("fp32", 2)} | {("bf16", batch) for batch in bf16_batches}
    assert {(row["precision"], row["batch_size"]) for row in rows} == expected
    # an emulated bf16's quality is not measured (it runs other kernels than a bf16 CPU's)
    assert [row["precision"] for row in report["quality"]["precision"]["rows"]] == ([] if emulated else ["bf16"])
    markdown = (experiment / "benchmark/report.md").read_text()
    assert "p99 latency" in markdown and "MCD-DTW" in markdown and "train_fastpitch" in markdown
    manifest = [json.loads(line) for line in (experiment / "inference/manifest.jsonl").read_text().splitlines()]
    assert len(manifest) == 8
    for record in manifest:
        assert (experiment / "inference" / record["wav"]).is_file()
    for page in ("losses.png", "pitch.png", "alignment.png", "benchmark.html"):
        assert (experiment / "report" / page).stat().st_size > 0
    listening = report["quality"]["intelligibility"]
    assert len(listening["utterance_ids"]) == 2
    assert [row["name"] for row in listening["rows"]][-2:] == ["griffin_lim_fastpitch", "tts"]
    assert "### Intelligibility" in markdown
    pages = {group: sorted((experiment / "report/audio" / group).glob("*.html"))
             for group in ("held-out", "vocoders", "from-text")}
    assert {group: len(found) for group, found in pages.items()} == {"held-out": 1, "vocoders": 2, "from-text": 8}
    page = pages["held-out"][0].read_text()
    assert page.count("data:image/png;base64,") == 1 and page.count("<audio") == 4
    assert page.count("data:audio/flac;base64,") == 4
    html = experiment / "report.html"  # where `make demo` writes it
    snakemake(workdir, "--report", str(html), config=config)
    assert html.stat().st_size > 100_000


def test_the_voice_is_exported_and_matches_the_eager_models(demo_run):
    workdir, _ = demo_run
    export = workdir / HOSTILE / "results/demo/export"
    assert sorted(path.name for path in export.iterdir()) == [
        "fastpitch.onnx", "fastpitch.pt", "fastpitch.ts", "hifigan.onnx", "hifigan.pt", "hifigan.ts",
        "verification.json", "voice.json",
    ]  # fmt: skip
    verification = json.loads((export / "verification.json").read_text())
    assert verification["passed"] and len(verification["inputs"]) == 3 + 1 + 1  # 3 val texts, a batch, controls
    assert verification["figures"]["fastpitch_onnx_mel_max_abs_diff"] <= 1e-4
    assert verification["figures"]["hifigan_onnx_snr_db_min"] >= 60
    card = json.loads((export / "voice.json").read_text())
    assert card["name"] == "demo" and card["source"]["workflow_run_id"] and card["source"]["run_id"]


def test_changing_the_split_reruns_the_manifest_not_the_corpus(tmp_path):
    """Its own small run up to the manifest: the shared run's later tests keep its split, and a whole
    DAG rerun after the new split would only retrain what the other tests already cover."""
    config = tiny_demo(tmp_path)
    snakemake(tmp_path, "manifest", config=config)
    record = tmp_path / "resources/demo/corpus.json"
    validation = tmp_path / "results/demo/data/validation.json"
    before = (record.stat().st_mtime_ns, validation.stat().st_mtime_ns)
    config = tiny_demo(tmp_path, data__split__seed=99)

    # (`--list-changes params` over-reports in Snakemake 9.27: it lists every output with stored
    # params. The dry run's job list and reasons are exact.)
    plan = snakemake(tmp_path, "-n", "manifest", config=config)
    out = plan.stdout + plan.stderr
    assert "manifest" in jobs(plan) and "corpus" not in jobs(plan)
    assert "Params have changed" in out or "params have changed" in out.lower()

    snakemake(tmp_path, "manifest", config=config)
    assert record.stat().st_mtime_ns == before[0], "the corpus must not be rebuilt"
    assert validation.stat().st_mtime_ns != before[1]


def test_changing_a_pitch_setting_reruns_features_and_dependants_only(demo_run):
    workdir, _ = demo_run
    config = tiny_demo(workdir, **demo_dirs(), pitch__floor_hz=70.0)
    plan = snakemake(workdir, "-n", config=config)
    # the demo's HiFi-GAN has a harmonic source: it trains on the pitch features, so it reruns too
    for rule in ("features", "train_aligner", "durations", "train_hifigan"):
        assert rule in jobs(plan)
    for rule in ("corpus", "manifest"):
        assert rule not in jobs(plan)


def test_fastpitch_mels_have_the_ground_truth_frame_count(demo_run):
    workdir, _ = demo_run
    experiment = workdir / HOSTILE / "results/demo"
    index = json.loads((experiment / "fastpitch_mels/index.json").read_text())
    ids = [json.loads(line)["id"] for line in (experiment / "features/features.jsonl").read_text().splitlines()]
    assert len(ids) == 24
    for utterance_id in ids:
        generated = np.load(experiment / "fastpitch_mels" / f"{utterance_id}.npy")
        truth = np.load(experiment / "features/mels" / f"{utterance_id}.npy")
        assert generated.shape == truth.shape and generated.dtype == np.float32
        assert np.isfinite(generated).all()
    assert index["count"] == 24


def test_fine_tuning_reports_base_and_fine_tuned_losses_and_leaves_the_base_alone(demo_run):
    workdir, _ = demo_run
    experiment = workdir / HOSTILE / "results/demo"
    metrics = json.loads((experiment / "hifigan_finetuned/metrics.json").read_text())
    assert metrics["val_loss_mel_start"] > 0 and metrics["val_loss_mel"] > 0
    from tts_pipeline.models.hifigan.model_file import load_generator

    _, info = load_generator(experiment / "hifigan_finetuned/model.pt")
    assert info.fine_tuned_from is not None and "hifigan/training_state.pt" in info.fine_tuned_from
    base_state = experiment / "hifigan/training_state.pt"
    assert base_state.stat().st_mtime < (experiment / "hifigan_finetuned/model.pt").stat().st_mtime


def test_changing_fastpitch_reruns_fastpitch_and_fine_tuning_not_the_base_vocoder(demo_run):
    workdir, _ = demo_run
    config = tiny_demo(workdir, **demo_dirs(), fastpitch__learning_rate=0.04)
    plan = snakemake(workdir, "-n", config=config)
    for rule in ("train_fastpitch", "extract_fastpitch_mels", "finetune_hifigan"):
        assert rule in jobs(plan)
    for rule in ("train_hifigan", "features", "durations", "manifest"):
        assert rule not in jobs(plan)


def test_a_pretrained_checkpoint_replaces_its_training_rule(demo_run, tmp_path):
    workdir, _ = demo_run
    pretrained = tmp_path / "fastpitch.pt"
    pretrained.write_bytes(b"")  # a dry run only checks that the file exists
    config = tiny_demo(tmp_path, fastpitch__checkpoint=str(pretrained))
    planned = jobs(snakemake(tmp_path, "-n", config=config))
    assert "train_fastpitch" not in planned and {"extract_fastpitch_mels", "train_hifigan"} <= planned

    generator, discriminators = tmp_path / "g_02500000", tmp_path / "do_02500000"
    generator.write_bytes(b"")
    discriminators.write_bytes(b"")
    config = tiny_demo(
        tmp_path, hifigan__checkpoint=str(generator), hifigan__discriminator_checkpoint=str(discriminators)
    )
    plan = snakemake(tmp_path, "-n", "-p", config=config)
    out = plan.stdout + plan.stderr
    assert "train_hifigan" not in jobs(plan) and "finetune_hifigan" in jobs(plan)
    assert f"--init-from {generator} --init-discriminators {discriminators}" in out


def test_a_warm_start_file_is_an_input_of_its_training_and_checked_before_any_job(tmp_path):
    """``init_from`` keeps the training rule in the DAG, hands it the file (a declared input: a new file
    reruns training) and is refused before any job when the file was trained on other mels."""
    from tts_pipeline.config import load_config

    from ..warm_start_files import fastpitch_file, generator_file

    tiny = load_config(tiny_demo(tmp_path))
    fastpitch, generator = fastpitch_file(tmp_path / "voice.pt", tiny), generator_file(tmp_path / "g.pt", tiny)
    config = tiny_demo(tmp_path, fastpitch__init_from=str(fastpitch), hifigan__init_from=str(generator))
    plan = snakemake(tmp_path, "-n", "-p", config=config)
    out = plan.stdout + plan.stderr
    assert {"train_fastpitch", "train_hifigan", "finetune_hifigan"} <= jobs(plan)
    assert f"--warm-start {fastpitch}" in out and f"--warm-start {generator}" in out

    fastpitch_file(fastpitch, tiny, audio={"n_mel_channels": 64})
    refused = snakemake(tmp_path, config=config, check=False)
    out = refused.stdout + refused.stderr
    assert refused.returncode != 0 and f"fastpitch.init_from: {fastpitch}" in out and "audio.n_mel_channels" in out
    assert not (tmp_path / "results").exists() and not (tmp_path / "resources").exists()


def test_after_a_hard_kill_unlock_and_rerun_and_the_killed_runs_end_killed(tmp_path):
    """``kill -9`` of Snakemake and its jobs mid-DAG (a power cut): the rerun names the lock, ``--unlock``
    clears it, the rerun finishes, and the killed invocation's MLflow runs end KILLED, not RUNNING."""
    import signal
    import time

    config = tiny_demo(tmp_path)
    command = [
        str(BIN / "snakemake"), "--snakefile", str(REPO / "workflow/Snakefile"),
        "--workflow-profile", str(REPO / "workflow/profiles/default"), "--directory", str(tmp_path),
        "--cores", "1", "features", "--configfile", str(config),
    ]  # fmt: skip
    env = {key: value for key, value in os.environ.items() if not key.startswith("TTS_")}
    env["PATH"] = f"{BIN}{os.pathsep}{env['PATH']}"
    victim = subprocess.Popen(command, cwd=tmp_path, env=env, start_new_session=True,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    mels = tmp_path / "results/demo/features/mels"  # the features job writes one file per utterance
    deadline = time.monotonic() + 120
    while victim.poll() is None and not any(mels.glob("*.npy")) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert victim.poll() is None, "snakemake ended before the features job wrote anything"
    os.killpg(victim.pid, signal.SIGKILL)
    victim.wait()

    refused = snakemake(tmp_path, "features", config=config, check=False)
    assert refused.returncode != 0 and "--unlock" in refused.stdout + refused.stderr
    snakemake(tmp_path, "--unlock", config=config)
    snakemake(tmp_path, "features", config=config)

    import mlflow

    client = mlflow.MlflowClient(f"sqlite:///{tmp_path / 'results/mlflow.db'}")
    experiment = client.get_experiment_by_name("demo")
    parents = client.search_runs([experiment.experiment_id], "tags.kind = 'workflow'", order_by=["start_time ASC"])
    assert [run.info.status for run in parents] == ["KILLED", "FINISHED"]
    # whether the features job had opened its run when it died is a race; no run stays RUNNING either way
    everything = client.search_runs([experiment.experiment_id])
    assert not [run.data.tags.get("rule") for run in everything if run.info.status == "RUNNING"]


def test_the_hostile_folder_holds_every_output_and_no_command_ran_from_its_name(demo_run, tmp_path_factory):
    """Last in the module, after every run, rerun and report: the name reached no shell unquoted."""
    workdir, _ = demo_run
    assert all(hazard in HOSTILE for hazard in (" ", "'", '"', "$(touch ", "`touch "))
    experiment = workdir / HOSTILE / "results/demo"
    for path in ("benchmark/report.json", "inference/manifest.jsonl", "report/benchmark.html"):
        assert (experiment / path).is_file(), path
    assert (workdir / HOSTILE / "resources/demo/corpus.json").is_file()

    # MLflow: the store, its runs and their artifacts are in the folder (no ./mlruns, no other database)
    from urllib.parse import urlparse
    from urllib.request import url2pathname

    import mlflow

    assert {path.name for path in (workdir / HOSTILE / "results").iterdir()} >= {"demo", "mlflow.db", "mlartifacts"}
    assert not list(workdir.rglob("mlruns"))
    assert list(workdir.rglob("*.db")) == [workdir / HOSTILE / "results/mlflow.db"]
    client = mlflow.MlflowClient(f"sqlite:///{workdir / HOSTILE / 'results/mlflow.db'}")
    experiment_id = client.get_experiment_by_name("demo").experiment_id
    runs = client.search_runs([experiment_id])
    assert {run.data.tags.get("stage") for run in runs} >= set(STAGES)
    artifacts = workdir / HOSTILE / "results/mlartifacts/demo"
    for run in runs:
        assert Path(url2pathname(urlparse(run.info.artifact_uri).path)).is_relative_to(artifacts)
    assert any(path.is_file() for path in artifacts.rglob("*"))

    # $(touch INJECTED) or `touch INJECTED2` would have left a file in the shell's folder: the working
    # folder (anywhere below the session's temporary folders), the repository or the current folder.
    places = [*tmp_path_factory.getbasetemp().rglob("INJECTED*"), *REPO.glob("INJECTED*"),
              *(REPO / "workflow").glob("INJECTED*"), *Path.cwd().glob("INJECTED*")]
    assert not [path for path in places if path.name in INJECTED]


def test_nothing_is_written_beside_the_configured_folders(demo_run):
    """No stage falls back to the default ``results``/``resources`` (or MLflow's ``./mlruns``)."""
    workdir, _ = demo_run
    beside = {path.name for path in workdir.iterdir()} - {HOSTILE, ".snakemake", "config.yaml", "terminal.txt"}
    assert not beside, f"only Snakemake's records and the config beside the folder, not {beside}"
