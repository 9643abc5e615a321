"""durations.source: tacotron2 in the config and the wiring: train_tacotron2 feeds the durations stage,
a tacotron2.checkpoint replaces it, and its settings reach it and nothing else."""

from __future__ import annotations

import json

import pytest
import yaml

from tts_pipeline import stage_table
from tts_pipeline.config import ConfigError, parse_config
from tts_pipeline.workflow import Pipeline

from ..conftest import REPO


@pytest.fixture
def demo() -> dict:
    return yaml.safe_load((REPO / "config/demo.yaml").read_text())


def test_the_demo_and_recipe_configs_carry_nvidias_schedule():
    recipe = yaml.safe_load((REPO / "config/config.yaml").read_text())
    cfg = parse_config(recipe).tacotron2
    assert (cfg.learning_rate, cfg.weight_decay, cfg.grad_clip, cfg.epochs) == (1e-3, 1e-6, 1.0, 1501)
    assert (cfg.global_batch_size, cfg.batch_size, cfg.gpus) == (1024, 128, 8)
    assert cfg.anneal_epochs == [500, 1000, 1500] and cfg.anneal_factor == 0.3


def test_an_unknown_tacotron2_key_names_its_path(demo):
    demo["tacotron2"]["attention_size"] = 3
    with pytest.raises(ConfigError, match="tacotron2.attention_size: unknown key"):
        parse_config(demo)
    demo["tacotron2"].pop("attention_size")
    demo["durations"]["source"] = "tacotron"
    with pytest.raises(ConfigError, match="durations.source"):
        parse_config(demo)


def test_tacotron2_durations_come_from_the_trained_model_or_the_checkpoint(demo):
    demo["durations"]["source"] = "tacotron2"
    pipeline = Pipeline(demo)
    inputs = pipeline.durations_inputs()
    assert inputs["tacotron2"] == pipeline.paths.tacotron2_model and "aligner" not in inputs
    assert pipeline.paths.tacotron2_model.endswith("results/demo/tacotron2/model.pt")
    assert "train_tacotron2" in pipeline.training_metrics() and "train_aligner" not in pipeline.training_metrics()
    assert pipeline.durations_batch_size() == demo["tacotron2"]["durations_batch_size"]
    assert pipeline.gpus("train_tacotron2") == demo["tacotron2"]["gpus"]

    demo["tacotron2"]["checkpoint"] = "pretrained/nvidia_tacotron2pyt_fp16.pt"
    pipeline = Pipeline(demo)
    assert pipeline.durations_inputs()["tacotron2"] == "pretrained/nvidia_tacotron2pyt_fp16.pt"
    assert "train_tacotron2" not in pipeline.training_metrics()

    demo["durations"]["source"] = "aligner"
    pipeline = Pipeline(demo)
    assert "tacotron2" not in pipeline.durations_inputs() and "train_tacotron2" not in pipeline.training_metrics()


def test_tacotron2_settings_reach_its_training_only(demo):
    before = {row: stage_table.stage_params(parse_config(demo), row) for row in ("train_tacotron2", "durations")}
    payload = json.loads(before["train_tacotron2"])
    assert set(payload) == {"tacotron2", "audio.n_mel_channels", "text.symbol_set"}
    assert "checkpoint" not in payload["tacotron2"] and "durations_batch_size" not in payload["tacotron2"]
    demo["tacotron2"]["learning_rate"] = 0.002
    demo["tacotron2"]["checkpoint"] = "elsewhere.pt"  # the shortcut does not rerun training
    after = {row: stage_table.stage_params(parse_config(demo), row) for row in before}
    assert after["durations"] == before["durations"]
    assert json.loads(after["train_tacotron2"])["tacotron2"]["learning_rate"] == 0.002


def test_the_fastpitch_1_0_demo_overlay_layers_over_the_demo_config(demo):
    """config/demo-tacotron2.yaml, merged over demo.yaml as Snakemake merges --configfile files."""
    from snakemake.utils import update_config

    update_config(demo, yaml.safe_load((REPO / "config/demo-tacotron2.yaml").read_text()))
    cfg = parse_config(demo)
    assert cfg.durations.source == "tacotron2" and cfg.inference.vocoder == "waveglow"
    assert cfg.tacotron2.guided_attention_weight > 0 and cfg.tacotron2.guided_attention_constant_epochs is None
    # the prior keeps the attention from working free-running on this budget: off
    assert cfg.tacotron2.attention_prior_scaling == 0
    # the demo's small Tacotron 2 is kept: the overlay changes its schedule, not its size
    assert (
        cfg.tacotron2.decoder_rnn_dim
        == yaml.safe_load((REPO / "config/demo.yaml").read_text())["tacotron2"]["decoder_rnn_dim"]
    )
    pipeline = Pipeline(demo)
    assert pipeline.paths.tacotron2_model.endswith("results/demo-tacotron2/tacotron2/model.pt")
    assert pipeline.paths.corpus_record == "resources/demo/corpus.json"  # the demo's corpus, not a second copy
    assert "train_tacotron2" in pipeline.training_metrics() and "train_waveglow" in pipeline.training_metrics()


def test_the_recipe_keeps_nvidias_attention_and_objective():
    cfg = parse_config(yaml.safe_load((REPO / "config/config.yaml").read_text())).tacotron2
    assert cfg.guided_attention_weight == 0.0 and cfg.guided_attention_constant_epochs is None
    assert cfg.attention_prior_scaling == 0.0 and not cfg.attention_prior_at_inference


def test_the_guided_attention_weight_is_constant_then_decays(demo):
    from tts_pipeline.training.tacotron2 import guided_attention_weight

    demo["tacotron2"].update(guided_attention_weight=4.0)
    cfg = parse_config(demo).tacotron2
    assert [guided_attention_weight(cfg, epoch) for epoch in (1, 10, 500)] == [4.0, 4.0, 4.0]
    demo["tacotron2"].update(guided_attention_constant_epochs=10, guided_attention_decay=0.5)
    cfg = parse_config(demo).tacotron2
    assert [guided_attention_weight(cfg, epoch) for epoch in (1, 10, 11, 12, 14)] == [4.0, 4.0, 2.0, 1.0, 0.25]
    demo["tacotron2"]["guided_attention_decay"] = 1.5
    with pytest.raises(ConfigError, match="guided_attention_decay"):
        parse_config(demo)


def test_the_prior_settings_reach_the_model(demo):
    from tts_pipeline.training.tacotron2 import mean_frames_per_symbol, model_config

    assert mean_frames_per_symbol([[1, 2], [3, 4, 5, 6]], [10, 20]) == 5.0
    cfg = parse_config(demo).tacotron2
    built = model_config(cfg, n_symbols=148, n_mels=80, frames_per_symbol=5.0)
    assert (built.attention_prior_scaling, built.attention_prior_frames_per_symbol) == (0.0, 0.0)
    demo["tacotron2"]["attention_prior_scaling"] = 1.0
    built = model_config(parse_config(demo).tacotron2, n_symbols=148, n_mels=80, frames_per_symbol=5.0)
    # Without attention_prior_at_inference the pace is not recorded: free-running decodes without the prior.
    assert (built.attention_prior_scaling, built.attention_prior_frames_per_symbol) == (1.0, 0.0)
    demo["tacotron2"]["attention_prior_at_inference"] = True
    cfg = parse_config(demo).tacotron2
    built = model_config(cfg, n_symbols=148, n_mels=80, frames_per_symbol=5.0)
    assert built.attention_prior_frames_per_symbol == 5.0
    with pytest.raises(ValueError, match="frames per symbol"):
        model_config(cfg, n_symbols=148, n_mels=80)


def test_the_prior_weight_is_full_then_fades_to_zero(demo):
    from tts_pipeline.training.tacotron2 import attention_prior_weight

    demo["tacotron2"]["attention_prior_scaling"] = 1.0
    cfg = parse_config(demo).tacotron2
    assert [attention_prior_weight(cfg, epoch) for epoch in (1, 30, 1000)] == [1.0, 1.0, 1.0]
    demo["tacotron2"].update(attention_prior_epochs=5, attention_prior_fade_epochs=3)
    cfg = parse_config(demo).tacotron2
    assert [attention_prior_weight(cfg, epoch) for epoch in range(4, 11)] == [1.0, 1.0, 0.75, 0.5, 0.25, 0.0, 0.0]
    demo["tacotron2"]["attention_prior_fade_epochs"] = 0
    assert [attention_prior_weight(parse_config(demo).tacotron2, epoch) for epoch in (5, 6)] == [1.0, 0.0]
