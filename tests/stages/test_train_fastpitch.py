"""The train_fastpitch stage and its trainer on a tiny synthetic features folder: the model file rebuilds
alone, resuming continues (and matches an uninterrupted run), a changed config restarts, NaN is caught,
LAMB (checked against apex FusedLAMB's formulas) and Adam both step, plots reach the tracking run."""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

from tts_pipeline.config import AudioConfig, FastPitchConfig
from tts_pipeline.data.manifest import manifest_path, read_manifest
from tts_pipeline.errors import UserError
from tts_pipeline.features.durations import symbol_pitch
from tts_pipeline.files import save_npy, write_json, write_jsonl
from tts_pipeline.models.fastpitch.data import FastPitchDataset, PitchStats, TextSettings, collate
from tts_pipeline.models.fastpitch.model_file import load_fastpitch
from tts_pipeline.precision import Precision
from tts_pipeline.stages import train_fastpitch as stage
from tts_pipeline.training import distributed
from tts_pipeline.training import fastpitch as trainer
from tts_pipeline.training.checkpoint import CheckpointManager, load_checkpoint
from tts_pipeline.training.distributed import DistributedContext
from tts_pipeline.training.engine import TrainingDiverged
from tts_pipeline.training.fastpitch import loop as fastpitch_loop
from tts_pipeline.training.fastpitch import step as fastpitch_step
from tts_pipeline.training.loop import LoopIO, TrainingResult
from tts_pipeline.training.optimizers import lamb

from ..conftest import REPO

AUDIO = AudioConfig()
SYMBOLS = ["_", *"abcdefghij"]
PITCH = PitchStats(mean=170.0, std=40.0)
TINY: dict[str, Any] = {
    "symbols_embedding_dim": 16,
    "in_fft_n_layers": 1,
    "in_fft_d_head": 8,
    "in_fft_conv1d_filter_size": 32,
    "in_fft_output_size": 16,
    "out_fft_n_layers": 1,
    "out_fft_d_head": 8,
    "out_fft_conv1d_filter_size": 32,
    "out_fft_output_size": 16,
    "dur_predictor_filter_size": 16,
    "pitch_predictor_filter_size": 16,
    "energy_predictor_filter_size": 16,
    "global_batch_size": 4,
    "batch_size": 2,
    "gpus": 0,
    "num_workers": 0,
    "epochs": 100,
    "warmup_steps": 10,
    "learning_rate": 0.01,
    "validation_every_n_epochs": 1,
    "checkpoint_every_n_epochs": 1,
    "n_plots": 1,
}
TRACKING_ENV = ("TTS_TRACKING", "TTS_TRACKING_URI", "TTS_MLFLOW_EXPERIMENT", "TTS_PARENT_RUN_ID")


@pytest.fixture(autouse=True)
def quiet(monkeypatch):
    """One thread, and no tracking store named by the environment."""
    torch.set_num_threads(1)
    for variable in TRACKING_ENV:
        monkeypatch.delenv(variable, raising=False)


def make_features(root: Path, counts: dict[str, int] | None = None, seed: int = 0, equal_lengths: bool = False) -> Path:
    """A features folder (``root/features``) and manifests (``root/data``) of random utterances: 3-8
    symbols, 0-5 frames each (at least one frame), random log-mels and pitch (70 % voiced).
    ``equal_lengths``: every utterance has 5 symbols of durations 2, 1, 3, 0, 2."""
    rng = np.random.default_rng(seed)
    features = root / "features"
    for split, count in (counts or {"train": 8, "val": 2, "test": 2}).items():
        records = []
        for index in range(count):
            utterance_id = f"{split}-{index}"
            n_tokens = 5 if equal_lengths else int(rng.integers(3, 9))
            durations = rng.integers(0, 6, n_tokens).astype(np.int32)
            durations[0] = max(int(durations[0]), 1)
            if equal_lengths:
                durations = np.array([2, 1, 3, 0, 2], dtype=np.int32)
            n_frames = int(durations.sum())
            pitch = np.where(rng.random(n_frames) < 0.7, rng.uniform(100, 250, n_frames), 0.0).astype(np.float32)
            mel = rng.normal(-5, 2, (AUDIO.n_mel_channels, n_frames)).astype(np.float32)
            tokens = rng.integers(1, len(SYMBOLS), n_tokens).astype(np.int32)
            save_npy(features / "mels" / f"{utterance_id}.npy", mel)
            save_npy(features / "pitch" / f"{utterance_id}.npy", pitch)
            save_npy(features / "durations" / f"{utterance_id}.npy", durations)
            save_npy(features / "symbols" / f"{utterance_id}.npy", tokens)
            save_npy(features / "symbol_pitch" / f"{utterance_id}.npy", symbol_pitch(pitch, durations))
            n_samples = n_frames * AUDIO.hop_length + 17
            records.append({"id": utterance_id, "wav": f"{utterance_id}.wav", "text": "abc", "n_samples": n_samples})
        write_jsonl(manifest_path(root / "data", split), records)
    write_json(features / "pitch_stats.json", {"mean": PITCH.mean, "std": PITCH.std, "n_voiced_frames": 100})
    durations_index = {
        "source": "aligner",
        "symbols_kind": "characters",
        "symbol_set": "english_basic",
        "symbols": SYMBOLS,
        "pad_id": 0,
    }
    write_json(features / "durations.json", durations_index)
    return features


def section(**fastpitch: Any) -> str:
    return json.dumps(
        {"fastpitch": {**TINY, **fastpitch}, "audio": AUDIO.model_dump(mode="json"), "text.cleaners": "basic_cleaners"}
    )


def stage_argv(root: Path, payload: str) -> list[str]:
    return [
        "--section", payload,
        "--features-dir", str(root / "features"),
        "--manifest-dir", str(root / "data"),
        "--work-dir", str(root / "work" / "train_fastpitch"),
        "--model", str(root / "fastpitch" / "model.pt"),
        "--metrics", str(root / "fastpitch" / "metrics.json"),
    ]  # fmt: skip


def run_stage(argv: list[str]) -> dict:
    """Run the stage in this process; returns its metrics.json."""
    parser = argparse.ArgumentParser()
    stage.add_arguments(parser)
    stage.run(args := parser.parse_args(argv))
    return json.loads(Path(args.metrics).read_text(encoding="utf-8"))


def datasets(root: Path) -> tuple[FastPitchDataset, FastPitchDataset]:
    def load(split: str) -> FastPitchDataset:
        records = read_manifest(manifest_path(root / "data", split))
        return FastPitchDataset(records, root / "features", PITCH, AUDIO.n_mel_channels, n_symbols=len(SYMBOLS))

    return load("train"), load("val")


TEXT = TextSettings(symbols=tuple(SYMBOLS), source="aligner", symbols_kind="characters", symbol_set="english_basic")


def train(root: Path, cfg: FastPitchConfig, **io: Any) -> TrainingResult:
    """Train on ``root``'s features; ``io`` holds :class:`LoopIO` fields (checkpoints in ``root/w`` unless
    a ``manager`` is given)."""
    train_set, val_set = datasets(root)
    io.setdefault("manager", CheckpointManager(root / "w", "h"))
    return trainer.fit(cfg, train_set, val_set, LoopIO(**io), text=TEXT, pitch=PITCH, frame_period_s=256 / 22050)


@pytest.fixture
def corpus(tmp_path) -> Path:
    make_features(tmp_path)
    return tmp_path


# --------------------------------------------------------------------------------------------------
# the stage
# --------------------------------------------------------------------------------------------------


def test_two_steps_write_a_model_that_rebuilds_alone_then_resume_continues(corpus):
    metrics = run_stage(stage_argv(corpus, section(max_steps=2)))
    assert metrics["step"] == 2 and metrics["resumed_from_step"] == 0 and metrics["steps_this_run"] == 2
    assert metrics["accumulation"] == 2 and metrics["world_size"] == 1 and metrics["device"] == "cpu"
    assert metrics["epoch"] == 1 and metrics["steps_per_epoch"] == 2
    for name in ("loss", "loss_mel", "loss_duration", "loss_pitch", "loss_energy", "duration_error"):
        for key in (f"train_{name}_start", f"train_{name}", f"val_{name}_start", f"val_{name}"):
            assert math.isfinite(metrics[key]), key
    assert metrics["frames_per_s"] > 0 and metrics["n_params"] > 1000
    assert metrics["learning_rate"] == pytest.approx(0.01 * 2 / 10**1.5)

    model, info = load_fastpitch(corpus / "fastpitch" / "model.pt")
    assert info.step == 2 and info.symbols == tuple(SYMBOLS) and info.pitch == PITCH
    assert info.text.cleaners == "basic_cleaners" and info.text.symbols_kind == "characters"
    assert info.audio == AUDIO and not model.training
    assert sum(p.numel() for p in model.parameters()) == metrics["n_params"]
    assert float(model.pitch_mean) == PITCH.mean and float(model.pitch_std) == PITCH.std
    work = CheckpointManager(corpus / "work" / "train_fastpitch", "unused")
    saved = load_checkpoint(work.paths()[-1])
    assert saved.step == 2
    for name, tensor in model.state_dict().items():
        torch.testing.assert_close(tensor, saved.states["model"][name])
    tokens = torch.tensor([[1, 2, 3]])
    inference = model.infer(tokens, torch.tensor([3]))
    assert inference.mel.shape[:2] == (1, AUDIO.n_mel_channels)

    resumed = run_stage(stage_argv(corpus, section(max_steps=4)))
    assert resumed["step"] == 4 and resumed["resumed_from_step"] == 2 and resumed["steps_this_run"] == 2
    assert resumed["train_loss_start"] == metrics["train_loss_start"]  # step 1's losses travel in checkpoints
    assert resumed["val_loss_start"] == metrics["val_loss_start"]


def test_a_changed_config_starts_fresh_and_moves_the_old_checkpoints_aside(corpus):
    run_stage(stage_argv(corpus, section(max_steps=2)))
    # Neutral keys (how long, how often) still resume ...
    assert run_stage(stage_argv(corpus, section(max_steps=3, n_plots=0, batch_size=4)))["resumed_from_step"] == 2
    # ... a trajectory key does not.
    metrics = run_stage(stage_argv(corpus, section(max_steps=2, learning_rate=0.02)))
    assert metrics["resumed_from_step"] == 0 and metrics["step"] == 2
    assert list((corpus / "work" / "train_fastpitch" / "superseded").iterdir())


def test_new_durations_start_training_afresh(corpus):
    """FastPitch trains on the durations (unlike the aligner, which writes them): new ones, as after the
    aligner was retrained, make a rerun train anew instead of finishing the old training."""
    run_stage(stage_argv(corpus, section(max_steps=2)))
    index = corpus / "features" / "durations.json"
    index.write_text(index.read_text().replace('"aligner"', '"textgrid"'))
    assert run_stage(stage_argv(corpus, section(max_steps=3)))["resumed_from_step"] == 0


def test_bad_features_are_reported_before_training(corpus):
    (corpus / "features" / "durations" / "train-3.npy").unlink()
    with pytest.raises(UserError, match=r"train-3: .*durations/train-3.npy is missing"):
        run_stage(stage_argv(corpus, section(max_steps=1)))


def test_a_non_finite_loss_names_the_step_and_keeps_the_last_good_checkpoint(corpus, monkeypatch):
    real_loss = fastpitch_step.fastpitch_loss
    calls = {"n": 0}

    def poisoned(*args, **kwargs):
        terms = real_loss(*args, **kwargs)
        calls["n"] += 1
        # Validation before training takes one call; two micro-batches per step: step 3 starts at call 6.
        return terms._replace(total=terms.total * float("nan")) if calls["n"] >= 6 else terms

    monkeypatch.setattr(fastpitch_step, "fastpitch_loss", poisoned)
    cfg = FastPitchConfig(**{**TINY, "max_steps": 6})
    manager = CheckpointManager(corpus / "w", "h")
    with pytest.raises(TrainingDiverged, match=r"at step 3 \(epoch 2\).*step-00000002\.pt") as caught:
        train(corpus, cfg, manager=manager)
    assert "learning_rate" in str(caught.value)
    assert [load_checkpoint(path).step for path in manager.paths()] == [2]


def test_interrupted_and_resumed_training_matches_an_uninterrupted_one(corpus):
    cfg = FastPitchConfig(**{**TINY, "max_steps": 4})
    straight = train(corpus, cfg, manager=CheckpointManager(corpus / "a", "h"))

    class Stop(Exception):
        pass

    def stop_at_2(state: trainer.FastPitchState) -> None:
        if state.step == 2:
            raise Stop

    manager = CheckpointManager(corpus / "b", "h")
    with pytest.raises(Stop):
        train(corpus, cfg, manager=manager, on_checkpoint=stop_at_2)
    resumed = train(corpus, cfg, manager=manager, checkpoint=manager.latest())
    assert resumed.metrics["resumed_from_step"] == 2 and resumed.step == 4
    for (name, a), b in zip(straight.model.state_dict().items(), resumed.model.state_dict().values(), strict=True):
        torch.testing.assert_close(a, b, msg=name)


def test_a_length_bucketed_run_trains_two_epochs_and_resumes_mid_epoch_on_the_same_batches(tmp_path, monkeypatch):
    make_features(tmp_path, {"train": 12, "val": 2})
    real_order, real_step = distributed.bucketed_order, trainer.train_step
    lengths_seen: list[list[int]] = []
    steps: list[list[list[str]]] = []  # per optimiser step, the ids of each micro-batch

    def order_spy(order, lengths, *args, **kwargs):
        lengths_seen.append(list(lengths))
        return real_order(order, lengths, *args, **kwargs)

    def step_spy(state, runtime, micro_batches, **kwargs):
        steps.append([list(batch.ids) for batch in micro_batches])
        return real_step(state, runtime, micro_batches, **kwargs)

    monkeypatch.setattr(distributed, "bucketed_order", order_spy)
    monkeypatch.setattr(fastpitch_loop, "train_step", step_spy)
    bucketed = {"epochs": 2, "length_bucketing": True, "bucket_pool": 2, "n_plots": 0}

    def argv(name: str, **overrides: Any) -> list[str]:
        out = tmp_path / name
        paths = {"--work-dir": out / "work", "--model": out / "model.pt", "--metrics": out / "metrics.json"}
        args = stage_argv(tmp_path, section(**bucketed, **overrides))
        for flag, path in paths.items():
            args[args.index(flag) + 1] = str(path)
        return args

    straight = run_stage(argv("straight"))
    assert straight["step"] == 6 and straight["epochs_completed"] == 2 and straight["steps_per_epoch"] == 3
    assert math.isfinite(straight["val_loss_mel"]) and straight["val_loss_mel"] < straight["val_loss_mel_start"]
    train_set = datasets(tmp_path)[0]
    assert lengths_seen and all(seen == train_set.mel_lengths for seen in lengths_seen)
    length = dict(zip(train_set.ids, train_set.mel_lengths, strict=True))
    for step in steps:  # each micro-batch of 2 is a run of its global batch of 4 sorted by length
        assert max(length[i] for i in step[0]) <= min(length[i] for i in step[1])
    uninterrupted, steps[:] = list(steps), []

    stopped = run_stage(argv("resumed", max_steps=4))  # the last checkpoint falls in the middle of epoch 2
    assert stopped["step"] == 4 and stopped["epoch"] == 2
    resumed = run_stage(argv("resumed"))
    assert resumed["resumed_from_step"] == 4 and resumed["step"] == 6 and resumed["epochs_completed"] == 2
    assert steps == uninterrupted


class RecordingSink:
    """A stand-in tracking run that keeps what it is given."""

    active = True

    def __init__(self) -> None:
        self.metrics: list[tuple[int | None, dict[str, float]]] = []
        self.artifacts: list[str] = []

    def log_metrics(self, metrics, step=None):
        self.metrics.append((step, dict(metrics)))

    def log_artifact(self, path, artifact_path=None):
        assert Path(path).stat().st_size > 0
        self.artifacts.append(f"{artifact_path}/{Path(path).name}")


def test_metrics_and_plots_reach_the_tracking_run(corpus):
    sink = RecordingSink()
    cfg = FastPitchConfig(**{**TINY, "epochs": 1, "energy_conditioning": False})
    result = train(corpus, cfg, sink=sink, log_every=1)
    assert result.step == 2 and "train_loss_energy" not in result.metrics
    train_steps = [step for step, figures in sink.metrics if "train_loss" in figures]
    assert train_steps == [1, 2]
    figures = next(figures for step, figures in sink.metrics if step == 1 and "train_loss" in figures)
    assert {"train_loss_mel", "train_grad_norm", "train_lr", "frames_per_s"} <= set(figures)
    assert figures["train_lr"] == pytest.approx(0.01 / 10**1.5)
    assert [step for step, figures in sink.metrics if "val_loss" in figures] == [0, 2]
    assert sorted(sink.artifacts) == [
        "plots/epoch_00000/val-0_mel.png",
        "plots/epoch_00000/val-0_tokens.png",
        "plots/epoch_00001/val-0_mel.png",
        "plots/epoch_00001/val-0_tokens.png",
    ]


# --------------------------------------------------------------------------------------------------
# optimisers
# --------------------------------------------------------------------------------------------------


def apex_lamb_reference(params, grads_per_step, *, lr, betas, eps, weight_decay, max_grad_norm=1.0):
    """apex FusedLAMB's update written out (bias correction, global-norm clip to 1, decay added to the
    update, trust ratio ||p|| / ||u|| for non-zero norms); parameters after each step."""
    params = [p.clone().double() for p in params]
    m = [torch.zeros_like(p) for p in params]
    v = [torch.zeros_like(p) for p in params]
    beta1, beta2 = betas
    for step, grads in enumerate(grads_per_step, start=1):
        grads = [g.double() for g in grads]
        norm = torch.sqrt(sum((g**2).sum() for g in grads))
        clip = norm / max_grad_norm if norm > max_grad_norm else 1.0
        for i, p in enumerate(params):
            g = grads[i] / clip
            m[i] = beta1 * m[i] + (1 - beta1) * g
            v[i] = beta2 * v[i] + (1 - beta2) * g * g
            m_hat, v_hat = m[i] / (1 - beta1**step), v[i] / (1 - beta2**step)
            update = m_hat / (v_hat.sqrt() + eps) + weight_decay * p
            p_norm, u_norm = p.norm(), update.norm()
            ratio = p_norm / u_norm if p_norm > 0 and u_norm > 0 else 1.0
            params[i] = p - lr * ratio * update
    return params


def test_lamb_follows_apex_fused_lamb():
    torch.manual_seed(0)
    start = [torch.randn(6, 5) * 3, torch.randn(5) * 0.1]  # a norm above 10: the package's clamp must be off
    grads = [[torch.randn(6, 5) * scale, torch.randn(5) * scale] for scale in (3.0, 0.2, 1.0, 0.05)]
    options = {"lr": 0.01, "betas": (0.9, 0.98), "eps": 1e-9, "weight_decay": 1e-6}
    params = [torch.nn.Parameter(p.clone()) for p in start]
    optimizer = lamb(params, **options)
    expected = apex_lamb_reference(start, grads, **options)
    for step_grads in grads:
        for p, g in zip(params, step_grads, strict=True):
            p.grad = g.clone()
        optimizer.step()
    for p, ref, p0 in zip(params, expected, start, strict=True):
        moved = (ref - p0.double()).norm()
        assert (p.detach().double() - ref).norm() < 1e-4 * moved


@pytest.mark.parametrize("kind", ["lamb", "adam"])
def test_both_optimizers_step_and_follow_the_noam_schedule(corpus, kind):
    cfg = FastPitchConfig(**{**TINY, "optimizer": kind, "learning_rate": 1e-3})
    train_set, _ = datasets(corpus)
    precision = Precision("off", torch.device("cpu"))
    state = trainer.build_state(cfg, len(SYMBOLS), AUDIO.n_mel_channels, PITCH, precision)
    runtime = trainer.Runtime(context=DistributedContext(), precision=precision, model=state.model, cfg=cfg,
                              accumulation=2)  # fmt: skip
    before = {name: tensor.clone() for name, tensor in state.model.state_dict().items()}
    batches = [collate([train_set[0], train_set[1]]), collate([train_set[2], train_set[3]])]
    losses = trainer.train_step(state, runtime, batches, checkpoints=[])
    assert math.isfinite(losses["loss"]) and losses["grad_norm"] > 0
    assert losses["lr"] == pytest.approx(1e-3 / 10**1.5)  # Noam: step 1 of 10 warm-up steps
    expected_type = "Lamb" if kind == "lamb" else "AdamW"
    assert type(state.optimizer).__name__ == expected_type
    changed = [name for name, tensor in state.model.state_dict().items() if not torch.equal(tensor, before[name])]
    assert "proj.weight" in changed and "encoder.word_emb.weight" in changed
    assert "pitch_mean" not in changed  # buffers are not trained


# --------------------------------------------------------------------------------------------------
# several processes
# --------------------------------------------------------------------------------------------------

STAGE_RUNNER = """
import sys
from tts_pipeline import cli
cli.main(sys.argv[1:])
"""


@pytest.mark.skipif(shutil.which("torchrun") is None, reason="needs torchrun")
def test_two_processes_make_the_same_update_as_one_process_accumulating(tmp_path):
    """DDP (2 CPU processes x 1 micro-batch) against accumulation (1 process x 2 micro-batches): the same
    weights, given what makes them comparable: no dropout, and utterances of equal lengths (the mel loss
    is a mean per micro-batch, so otherwise the grouping of utterances weights them differently)."""
    make_features(tmp_path, {"train": 8, "val": 2}, equal_lengths=True)
    no_dropout = {key: 0.0 for key in FastPitchConfig.model_fields if key.startswith("p_")}
    payload = section(max_steps=2, n_plots=0, **no_dropout)
    runner = tmp_path / "runner.py"
    runner.write_text(STAGE_RUNNER)
    env = {key: value for key, value in os.environ.items() if key not in TRACKING_ENV}
    env["OMP_NUM_THREADS"] = "1"
    command = ["torchrun", "--standalone", "--nproc_per_node=2", str(runner), "train_fastpitch"]
    two_argv = [*stage_argv(tmp_path, payload)]
    two_argv[two_argv.index("--work-dir") + 1] = str(tmp_path / "work2")
    two_argv[two_argv.index("--model") + 1] = str(tmp_path / "two" / "model.pt")
    two_argv[two_argv.index("--metrics") + 1] = str(tmp_path / "two" / "metrics.json")
    subprocess.run([*command, *two_argv], cwd=REPO, env=env, check=True, capture_output=True, timeout=120)
    two = json.loads((tmp_path / "two" / "metrics.json").read_text())
    assert two["world_size"] == 2 and two["accumulation"] == 1 and two["step"] == 2

    single = run_stage(stage_argv(tmp_path, payload))
    assert single["world_size"] == 1 and single["accumulation"] == 2
    assert two["train_loss_start"] == pytest.approx(single["train_loss_start"], rel=1e-5)
    assert two["val_loss"] == pytest.approx(single["val_loss"], rel=1e-4)
    assert two["frames_per_s"] > 0
    model_one, _ = load_fastpitch(tmp_path / "fastpitch" / "model.pt")
    model_two, _ = load_fastpitch(tmp_path / "two" / "model.pt")
    for (name, a), b in zip(model_one.state_dict().items(), model_two.state_dict().values(), strict=True):
        torch.testing.assert_close(a, b, atol=1e-5, rtol=1e-4, msg=name)


@pytest.mark.gpu
@pytest.mark.parametrize("amp", ["off", "fp16", "bf16"])
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_two_steps_on_one_gpu(corpus, amp):
    metrics = run_stage(stage_argv(corpus, section(max_steps=2, gpus=1, amp=amp)))
    assert (metrics["step"], metrics["amp"], metrics["device"]) == (2, amp, "cuda:0")
    assert math.isfinite(metrics["val_loss_mel"]) and math.isfinite(metrics["train_loss"])
    model, _ = load_fastpitch(corpus / "fastpitch" / "model.pt")
    assert next(model.parameters()).device.type == "cpu"
