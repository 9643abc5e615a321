"""Warm starts of train_fastpitch and train_hifigan (``<section>.init_from``) on tiny synthetic corpora:
the first step starts from the file's weights with a fresh optimiser and step counter, training moves
them, frozen parameters stay, FastPitch trains on and records this corpus's pitch statistics, a resumed
run continues while another file restarts it, the run is tracked with the file's hash, fine-tuning on
FastPitch mels follows a warm-started vocoder, and a file that does not fit is refused naming the key."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest
import torch

from tts_pipeline.config import AudioConfig, FastPitchConfig, HiFiGANConfig
from tts_pipeline.errors import UserError
from tts_pipeline.files import write_json
from tts_pipeline.models.fastpitch import FastPitch
from tts_pipeline.models.fastpitch.data import PitchStats, TextSettings
from tts_pipeline.models.fastpitch.model_file import load_fastpitch, save_fastpitch
from tts_pipeline.models.hifigan import Generator
from tts_pipeline.models.hifigan.model_file import load_generator, save_generator
from tts_pipeline.models.model_file import load_model_file
from tts_pipeline.precision import resolve_precision
from tts_pipeline.stages import training_stage
from tts_pipeline.tracking.tags import flatten_params
from tts_pipeline.training import fastpitch as fastpitch_trainer
from tts_pipeline.training.fastpitch import loop as fastpitch_loop
from tts_pipeline.training.hifigan import loop as hifigan_loop

from . import test_train_fastpitch as fp
from . import test_train_hifigan as hg

FILE_PITCH = PitchStats(mean=211.0, std=33.0)  # the speaker the file was trained on
NEW_PITCH = PitchStats(mean=120.0, std=25.0)  # this corpus's speaker
PITCH_BUFFERS = ("pitch_mean", "pitch_std")


@pytest.fixture(autouse=True)
def one_thread():
    torch.set_num_threads(1)


def clone(state: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    return {name: tensor.detach().clone() for name, tensor in state.items()}


# --------------------------------------------------------------------------------------------------
# FastPitch
# --------------------------------------------------------------------------------------------------


def fastpitch_file(
    path: Path, *, seed: int = 5, symbols: list[str] = fp.SYMBOLS, audio: AudioConfig = fp.AUDIO, **text: Any
) -> FastPitch:
    """A FastPitch of the stage tests' sizes saved as a model file, as if trained on another speaker."""
    torch.manual_seed(seed)
    model = FastPitch(FastPitchConfig(**fp.TINY), len(symbols), audio.n_mel_channels, FILE_PITCH.mean, FILE_PITCH.std)
    settings = TextSettings(
        symbols=tuple(symbols),
        source="aligner",
        symbols_kind="characters",
        symbol_set="english_basic",
        cleaners=text.get("cleaners", "basic_cleaners"),
    )
    save_fastpitch(path, model, step=500, epoch=9, learning_rate=1e-3, text=settings, pitch=FILE_PITCH, audio=audio)
    return model


@pytest.fixture
def corpus(tmp_path) -> Path:
    """The FastPitch stage tests' features, with this corpus's own pitch statistics."""
    fp.make_features(tmp_path)
    write_json(tmp_path / "features" / "pitch_stats.json", {"mean": NEW_PITCH.mean, "std": NEW_PITCH.std})
    return tmp_path


def first_step_spy(monkeypatch: pytest.MonkeyPatch, module: Any, weights: Any) -> list[dict[str, Any]]:
    """Replace ``module.train_step``; the list gets, at the first step, ``weights(state)``, the step counter
    and whether the optimiser(s) hold any state yet."""
    starts: list[dict[str, Any]] = []
    real = module.train_step

    def spy(state, *args, **kwargs):
        if not starts:
            optimisers = [getattr(state, name) for name in ("optimizer", "optim_g", "optim_d") if hasattr(state, name)]
            starts.append(
                {
                    "weights": clone(weights(state)),
                    "step": state.step,
                    "optimiser_state": any(optimiser.state for optimiser in optimisers),
                    "lr": optimisers[0].param_groups[0]["lr"],
                }
            )
        return real(state, *args, **kwargs)

    monkeypatch.setattr(module, "train_step", spy)
    return starts


def test_a_warm_started_fastpitch_starts_from_the_file_and_trains_on_this_corpus_pitch(corpus, monkeypatch):
    path = corpus / "voice.pt"
    init = fastpitch_file(path)
    starts = first_step_spy(monkeypatch, fastpitch_loop, lambda state: state.model.state_dict())
    metrics = fp.run_stage([*fp.stage_argv(corpus, fp.section(max_steps=2)), "--warm-start", str(path)])

    first = starts[0]
    assert first["step"] == 0 and not first["optimiser_state"], "a new run: fresh step counter and optimiser"
    for name, tensor in init.state_dict().items():
        if name not in PITCH_BUFFERS:
            assert torch.equal(first["weights"][name], tensor), name
    # pitch targets are normalised with this corpus's statistics, and so are the model's buffers
    assert float(first["weights"]["pitch_mean"]) == NEW_PITCH.mean
    assert float(first["weights"]["pitch_std"]) == NEW_PITCH.std
    assert metrics["step"] == 2 and metrics["resumed_from_step"] == 0 and metrics["warm_started_from"] == str(path)
    assert metrics["learning_rate"] == pytest.approx(0.01 * 2 / 10**1.5), "the section's Noam rate from step 1"
    assert metrics["n_frozen_params"] == 0

    model, info = load_fastpitch(corpus / "fastpitch" / "model.pt")
    assert info.pitch == NEW_PITCH and float(model.pitch_mean) == NEW_PITCH.mean
    assert float(model.pitch_std) == NEW_PITCH.std
    assert load_model_file(corpus / "fastpitch" / "model.pt").extra["warm_started_from"] == str(path)
    trained = model.state_dict()
    moved = [name for name, tensor in init.state_dict().items() if not torch.equal(trained[name], tensor)]
    assert "proj.weight" in moved and "encoder.word_emb.weight" in moved


def test_a_warm_started_fastpitch_resumes_and_another_file_restarts_it(corpus):
    path = corpus / "voice.pt"
    fastpitch_file(path)
    argv = fp.stage_argv(corpus, fp.section(max_steps=2, init_from=str(path)))  # the section's key, as the rule
    assert fp.run_stage(argv)["step"] == 2
    resumed = fp.run_stage(fp.stage_argv(corpus, fp.section(max_steps=3, init_from=str(path))))
    assert resumed["resumed_from_step"] == 2 and resumed["step"] == 3
    assert resumed["warm_started_from"] == str(path)
    assert load_fastpitch(corpus / "fastpitch" / "model.pt")[1].pitch == NEW_PITCH

    fastpitch_file(path, seed=6)  # another file at the same path: a new start
    restarted = fp.run_stage(fp.stage_argv(corpus, fp.section(max_steps=1, init_from=str(path))))
    assert restarted["resumed_from_step"] == 0 and restarted["step"] == 1


def test_frozen_parameters_keep_the_file_weights_and_stay_out_of_the_optimiser(corpus):
    path = corpus / "voice.pt"
    init = fastpitch_file(path)
    frozen = ("encoder", "pitch_emb")
    metrics = fp.run_stage(fp.stage_argv(corpus, fp.section(max_steps=2, init_from=str(path), freeze=list(frozen))))

    trained = load_fastpitch(corpus / "fastpitch" / "model.pt")[0].state_dict()
    for name, tensor in init.state_dict().items():
        if name.startswith(tuple(f"{prefix}." for prefix in frozen)):
            assert torch.equal(trained[name], tensor), name
    decoder = "decoder.layers.0.pos_ff.CoreNet.0.weight"
    assert not torch.equal(trained[decoder], init.state_dict()[decoder]), "the rest trains"
    expected = sum(p.numel() for name, p in init.named_parameters() if name.split(".")[0] in frozen)
    assert metrics["n_frozen_params"] == expected > 0

    cfg = FastPitchConfig(**{**fp.TINY, "init_from": str(path), "freeze": list(frozen)})
    cpu = resolve_precision("off", torch.device("cpu"))
    state = fastpitch_trainer.build_state(cfg, len(fp.SYMBOLS), 80, NEW_PITCH, cpu)
    optimised = {id(p) for group in state.optimizer.param_groups for p in group["params"]}
    for name, parameter in state.model.named_parameters():
        assert (name.split(".")[0] in frozen) == (not parameter.requires_grad) == (id(parameter) not in optimised)
    with pytest.raises(UserError, match=r"fastpitch\.freeze: \['emb'\] match no parameter"):
        bad = cfg.model_copy(update={"freeze": ["emb"]})
        fastpitch_trainer.build_state(bad, len(fp.SYMBOLS), 80, NEW_PITCH, cpu)


@pytest.mark.parametrize(
    ("made_with", "named"),
    [
        ({"symbols": fp.SYMBOLS[:-1]}, "10 symbols, the training's table"),
        ({"audio": AudioConfig(n_mel_channels=64)}, "audio.n_mel_channels is 80"),
        ({"audio": AudioConfig(sampling_rate=16000)}, "audio.sampling_rate is 22050"),
        ({"cleaners": "english_cleaners_v2"}, "text.cleaners is 'basic_cleaners'"),
    ],
)
def test_a_fastpitch_file_that_does_not_fit_is_refused_naming_the_key(corpus, made_with, named):
    path = corpus / "voice.pt"
    fastpitch_file(path, **made_with)
    with pytest.raises(UserError) as refused:
        fp.run_stage([*fp.stage_argv(corpus, fp.section(max_steps=1)), "--warm-start", str(path)])
    message = str(refused.value)
    assert message.startswith("fastpitch.init_from") and str(path) in message and named in message
    assert not (corpus / "fastpitch" / "model.pt").exists()


def test_the_tracking_run_has_init_from_as_a_param_and_the_file_hash_as_a_tag(corpus, monkeypatch):
    path = corpus / "voice.pt"
    fastpitch_file(path)
    seen: list[tuple[dict, dict]] = []
    real = training_stage.tracked

    def spy(stage, payload, **kwargs):
        seen.append((payload, kwargs["tags"]))
        return real(stage, payload, **kwargs)

    monkeypatch.setattr(training_stage, "tracked", spy)
    fp.run_stage(fp.stage_argv(corpus, fp.section(max_steps=1, init_from=str(path))))
    payload, tags = seen[0]
    assert flatten_params(payload)["fastpitch.init_from"] == str(path)
    assert tags["init_from_sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()


# --------------------------------------------------------------------------------------------------
# HiFi-GAN
# --------------------------------------------------------------------------------------------------


def generator_file(path: Path, *, seed: int = 3, audio: AudioConfig = hg.AUDIO, **sizes: Any) -> Generator:
    """A generator of the stage tests' sizes saved as a model file, as if trained on another corpus."""
    torch.manual_seed(seed)
    generator = Generator(HiFiGANConfig(**{**hg.TINY, **sizes}), audio.n_mel_channels)
    save_generator(path, generator, audio, step=500, epoch=9, learning_rate=2e-4, fine_tuned_from=None)
    return generator


@pytest.fixture
def recordings(tmp_path) -> Path:
    hg.make_corpus(tmp_path)
    return tmp_path


def test_a_warm_started_hifigan_starts_from_the_generator_then_fine_tunes_on_fastpitch_mels(recordings, monkeypatch):
    root, path = recordings, recordings / "g.pt"
    init = generator_file(path)
    starts = first_step_spy(monkeypatch, hifigan_loop, lambda state: state.generator.state_dict())
    state_file = root / "hifigan" / "training_state.pt"
    payload = hg.section(max_steps=2, learning_rate=1e-3, init_from=str(path))
    metrics = hg.run_stage(hg.stage_argv(root, payload, "hifigan", "--state", str(state_file)))

    first = starts[0]
    assert first["step"] == 0 and not first["optimiser_state"] and first["lr"] == pytest.approx(1e-3)
    for name, tensor in init.state_dict().items():
        assert torch.equal(first["weights"][name], tensor), name
    assert metrics["warm_started_from"] == str(path) and metrics["fine_tuned_from"] is None
    assert metrics["step"] == 2 and metrics["resumed_from_step"] == 0
    generator, info = load_generator(root / "hifigan" / "model.pt")
    assert info.fine_tuned_from is None and info.step == 2
    assert load_model_file(root / "hifigan" / "model.pt").extra["warm_started_from"] == str(path)
    assert not torch.equal(generator.state_dict()["conv_post.bias"], init.state_dict()["conv_post.bias"])

    # fine-tuning on FastPitch mels starts from the warm-started run's final state, as from any base run
    extra = ("--init-from", str(state_file), "--mels-dir", str(root / "mels"))
    tuned = hg.run_stage(hg.stage_argv(root, hg.section(max_steps=1, init_from=str(path)), "tuned", *extra))
    assert tuned["fine_tuned_from"] == str(state_file) and tuned["warm_started_from"] is None and tuned["step"] == 1
    with pytest.raises(UserError, match="--warm-start starts base training"):
        hg.run_stage(hg.stage_argv(root, hg.section(max_steps=1), "tuned2", *extra, "--warm-start", str(path)))


def test_a_warm_started_hifigan_resumes_and_another_file_restarts_it(recordings):
    root, path = recordings, recordings / "g.pt"
    generator_file(path)
    assert hg.run_stage(hg.stage_argv(root, hg.section(max_steps=1), "hifigan", "--warm-start", str(path)))["step"] == 1
    resumed = hg.run_stage(hg.stage_argv(root, hg.section(max_steps=2), "hifigan", "--warm-start", str(path)))
    assert resumed["resumed_from_step"] == 1 and resumed["warm_started_from"] == str(path)
    generator_file(path, seed=4)
    restarted = hg.run_stage(hg.stage_argv(root, hg.section(max_steps=1), "hifigan", "--warm-start", str(path)))
    assert restarted["resumed_from_step"] == 0


@pytest.mark.parametrize(
    ("made_with", "named"),
    [
        ({"upsample_initial_channel": 32}, "upsample_initial_channel 32 (hifigan.upsample_initial_channel is 16)"),
        ({"audio": AudioConfig(sampling_rate=16000)}, "audio.sampling_rate is 22050"),
        ({"audio": AudioConfig(mel_fmax=7600.0)}, "audio.mel_fmax is 8000.0"),
    ],
)
def test_a_generator_that_does_not_fit_is_refused_naming_the_key(recordings, made_with, named):
    path = recordings / "g.pt"
    generator_file(path, **made_with)
    with pytest.raises(UserError) as refused:
        hg.run_stage(hg.stage_argv(recordings, hg.section(max_steps=1), "hifigan", "--warm-start", str(path)))
    message = str(refused.value)
    assert message.startswith("hifigan.init_from") and str(path) in message and named in message
