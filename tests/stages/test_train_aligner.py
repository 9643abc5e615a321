"""The train_aligner stage on a tiny synthetic corpus: outputs, resuming, config changes, NaN, SIGKILL."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from tts_pipeline import tracking
from tts_pipeline.config import AlignerConfig
from tts_pipeline.data.manifest import manifest_path
from tts_pipeline.files import write_jsonl
from tts_pipeline.models.aligner import load_aligner
from tts_pipeline.models.aligner.data import AlignerDataset
from tts_pipeline.stages import train_aligner as stage
from tts_pipeline.text import get_symbols
from tts_pipeline.training import aligner as trainer
from tts_pipeline.training.aligner import loop as aligner_loop
from tts_pipeline.training.aligner import step as aligner_step
from tts_pipeline.training.checkpoint import CheckpointManager
from tts_pipeline.training.distributed import DistributedContext
from tts_pipeline.training.engine import TrainingDiverged
from tts_pipeline.training.loop import LoopIO

from ..stage_helpers import kill_after_first_checkpoint, rerun, run_in_process

N_MELS = 16
TEXTS = {
    "train": ["a cat sat.", "the dog ran.", "cats nap.", "a big dog.", "sit down.", "no cats.", "run, dog!", "ok."],
    "val": ["a dog sat.", "the cat ran."],
}


def make_corpus(root: Path, frames_per_char: int = 4) -> tuple[Path, Path]:
    """Manifests and mels: every character gets ``frames_per_char`` frames of its own random pattern."""
    rng = np.random.default_rng(0)
    patterns = rng.normal(size=(128, N_MELS)).astype(np.float32)
    manifest_dir, features_dir = root / "data", root / "features"
    (features_dir / "mels").mkdir(parents=True)
    for split, texts in TEXTS.items():
        records = []
        for index, text in enumerate(texts):
            utterance_id = f"{split}-{index}"
            mel = np.repeat(patterns[[ord(c) for c in text]], frames_per_char, axis=0).T
            np.save(features_dir / "mels" / f"{utterance_id}.npy", mel + 0.05 * rng.normal(size=mel.shape))
            records.append({"id": utterance_id, "text": text, "wav": f"{utterance_id}.wav", "n_samples": 0})
        write_jsonl(manifest_path(manifest_dir, split), records)
    return manifest_dir, features_dir


def section(**aligner) -> str:
    defaults = {"embedding_dim": 16, "attention_dim": 8, "batch_size": 4, "checkpoint_every_n_steps": 1}
    return json.dumps(
        {"aligner": {**defaults, **aligner}, "audio.n_mel_channels": N_MELS, "text.symbol_set": "english_basic"}
    )


def stage_argv(root: Path, manifest_dir: Path, features_dir: Path, payload: str) -> list[str]:
    return [
        "--section", payload,
        "--manifest-dir", str(manifest_dir),
        "--features-dir", str(features_dir),
        "--work-dir", str(root / "work" / "train_aligner"),
        "--model", str(root / "aligner" / "model.pt"),
        "--metrics", str(root / "aligner" / "metrics.json"),
    ]  # fmt: skip


def run_stage(argv: list[str]) -> dict:
    return json.loads(run_in_process(stage, argv).metrics.read_text())


@pytest.fixture
def corpus(tmp_path):
    manifest_dir, features_dir = make_corpus(tmp_path)
    return tmp_path, manifest_dir, features_dir


def test_two_steps_write_a_model_that_rebuilds_alone_then_resume_continues(corpus):
    root, manifest_dir, features_dir = corpus
    metrics = run_stage(stage_argv(root, manifest_dir, features_dir, section(max_steps=2)))
    assert metrics["step"] == 2 and metrics["resumed_from_step"] == 0 and metrics["steps_this_run"] == 2
    assert metrics["n_train"] == 8 and metrics["n_val"] == 2 and np.isfinite(metrics["val_loss"])

    model, info = load_aligner(root / "aligner" / "model.pt")
    assert info.step == 2 and info.symbols == "characters" and info.symbol_set == "english_basic"
    assert info.symbol_table == get_symbols("english_basic") and info.prior_scaling == 1.0
    assert model.model_config()["n_mels"] == N_MELS and not model.training

    metrics = run_stage(stage_argv(root, manifest_dir, features_dir, section(max_steps=5)))
    assert metrics["resumed_from_step"] == 2 and metrics["step"] == 5 and metrics["steps_this_run"] == 3
    assert metrics["epoch"] == 3 and metrics["epochs_completed"] == 2  # 2 batches per epoch
    assert load_aligner(root / "aligner" / "model.pt")[1].step == 5
    work = root / "work" / "train_aligner"
    assert sorted(p.name for p in work.glob("step-*.pt")) == [f"step-0000000{n}.pt" for n in (3, 4, 5)]


def test_arpabet_symbols_are_recorded_in_the_model_file(corpus):
    root, manifest_dir, features_dir = corpus
    run_stage(stage_argv(root, manifest_dir, features_dir, section(max_steps=1, symbols="arpabet")))
    _, info = load_aligner(root / "aligner" / "model.pt")
    assert info.symbols == "arpabet" and info.step == 1


def test_a_finished_run_reruns_without_training(corpus):
    root, manifest_dir, features_dir = corpus
    argv = stage_argv(root, manifest_dir, features_dir, section(epochs=1))
    first = run_stage(argv)
    again = run_stage(argv)
    assert first["step"] == again["step"] == 2 and first["epochs_completed"] == 1
    assert again["steps_this_run"] == 0 and again["resumed_from_step"] == 2


def test_more_steps_after_the_durations_were_written_resume(corpus):
    """The durations stage writes its index into the features folder the aligner reads; they are the
    aligner's output, so more steps after a finished run continue it instead of starting afresh."""
    root, manifest_dir, features_dir = corpus
    run_stage(stage_argv(root, manifest_dir, features_dir, section(max_steps=2)))
    (features_dir / "durations.json").write_text('{"source": "aligner"}')
    metrics = run_stage(stage_argv(root, manifest_dir, features_dir, section(max_steps=3)))
    assert metrics["resumed_from_step"] == 2 and metrics["step"] == 3


def test_a_changed_config_starts_fresh_and_keeps_the_old_checkpoints(corpus):
    root, manifest_dir, features_dir = corpus
    run_stage(stage_argv(root, manifest_dir, features_dir, section(max_steps=2)))
    metrics = run_stage(stage_argv(root, manifest_dir, features_dir, section(max_steps=3, learning_rate=5e-4)))
    assert metrics["resumed_from_step"] == 0 and metrics["step"] == 3
    superseded = list((root / "work" / "train_aligner" / "superseded").iterdir())
    assert len(superseded) == 1 and (superseded[0] / "step-00000002.pt").is_file()


def test_resume_hash_ignores_how_long_and_where_training_runs():
    base = AlignerConfig().model_dump(mode="json")
    longer = {**base, "epochs": 7, "max_steps": 99, "checkpoint_every_n_steps": 3, "num_workers": 2, "gpus": 1}
    reference = trainer.resume_hash(base, 80, "english_basic")
    assert trainer.resume_hash(longer, 80, "english_basic") == reference
    assert trainer.resume_hash({**base, "seed": 1}, 80, "english_basic") != reference
    assert trainer.resume_hash(base, 40, "english_basic") != reference


def test_a_warm_start_begins_at_the_file_weights_and_another_file_restarts_training(corpus):
    root, manifest_dir, features_dir = corpus
    run_stage(stage_argv(root, manifest_dir, features_dir, section(max_steps=4)))
    start = root / "start.pt"
    start.write_bytes((root / "aligner" / "model.pt").read_bytes())
    trained, _ = load_aligner(start)

    adapt = root / "adapt"
    # a rate too small to move the weights: after one step they are still the file's
    payload = section(max_steps=1, learning_rate=1e-12, weight_decay=0.0, seed=99)
    argv = [*stage_argv(adapt, manifest_dir, features_dir, payload), "--warm-start", str(start)]
    metrics = run_stage(argv)
    assert metrics["step"] == 1 and metrics["resumed_from_step"] == 0 and metrics["warm_started_from"] == str(start)
    adapted, info = load_aligner(adapt / "aligner" / "model.pt")
    assert info.step == 1 and info.extra["warm_started_from"] == str(start)
    for name, tensor in trained.state_dict().items():
        assert torch.allclose(adapted.state_dict()[name], tensor, atol=1e-6), name
    fresh = root / "fresh"
    run_stage(stage_argv(fresh, manifest_dir, features_dir, payload))
    scratch, _ = load_aligner(fresh / "aligner" / "model.pt")
    assert not torch.allclose(scratch.embedding.weight, trained.embedding.weight, atol=1e-3)

    # the same settings resume; another file at the same path starts afresh (its digest is in the hash)
    two_steps = section(**{**json.loads(payload)["aligner"], "max_steps": 2})
    longer = [*stage_argv(adapt, manifest_dir, features_dir, two_steps), "--warm-start", str(start)]
    assert run_stage(longer)["resumed_from_step"] == 1
    start.write_bytes((fresh / "aligner" / "model.pt").read_bytes())
    assert run_stage(longer)["resumed_from_step"] == 0


def test_a_warm_start_file_that_does_not_fit_is_refused_before_training(corpus):
    from tts_pipeline.errors import UserError

    root, manifest_dir, features_dir = corpus
    run_stage(stage_argv(root, manifest_dir, features_dir, section(max_steps=1, embedding_dim=24)))
    adapt = root / "adapt"
    argv = stage_argv(adapt, manifest_dir, features_dir, section(max_steps=1))
    argv += ["--warm-start", str(root / "aligner" / "model.pt")]
    expected = r"(?s)aligner\.init_from: .*embedding_dim 24, but aligner\.embedding_dim is 16"
    with pytest.raises(UserError, match=expected):
        run_stage(argv)
    assert not (adapt / "aligner" / "model.pt").exists()


def test_resume_hash_carries_the_warm_start_file_digest():
    base = AlignerConfig().model_dump(mode="json")
    reference = trainer.resume_hash(base, 80, "english_basic")
    assert trainer.resume_hash(base, 80, "english_basic", init_digest=None) == reference
    one = trainer.resume_hash(base, 80, "english_basic", init_digest="a" * 64)
    assert one != reference and one != trainer.resume_hash(base, 80, "english_basic", init_digest="b" * 64)


def _datasets(manifest_dir: Path, features_dir: Path) -> tuple[AlignerDataset, AlignerDataset]:
    from tts_pipeline.data.manifest import read_manifest

    mels = features_dir / "mels"
    return tuple(
        AlignerDataset(read_manifest(manifest_path(manifest_dir, split)), mels, N_MELS, "characters", "english_basic")
        for split in ("train", "val")
    )


class Interrupt(Exception):
    pass


def test_interrupted_and_resumed_training_matches_an_uninterrupted_one(corpus):
    root, manifest_dir, features_dir = corpus
    train_set, val_set = _datasets(manifest_dir, features_dir)
    # batch 3 over 8 items: 3 batches per epoch, so step 4 is in the middle of epoch 2
    cfg = AlignerConfig(embedding_dim=16, attention_dim=8, batch_size=3, max_steps=8, checkpoint_every_n_steps=2)
    context = DistributedContext(device=torch.device("cpu"))
    sizes = {"n_symbols": 148, "n_mels": N_MELS}

    straight = trainer.fit(cfg, train_set, val_set, LoopIO(CheckpointManager(root / "a", "h"), context), **sizes)

    def stop_at_4(state: trainer.AlignerState) -> None:
        if state.step == 4:
            raise Interrupt

    manager = CheckpointManager(root / "b", "h")
    with pytest.raises(Interrupt):
        trainer.fit(cfg, train_set, val_set, LoopIO(manager, context, on_checkpoint=stop_at_4), **sizes)
    checkpoint = manager.latest()
    assert (checkpoint.step, checkpoint.epoch, checkpoint.extra["batch_in_epoch"]) == (4, 2, 1)
    resumed = trainer.fit(cfg, train_set, val_set, LoopIO(manager, context, checkpoint), **sizes)

    assert resumed.step == straight.step == 8 and resumed.epoch == straight.epoch == 3
    for ours, theirs in zip(resumed.metrics["history"], straight.metrics["history"], strict=True):
        assert ours["val_loss"] == pytest.approx(theirs["val_loss"], rel=1e-5)
    for name, tensor in straight.model.state_dict().items():
        assert torch.allclose(resumed.model.state_dict()[name], tensor, atol=1e-6), name
    assert [h["epoch"] for h in resumed.metrics["history"]] == [1.0, 2.0]


def test_a_non_finite_loss_names_the_step_and_keeps_the_last_good_checkpoint(corpus, monkeypatch):
    root, manifest_dir, features_dir = corpus
    calls = {"n": 0}
    real = aligner_step.forward_sum_loss

    def poisoned(*args, **kwargs):
        loss = real(*args, **kwargs)
        if torch.is_grad_enabled():  # training steps only, not validation
            calls["n"] += 1
            if calls["n"] == 3:
                return loss * float("nan")
        return loss

    monkeypatch.setattr(aligner_step, "forward_sum_loss", poisoned)
    expected = r"non-finite loss \(ctc nan.*\) at step 3 \(epoch 2\).*step-00000002\.pt"
    with pytest.raises(TrainingDiverged, match=expected):
        run_stage(stage_argv(root, manifest_dir, features_dir, section(max_steps=10)))
    manager = CheckpointManager(root / "work" / "train_aligner", "unused")
    assert [p.name for p in manager.paths()] == ["step-00000001.pt", "step-00000002.pt"]
    assert not (root / "aligner" / "model.pt").exists()


def test_unusable_features_are_reported(corpus):
    root, manifest_dir, features_dir = corpus
    (features_dir / "mels" / "train-3.npy").unlink()
    from tts_pipeline.errors import UserError

    with pytest.raises(UserError, match="train-3"):
        run_stage(stage_argv(root, manifest_dir, features_dir, section(max_steps=1)))


@pytest.mark.slow
def test_a_resumed_run_continues_the_same_mlflow_run(corpus, monkeypatch):
    root, manifest_dir, features_dir = corpus
    monkeypatch.setenv("TTS_TRACKING", "1")
    monkeypatch.setenv("TTS_TRACKING_URI", f"sqlite:///{root / 'mlflow.db'}")
    monkeypatch.setenv("TTS_MLFLOW_EXPERIMENT", "aligner-test")
    monkeypatch.setenv("TTS_LOG_EVERY_N_STEPS", "1")
    argv = stage_argv(root, manifest_dir, features_dir, section(max_steps=5))
    real_step = aligner_loop.train_step

    def crash_after_3(state, *args, **kwargs):
        if state.step == 3:
            raise RuntimeError("killed")
        return real_step(state, *args, **kwargs)

    monkeypatch.setattr(aligner_loop, "train_step", crash_after_3)
    with pytest.raises(RuntimeError, match="killed"):
        run_stage(argv)
    work = CheckpointManager(root / "work" / "train_aligner", "unused")
    run_id = torch.load(work.paths()[-1], weights_only=True)["run_id"]
    settings = tracking.settings_from_env(tracking.TrackingSettings(enabled=False, uri="", experiment=""))
    assert run_id and tracking.get_run(settings, run_id)["status"] == "FAILED"

    monkeypatch.setattr(aligner_loop, "train_step", real_step)
    assert run_stage(argv)["resumed_from_step"] == 3
    assert torch.load(work.paths()[-1], weights_only=True)["run_id"] == run_id
    summary = tracking.get_run(settings, run_id)
    assert summary["status"] == "FINISHED" and "val/loss" in summary["metrics"]
    assert [step for step, _ in tracking.metric_history(settings, run_id, "train/loss")] == [1, 2, 3, 4, 5]


@pytest.mark.slow
def test_sigkill_then_rerun_reaches_the_same_final_step(tmp_path):
    manifest_dir, features_dir = make_corpus(tmp_path, frames_per_char=12)
    payload = section(max_steps=150, checkpoint_every_n_steps=10, batch_size=2)
    argv = stage_argv(tmp_path, manifest_dir, features_dir, payload)
    command = [sys.executable, "-m", "tts_pipeline", "train_aligner", *argv]
    saved = kill_after_first_checkpoint(command, tmp_path / "work" / "train_aligner")
    assert not (tmp_path / "aligner" / "model.pt").exists()
    assert saved and saved[-1] < 150

    rerun(command)
    metrics = json.loads((tmp_path / "aligner" / "metrics.json").read_text())
    assert metrics["step"] == 150 and metrics["resumed_from_step"] == saved[-1]
    assert metrics["steps_this_run"] == 150 - saved[-1]


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
@pytest.mark.parametrize("amp", ["off", "fp16", "bf16"])
def test_two_steps_on_cuda(corpus, amp):
    root, manifest_dir, features_dir = corpus
    metrics = run_stage(stage_argv(root, manifest_dir, features_dir, section(max_steps=2, gpus=1, amp=amp)))
    assert metrics["device"].startswith("cuda") and metrics["step"] == 2 and np.isfinite(metrics["val_loss"])
    model, _ = load_aligner(root / "aligner" / "model.pt")
    assert next(model.parameters()).device.type == "cpu"
