"""The train_hifigan stage and its trainer on a tiny synthetic corpus: outputs, schedule, resuming,
corrupt and foreign checkpoints, NaN, fine-tuning, SIGKILL, MLflow samples."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import soundfile as sf
import torch

from tts_pipeline import tracking
from tts_pipeline.audio import MelSpectrogram
from tts_pipeline.config import AudioConfig, HiFiGANConfig
from tts_pipeline.data.manifest import manifest_path, read_manifest
from tts_pipeline.errors import UserError
from tts_pipeline.files import write_jsonl
from tts_pipeline.models.hifigan.data import AudioSegments, MelAudioSegments
from tts_pipeline.models.hifigan.model_file import load_generator
from tts_pipeline.precision import resolve_precision
from tts_pipeline.stages import train_hifigan as stage
from tts_pipeline.training import hifigan as trainer
from tts_pipeline.training.checkpoint import CheckpointManager, load_checkpoint
from tts_pipeline.training.engine import TrainingDiverged
from tts_pipeline.training.hifigan import loop as hifigan_loop
from tts_pipeline.training.hifigan import step as hifigan_step
from tts_pipeline.training.loop import LoopIO

from ..stage_helpers import kill_after_first_checkpoint, rerun, run_in_process

SR = 22050
AUDIO = AudioConfig()
TINY: dict[str, Any] = {
    "upsample_initial_channel": 16,
    "resblock_kernel_sizes": [3, 5],
    "resblock_dilation_sizes": [[1, 3], [1, 3]],
    "mpd_periods": [2, 3],
    "discriminator_channels_scale": 0.0625,
    "segment_size": 2048,
    "global_batch_size": 4,
    "batch_size": 4,
    "gpus": 0,
    "num_workers": 0,
    "epochs": 100,
    "validation_every_n_epochs": 1,
    "validation_repeats": 1,
    "checkpoint_every_n_epochs": 1,
    "n_samples": 1,
    "samples_every_n_epochs": 1,
}


@pytest.fixture(autouse=True)
def one_thread():
    torch.set_num_threads(1)


def make_corpus(root: Path, n_train: int = 8, n_val: int = 2, seed: int = 0) -> Path:
    """WAVs of a few harmonics with noise (0.2-0.35 s), their manifests and their mels (``root/mels``)."""
    rng = np.random.default_rng(seed)
    wavs, mels = root / "wavs", root / "mels"
    wavs.mkdir(parents=True)
    mels.mkdir()
    mel_fn = MelSpectrogram(AUDIO)
    for split, count in (("train", n_train), ("val", n_val)):
        records = []
        for index in range(count):
            utterance_id = f"{split}-{index}"
            n = int(rng.integers(4500, 7700))
            t = np.arange(n) / SR
            f0 = rng.uniform(100, 300)
            audio = sum(0.2 / h * np.sin(2 * np.pi * h * f0 * t) for h in (1, 2, 3)) + 0.01 * rng.normal(size=n)
            path = wavs / f"{utterance_id}.wav"
            sf.write(path, audio.astype(np.float32), SR, subtype="PCM_16")
            pcm = sf.read(path, dtype="float32")[0]
            np.save(mels / f"{utterance_id}.npy", mel_fn(torch.from_numpy(pcm)).numpy())
            records.append({"id": utterance_id, "wav": str(path), "n_samples": n, "text": "a"})
        write_jsonl(manifest_path(root / "data", split), records)
    return root / "data"


def section(**hifigan: Any) -> str:
    return json.dumps({"hifigan": {**TINY, **hifigan}, "audio": AUDIO.model_dump(mode="json")})


def stage_argv(root: Path, payload: str, name: str = "hifigan", *extra: str) -> list[str]:
    return [
        "--section", payload,
        "--manifest-dir", str(root / "data"),
        "--work-dir", str(root / "work" / name),
        "--model", str(root / name / "model.pt"),
        "--metrics", str(root / name / "metrics.json"),
        *extra,
    ]  # fmt: skip


def run_stage(argv: list[str]) -> dict:
    return json.loads(run_in_process(stage, argv).metrics.read_text())


@pytest.fixture
def corpus(tmp_path) -> Path:
    make_corpus(tmp_path)
    return tmp_path


def test_two_steps_write_a_model_that_rebuilds_alone_then_resume_continues(corpus):
    metrics = run_stage(stage_argv(corpus, section(max_steps=2)))
    assert metrics["step"] == 2 and metrics["resumed_from_step"] == 0 and metrics["steps_this_run"] == 2
    assert metrics["steps_per_epoch"] == 2 and metrics["epoch"] == 1 and metrics["accumulation"] == 1
    assert metrics["n_train"] == 8 and metrics["n_val"] == 2 and metrics["device"] == "cpu"
    assert np.isfinite(metrics["val_loss_mel_start"]) and np.isfinite(metrics["val_loss_mel"])
    assert metrics["frames_per_s"] > 0
    assert metrics["frames_per_s_nvidia_units"] == pytest.approx(metrics["frames_per_s"] * 80 / 8)

    generator, info = load_generator(corpus / "hifigan" / "model.pt")
    assert info.step == 2 and info.epoch == 1 and info.audio == AUDIO and info.fine_tuned_from is None
    assert generator.has_weight_norm and not generator.training
    assert generator(torch.zeros(1, 80, 5)).shape == (1, 1, 5 * 256)
    plain, _ = load_generator(corpus / "hifigan" / "model.pt", remove_weight_norm=True)
    mel = torch.randn(1, 80, 6)
    assert torch.allclose(plain(mel), generator(mel), atol=1e-5)

    metrics = run_stage(stage_argv(corpus, section(max_steps=5)))
    assert metrics["resumed_from_step"] == 2 and metrics["step"] == 5 and metrics["steps_this_run"] == 3
    assert metrics["epoch"] == 3 and metrics["epochs_completed"] == 2
    assert load_generator(corpus / "hifigan" / "model.pt")[1].step == 5
    work = corpus / "work" / "hifigan"
    assert sorted(p.name for p in work.glob("step-*.pt")) == ["step-00000004.pt", "step-00000005.pt"]


def test_a_finished_run_reruns_without_training(corpus):
    argv = stage_argv(corpus, section(epochs=1))
    first = run_stage(argv)
    again = run_stage(argv)
    assert first["step"] == again["step"] == 2 and again["steps_this_run"] == 0
    assert again["val_loss_mel"] == first["val_loss_mel"]


def test_a_corrupt_latest_checkpoint_is_skipped(corpus):
    run_stage(stage_argv(corpus, section(max_steps=4)))
    work = corpus / "work" / "hifigan"
    newest = work / "step-00000004.pt"
    newest.write_bytes(newest.read_bytes()[:1000])
    metrics = run_stage(stage_argv(corpus, section(max_steps=6)))
    assert metrics["resumed_from_step"] == 2 and metrics["step"] == 6


def test_a_changed_config_starts_fresh_and_moves_the_old_checkpoints_aside(corpus):
    run_stage(stage_argv(corpus, section(max_steps=2)))
    # Longer training and another batch split are the same run; another learning rate is not.
    assert run_stage(stage_argv(corpus, section(max_steps=3, batch_size=2)))["resumed_from_step"] == 2
    metrics = run_stage(stage_argv(corpus, section(max_steps=1, learning_rate=1e-3)))
    assert metrics["resumed_from_step"] == 0 and metrics["step"] == 1
    superseded = list((corpus / "work" / "hifigan" / "superseded").iterdir())
    assert len(superseded) == 1 and (superseded[0] / "step-00000003.pt").is_file()


def test_the_learning_rate_decays_once_per_epoch(corpus):
    metrics = run_stage(stage_argv(corpus, section(epochs=3, lr_decay=0.5, learning_rate=1e-3)))
    lrs = [entry["lr_gen"] for entry in metrics["history"] if "lr_gen" in entry]
    assert lrs == pytest.approx([1e-3, 5e-4, 2.5e-4])
    assert metrics["learning_rate"] == pytest.approx(1.25e-4)  # what epoch 4 would start at


def test_an_indivisible_global_batch_names_the_keys_and_the_gpu_count(corpus):
    with pytest.raises(UserError, match=r"hifigan\.global_batch_size \(4\).*hifigan\.batch_size \(3\).*1 process"):
        run_stage(stage_argv(corpus, section(batch_size=3)))


def test_a_non_finite_loss_names_the_step_and_keeps_the_last_good_checkpoint(corpus, monkeypatch):
    calls = {"n": 0}
    real = hifigan_step.discriminator_loss

    def poisoned(*args, **kwargs):
        loss = real(*args, **kwargs)
        if torch.is_grad_enabled():  # training steps only: 2 calls (MPD, MSD) per step
            calls["n"] += 1
            if calls["n"] == 5:
                return loss * float("nan")
        return loss

    monkeypatch.setattr(hifigan_step, "discriminator_loss", poisoned)
    expected = r"non-finite loss \(loss_discrim nan.*\) at step 3 \(epoch 2\).*step-00000002\.pt"
    with pytest.raises(TrainingDiverged, match=expected):
        run_stage(stage_argv(corpus, section(max_steps=10)))
    manager = CheckpointManager(corpus / "work" / "hifigan", "unused")
    assert [p.name for p in manager.paths()] == ["step-00000002.pt"]
    assert not (corpus / "hifigan" / "model.pt").exists()


def test_interrupted_and_resumed_training_matches_an_uninterrupted_one(corpus):
    cfg = HiFiGANConfig(**{**TINY, "max_steps": 4})
    records = read_manifest(manifest_path(corpus / "data", "train"))

    def fresh_set() -> AudioSegments:
        return AudioSegments(records, AUDIO, cfg.segment_size)

    straight = trainer.fit(cfg, AUDIO, fresh_set(), None, LoopIO(CheckpointManager(corpus / "a", "h")))

    class Interrupt(Exception):
        pass

    def stop_at_2(state: trainer.HiFiGANState) -> None:
        if state.step == 2:
            raise Interrupt

    manager = CheckpointManager(corpus / "b", "h")
    with pytest.raises(Interrupt):
        trainer.fit(cfg, AUDIO, fresh_set(), None, LoopIO(manager, on_checkpoint=stop_at_2))
    checkpoint = manager.latest()
    assert (checkpoint.step, checkpoint.epoch, checkpoint.extra["batch_in_epoch"]) == (2, 2, 0)
    resumed = trainer.fit(cfg, AUDIO, fresh_set(), None, LoopIO(manager, checkpoint=checkpoint))
    assert resumed.step == straight.step == 4
    for name, tensor in straight.model.state_dict().items():
        assert torch.allclose(resumed.model.state_dict()[name], tensor, atol=1e-6), name
    ours, theirs = manager.latest().states, CheckpointManager(corpus / "a", "h").latest().states
    for family in ("mpd", "msd"):
        for name, tensor in theirs[family].items():
            assert torch.allclose(ours[family][name], tensor, atol=1e-6), f"{family}.{name}"


def test_fine_tuning_reads_the_mels_folder_and_multiplies_the_learning_rate(corpus, monkeypatch):
    base = run_stage(stage_argv(corpus, section(epochs=1, lr_decay=0.5, learning_rate=1e-3)))
    assert base["learning_rate"] == pytest.approx(5e-4)

    served: list[str] = []
    real_getitem = MelAudioSegments.__getitem__

    def spy(self, index):
        item = real_getitem(self, index)
        served.append(item["id"])
        return item

    monkeypatch.setattr(MelAudioSegments, "__getitem__", spy)
    model = corpus / "hifigan" / "model.pt"
    extra = ("--init-from", str(model), "--mels-dir", str(corpus / "mels"))
    metrics = run_stage(stage_argv(corpus, section(max_steps=1, learning_rate=1e-3), "tuned", *extra))
    assert metrics["learning_rate"] == pytest.approx(3 * 5e-4)  # the source's lr x fine_tune_lr_factor
    assert metrics["fine_tuned_from"] == str(model) and metrics["step"] == 1
    assert {i for i in served if i.startswith("train-")} and {i for i in served if i.startswith("val-")}
    _, info = load_generator(corpus / "tuned" / "model.pt")
    assert info.fine_tuned_from == str(model)

    (corpus / "mels" / "train-3.npy").unlink()
    with pytest.raises(UserError, match="train-3"):
        run_stage(stage_argv(corpus, section(max_steps=1), "tuned2", *extra))


def test_fine_tuning_by_hand_with_a_config_file_reads_the_fine_tuning_settings(corpus):
    """``--config`` cuts the config as the workflow does: fine-tuning (``--init-from``) gets its rule's
    slice, fine_tune_epochs and fine_tune_lr_factor included (base training's slice leaves them out)."""
    import yaml

    from ..conftest import REPO

    raw = yaml.safe_load((REPO / "config" / "demo.yaml").read_text())
    shape = ("resblock", "upsample_rates", "upsample_kernel_sizes", "upsampling", "source", "source_harmonics")
    shape += ("source_first_stage", "source_injection")
    generator = {key: raw["hifigan"][key] for key in shape if key in raw["hifigan"]}
    pitch = ("--pitch-features", str(write_pitch_features(corpus)))  # the demo's vocoder has a harmonic source
    base_section = section(epochs=1, lr_decay=0.5, learning_rate=1e-3, **generator)
    base = run_stage(stage_argv(corpus, base_section, "hifigan", *pitch))
    raw["hifigan"].update(TINY, learning_rate=1e-3, fine_tune_epochs=1, fine_tune_lr_factor=0.5, max_steps=2)
    config = corpus / "config.yaml"
    config.write_text(yaml.safe_dump(raw))
    argv = stage_argv(corpus, "", "tuned", "--init-from", str(corpus / "hifigan" / "model.pt"), *pitch)
    argv[argv.index("--section") : argv.index("--section") + 2] = ["--config", str(config)]
    metrics = run_stage(argv)
    assert metrics["learning_rate"] == pytest.approx(base["learning_rate"] * 0.5, rel=1e-3)  # not x 3.0
    assert metrics["epoch"] == 1 and metrics["step"] == 2  # one epoch of 8 clips at batch 4


def test_the_generator_warms_up_alone_then_the_discriminators_join_in_training_and_in_fine_tuning(
    corpus, monkeypatch
):
    calls: list[bool] = []
    real_step = trainer.train_step

    def spy(state, runtime, micro_batches, *, adversarial):
        calls.append(adversarial)
        mpd_before = [p.detach().clone() for p in state.discriminators.mpd.parameters()]
        losses = real_step(state, runtime, micro_batches, adversarial=adversarial)
        after = state.discriminators.mpd.parameters()
        moved = any(not torch.equal(a, b) for a, b in zip(mpd_before, after, strict=True))
        assert moved == adversarial  # the warm-up never touches the discriminators
        assert (losses["loss_discrim"] == 0.0) == (not adversarial)
        assert losses["loss_stft"] > 0  # stft_loss_scale > 0: in the objective in both phases
        return losses

    monkeypatch.setattr(hifigan_loop, "train_step", spy)
    warm = {"max_steps": 4, "discriminator_start_step": 3, "stft_loss_scale": 1.0}
    metrics = run_stage(stage_argv(corpus, section(**warm)))
    assert calls == [False, False, False, True] and metrics["step"] == 4
    history = metrics["history"][-1]
    assert history["train_loss_stft"] > 0

    calls.clear()  # a resumed run at step 2 of 5 warms up once more, then trains adversarially
    stopped = run_stage(stage_argv(corpus, section(**{**warm, "max_steps": 2}), "resumed"))
    assert stopped["step"] == 2 and calls == [False, False]
    calls.clear()
    run_stage(stage_argv(corpus, section(**{**warm, "max_steps": 5}), "resumed"))
    assert calls == [False, True, True]

    calls.clear()
    extra = ("--init-from", str(corpus / "hifigan" / "model.pt"), "--mels-dir", str(corpus / "mels"))
    run_stage(stage_argv(corpus, section(**{**warm, "max_steps": 2}), "tuned", *extra))
    assert calls == [True, True]  # NVIDIA's fine-tuning: adversarial from its first step

    calls.clear()  # fine-tuning's own warm-up counts its steps from 0, whatever the base run's count
    tuned = {**warm, "max_steps": 3, "fine_tune_spectral_steps": 2}
    run_stage(stage_argv(corpus, section(**tuned), "tuned_warm", *extra))
    assert calls == [False, False, True]


def test_fine_tuning_from_a_checkpoint_takes_the_discriminators_and_optimisers(corpus):
    cfg = HiFiGANConfig(**{**TINY, "max_steps": 2, "fine_tune_lr_factor": 2.0})
    records = read_manifest(manifest_path(corpus / "data", "train"))
    manager = CheckpointManager(corpus / "base", "h")
    trainer.fit(cfg, AUDIO, AudioSegments(records, AUDIO, cfg.segment_size), None, LoopIO(manager))
    source = load_checkpoint(manager.paths()[-1])

    init = trainer.load_init(corpus / "base")  # a folder: its newest checkpoint
    assert init.path == source.path and init.mpd is not None and init.optim_d is not None
    precision = resolve_precision("off", torch.device("cpu"))
    state = trainer.build_state(cfg, 80, precision)
    trainer.apply_init(
        state, init, default_lr=cfg.learning_rate, lr_factor=cfg.fine_tune_lr_factor, lr_decay=cfg.lr_decay
    )
    for name, tensor in source.states["msd"].items():
        assert torch.equal(state.discriminators.msd.state_dict()[name], tensor), name
    assert state.optim_g.state_dict()["state"], "Adam moments come along"
    source_lr = cfg.learning_rate * cfg.lr_decay  # the checkpoint is at the start of epoch 2
    assert source.states["optim_g"]["param_groups"][0]["lr"] == pytest.approx(source_lr)
    assert state.optim_g.param_groups[0]["lr"] == pytest.approx(2 * source_lr)
    assert state.optim_d.param_groups[0]["lr"] == pytest.approx(2 * source_lr)

    other = HiFiGANConfig(**{**TINY, "upsample_initial_channel": 32})
    with pytest.raises(UserError, match="generator config"):
        fresh = trainer.build_state(other, 80, precision)
        trainer.apply_init(fresh, init, default_lr=other.learning_rate, lr_factor=1.0, lr_decay=other.lr_decay)


@pytest.mark.parametrize("layouts", ["jik876", "nvidia"])
def test_fine_tuning_starts_from_a_published_generator_and_discriminator_pair(corpus, layouts):
    """``--init-from g_* --init-discriminators do_*`` (what hifigan.checkpoint +
    hifigan.discriminator_checkpoint become): the stage trains from both files' weights."""
    from tts_pipeline.models.hifigan import Generator
    from tts_pipeline.models.hifigan.discriminators import MultiPeriodDiscriminator, MultiScaleDiscriminator

    from ..foreign_layouts import jik876_discriminators, jik876_generator, nvidia_discriminators, nvidia_generator

    cfg = HiFiGANConfig(**TINY)
    torch.manual_seed(3)
    generator = Generator(cfg, 80)
    mpd = MultiPeriodDiscriminator(cfg.mpd_periods, cfg.discriminator_channels_scale)
    msd = MultiScaleDiscriminator(cfg.discriminator_channels_scale)
    save_generator, save_discriminators = {
        "jik876": (jik876_generator, jik876_discriminators),
        "nvidia": (nvidia_generator, nvidia_discriminators),
    }[layouts]
    g_file, d_file = corpus / "g_02500000", corpus / "do_02500000"
    torch.save(save_generator(generator), g_file)
    torch.save(save_discriminators(mpd, msd), d_file)

    starts: list[dict[str, torch.Tensor]] = []
    real_step = hifigan_loop.train_step

    def spy(state, runtime, micro_batches, *, adversarial):
        if not starts:  # the weights the first step starts from
            weights = {**state.discriminators.msd.state_dict(), **state.generator.state_dict()}
            starts.append({name: tensor.clone() for name, tensor in weights.items()})
        return real_step(state, runtime, micro_batches, adversarial=adversarial)

    extra = ("--init-from", str(g_file), "--init-discriminators", str(d_file), "--mels-dir", str(corpus / "mels"))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(hifigan_loop, "train_step", spy)
        metrics = run_stage(stage_argv(corpus, section(max_steps=1), "tuned", *extra))
    assert metrics["step"] == 1 and metrics["fine_tuned_from"] == str(g_file)
    for name, tensor in msd.state_dict().items():
        assert torch.equal(starts[0][name], tensor), name
    ours = generator.state_dict()
    assert set(ours) <= set(starts[0])
    assert all(torch.equal(starts[0][name], tensor) for name, tensor in ours.items())


def test_a_model_file_that_is_not_hifigan_is_refused(tmp_path):
    from tts_pipeline.models.model_file import save_model_file

    save_model_file(tmp_path / "other.pt", torch.nn.Linear(2, 2), {"n": 2}, 1)
    with pytest.raises(UserError, match="not a HiFi-GAN model file"):
        load_generator(tmp_path / "other.pt")
    with pytest.raises(UserError, match="not found"):
        load_generator(tmp_path / "missing.pt")


class RecordingSink:
    """Stands in for an MLflow run: keeps metrics and copies of artifacts."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.metrics: list[tuple[int | None, dict[str, float]]] = []
        self.artifacts: list[str] = []

    active = True

    def log_metrics(self, metrics, step=None) -> None:
        self.metrics.append((step, dict(metrics)))

    def log_artifact(self, path, artifact_path=None) -> None:
        self.artifacts.append(f"{artifact_path}/{Path(path).name}")


def test_samples_and_train_metrics_reach_the_tracking_run(corpus):
    cfg = HiFiGANConfig(**{**TINY, "epochs": 2, "samples_every_n_epochs": 2})
    records = read_manifest(manifest_path(corpus / "data", "train"))
    val_records = read_manifest(manifest_path(corpus / "data", "val"))
    clips = trainer.load_sample_clips(val_records, AUDIO, 1)
    sink = RecordingSink(corpus)
    val_set = AudioSegments(val_records, AUDIO, cfg.segment_size, fixed_segments_seed=cfg.seed)
    trainer.fit(
        cfg,
        AUDIO,
        AudioSegments(records, AUDIO, cfg.segment_size),
        val_set,
        LoopIO(CheckpointManager(corpus / "w", "h"), sink=sink, log_every=1),
        sample_clips=clips,
    )
    train_steps = [step for step, figures in sink.metrics if "train_loss_gen" in figures]
    assert train_steps == [1, 2, 3, 4]
    figures = next(figures for step, figures in sink.metrics if step == 1 and "train_loss_gen" in figures)
    assert {"train_loss_discrim", "train_loss_mel", "lr_gen", "lr_discrim", "frames_per_s"} <= set(figures)
    val_steps = [step for step, figures in sink.metrics if "val_loss_mel" in figures]
    assert val_steps == [0, 2, 4]
    assert sorted(sink.artifacts) == [
        "samples/epoch_00002/val-0.png",
        "samples/epoch_00002/val-0.wav",
        "samples/ground_truth/val-0.wav",
    ]


@pytest.mark.slow
def test_a_resumed_run_continues_the_same_mlflow_run(corpus, monkeypatch):
    monkeypatch.setenv("TTS_TRACKING", "1")
    monkeypatch.setenv("TTS_TRACKING_URI", f"sqlite:///{corpus / 'mlflow.db'}")
    monkeypatch.setenv("TTS_MLFLOW_EXPERIMENT", "hifigan-test")
    monkeypatch.setenv("TTS_LOG_EVERY_N_STEPS", "1")
    argv = stage_argv(corpus, section(max_steps=4))
    real_step = trainer.train_step

    def crash_at_3(state, *args, **kwargs):
        if state.step == 2:
            raise RuntimeError("killed")
        return real_step(state, *args, **kwargs)

    monkeypatch.setattr(hifigan_loop, "train_step", crash_at_3)
    with pytest.raises(RuntimeError, match="killed"):
        run_stage(argv)
    work = CheckpointManager(corpus / "work" / "hifigan", "unused")
    run_id = load_checkpoint(work.paths()[-1]).run_id
    settings = tracking.settings_from_env(tracking.TrackingSettings(enabled=False, uri="", experiment=""))
    assert run_id and tracking.get_run(settings, run_id)["status"] == "FAILED"

    monkeypatch.setattr(hifigan_loop, "train_step", real_step)
    assert run_stage(argv)["resumed_from_step"] == 2
    assert load_checkpoint(work.paths()[-1]).run_id == run_id
    summary = tracking.get_run(settings, run_id)
    assert summary["status"] == "FINISHED" and "val/loss_mel" in summary["metrics"]
    assert [step for step, _ in tracking.metric_history(settings, run_id, "train/loss_gen")] == [1, 2, 3, 4]
    artifacts = Path(summary["artifact_uri"].removeprefix("file://"))
    assert (artifacts / "samples" / "epoch_00001" / "val-0.wav").is_file()
    assert (artifacts / "samples" / "epoch_00002" / "val-0.png").is_file()
    assert (artifacts / "metrics.json").is_file() and (artifacts / "model" / "model.pt").is_file()

    # More steps later: the weights still hold, so the same run goes on (one unbroken curve), each
    # figure once per step; the first max_steps stays the param, the new one is named in a tag.
    longer = stage_argv(corpus, section(max_steps=6))
    assert run_stage(longer)["resumed_from_step"] == 4
    assert load_checkpoint(work.paths()[-1]).run_id == run_id
    summary = tracking.get_run(settings, run_id)
    assert [step for step, _ in tracking.metric_history(settings, run_id, "train/loss_gen")] == [1, 2, 3, 4, 5, 6]
    assert [step for step, _ in tracking.metric_history(settings, run_id, "val/loss_mel")] == [0, 2, 4, 6]
    assert summary["params"]["hifigan.max_steps"] == "4"
    assert summary["tags"]["changed_on_resume"] == "hifigan.max_steps: 4 -> 6"


@pytest.mark.slow
def write_pitch_features(root: Path, hz: float = 150.0) -> Path:
    """A features folder whose pitch tracks say ``hz`` on every frame but the first two (unvoiced); its index."""
    from tts_pipeline.data.feature_layout import FeatureLayout

    layout = FeatureLayout(root / "features")
    layout.folder("pitch").mkdir(parents=True)
    for split in ("train", "val"):
        for record in read_manifest(manifest_path(root / "data", split)):
            track = np.full(record.n_samples // AUDIO.hop_length, hz, dtype=np.float32)
            track[:2] = 0.0
            np.save(layout.pitch(record.id), track)
    layout.features_index.write_text("")
    return layout.features_index


def test_a_harmonic_source_trains_on_the_pitch_features_and_then_needs_only_the_mel(corpus):
    index = write_pitch_features(corpus)
    payload = section(max_steps=2, upsampling="interpolate", source="harmonic", source_harmonics=4)
    metrics = run_stage(stage_argv(corpus, payload, "hifigan", "--pitch-features", str(index)))
    assert metrics["step"] == 2 and np.isfinite(metrics["val_loss_pitch"]) and np.isfinite(metrics["val_loss_mel"])
    assert all(np.isfinite(entry["train_loss_pitch"]) for entry in metrics["history"] if "train_loss_pitch" in entry)

    generator, _ = load_generator(corpus / "hifigan" / "model.pt")
    assert generator.has_source and generator.model_config()["sampling_rate"] == AUDIO.sampling_rate
    with torch.no_grad():
        audio = generator(torch.from_numpy(np.load(corpus / "mels" / "val-0.npy"))[None])
    assert audio.shape[-1] == np.load(corpus / "mels" / "val-0.npy").shape[1] * AUDIO.hop_length

    with pytest.raises(UserError, match="--pitch-features"):
        run_stage(stage_argv(corpus, payload, "no-pitch"))
    with pytest.raises(UserError, match="only a generator with hifigan.source: harmonic"):
        run_stage(stage_argv(corpus, section(max_steps=1), "plain", "--pitch-features", str(index)))


def test_new_pitch_features_start_a_harmonic_source_vocoder_afresh(corpus):
    """The excitation trains on the pitch features: pitch extracted anew (its statistics change) makes a
    rerun train anew; the same features resume."""
    index = write_pitch_features(corpus)
    payload = section(max_steps=1, upsampling="interpolate", source="harmonic", source_harmonics=4)
    run_stage(stage_argv(corpus, payload, "hifigan", "--pitch-features", str(index)))
    payload = section(max_steps=2, upsampling="interpolate", source="harmonic", source_harmonics=4)
    assert run_stage(stage_argv(corpus, payload, "hifigan", "--pitch-features", str(index)))["resumed_from_step"] == 1
    (index.parent / "pitch_stats.json").write_text('{"mean": 151.0, "std": 9.0}')
    payload = section(max_steps=3, upsampling="interpolate", source="harmonic", source_harmonics=4)
    assert run_stage(stage_argv(corpus, payload, "hifigan", "--pitch-features", str(index)))["resumed_from_step"] == 0


def test_sigkill_then_rerun_reaches_the_same_final_step(corpus):
    argv = stage_argv(corpus, section(max_steps=24, n_samples=0, validation_every_n_epochs=100))
    command = [sys.executable, "-m", "tts_pipeline", "train_hifigan", *argv]
    saved = kill_after_first_checkpoint(command, corpus / "work" / "hifigan")
    assert not (corpus / "hifigan" / "model.pt").exists()
    assert saved and saved[-1] < 24

    rerun(command)
    metrics = json.loads((corpus / "hifigan" / "metrics.json").read_text())
    assert metrics["step"] == 24 and metrics["resumed_from_step"] == saved[-1]
    assert metrics["steps_this_run"] == 24 - saved[-1]
    assert load_generator(corpus / "hifigan" / "model.pt")[1].step == 24


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
@pytest.mark.parametrize("amp", ["off", "fp16", "bf16"])
def test_two_steps_on_cuda(corpus, amp):
    metrics = run_stage(stage_argv(corpus, section(max_steps=2, gpus=1, amp=amp)))
    assert metrics["device"].startswith("cuda") and metrics["amp"] == amp and metrics["step"] == 2
    assert np.isfinite(metrics["val_loss_mel"])
    generator, _ = load_generator(corpus / "hifigan" / "model.pt")
    assert next(generator.parameters()).device.type == "cpu"
