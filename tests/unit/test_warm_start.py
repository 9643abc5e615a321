"""Warm starts (``aligner.init_from``, ``fastpitch.init_from``, ``hifigan.init_from``) before any job: a
file trained on other mels, symbols, cleaners or network sizes is refused naming the key, the file and the
setting it disagrees with (the workflow's preflight and ``tts-pipeline check-config``); ``init_from`` with
``checkpoint`` is a config error; the training rules declare the file as an input and pass it to their stage."""

from __future__ import annotations

import dataclasses
import json
import re

import pytest
import torch
import yaml

from tts_pipeline import cli, stage_table
from tts_pipeline.config import ConfigError, parse_config
from tts_pipeline.errors import UserError
from tts_pipeline.models.fastpitch.foreign import text_settings_from_config
from tts_pipeline.models.hifigan import Generator
from tts_pipeline.training.warm_start import frozen_names
from tts_pipeline.workflow import Pipeline

from ..conftest import REPO
from ..foreign_layouts import jik876_generator
from ..warm_start_files import aligner_file, fastpitch_file, generator_file
from .test_wiring import _rule_blocks

# a small FastPitch keeps the files quick to write and read
SMALL_FASTPITCH = {
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
}


@pytest.fixture
def demo(tmp_path, monkeypatch) -> dict:
    """config/demo.yaml with a small FastPitch, in a folder without an earlier run."""
    monkeypatch.chdir(tmp_path)
    raw = yaml.safe_load((REPO / "config/demo.yaml").read_text())
    raw["benchmark"]["phrases"] = str(REPO / raw["benchmark"]["phrases"])
    raw["inference"]["phrases"] = str(REPO / raw["inference"]["phrases"])
    raw["fastpitch"].update(SMALL_FASTPITCH)
    return raw


def refusal(raw: dict) -> str:
    with pytest.raises(ConfigError) as refused:
        Pipeline(raw)
    return str(refused.value)


def test_fitting_files_pass_and_are_inputs_of_their_training_rules(demo, tmp_path):
    config = parse_config(demo)
    before = {rule: stage_table.stage_params(config, rule) for rule in stage_table.BY_RULE}
    fastpitch, hifigan = fastpitch_file(tmp_path / "fp.pt", config), generator_file(tmp_path / "g.pt", config)
    demo["fastpitch"].update(init_from=str(fastpitch), freeze=["encoder.word_emb"])
    demo["hifigan"]["init_from"] = str(hifigan)
    pipeline = Pipeline(demo)
    assert pipeline.check_settings() == []
    assert pipeline.warm_start("fastpitch") == {"init_from": str(fastpitch)}
    assert pipeline.warm_start("hifigan") == {"init_from": str(hifigan)}
    assert Pipeline(yaml.safe_load((REPO / "config/demo.yaml").read_text())).warm_start("fastpitch") == {}
    # the trainings are still in the DAG (unlike with `checkpoint`), and their params name the file
    assert {"train_fastpitch", "train_hifigan"} <= set(pipeline.training_metrics())
    after = {rule: stage_table.stage_params(pipeline.config, rule) for rule in stage_table.BY_RULE}
    changed = {rule for rule in before if before[rule] != after[rule]}
    assert changed == {"train_fastpitch", "train_hifigan", "finetune_hifigan"}

    blocks = _rule_blocks()
    for rule, section in (("train_fastpitch", "fastpitch"), ("train_hifigan", "hifigan")):
        inputs = re.search(r"\n    input:\n(.*?)\n    output:", blocks[rule], re.S).group(1)
        assert f'**pipeline.warm_start("{section}")' in inputs, rule
        assert 'warm_start=pipeline.optional_input_option("--warm-start", "init_from")' in blocks[rule], rule
        assert "{params.warm_start:q}" in blocks[rule].split("\n    shell:\n", 1)[1], rule
    assert "warm_start" not in blocks["finetune_hifigan"], "fine-tuning continues the base run"


@pytest.mark.parametrize(
    ("changes", "named"),
    [
        ({"audio": {"n_mel_channels": 64}}, "n_mel_channels 64, but audio.n_mel_channels is 80"),
        ({"audio": {"sampling_rate": 16000}}, "sampling_rate 16000, but audio.sampling_rate is 22050"),
        ({"audio": {"mel_fmin": 50.0}}, "mel_fmin 50.0, but audio.mel_fmin is 0.0"),
        ({"in_fft_n_layers": 2}, "in_fft_n_layers 2 (fastpitch.in_fft_n_layers is 1)"),
        ({"energy_conditioning": False}, "energy_conditioning False (fastpitch.energy_conditioning is True)"),
        ({"text": "fewer symbols"}, "the training's table (text.symbol_set 'english_basic')"),
        ({"text": "other cleaners"}, "'basic_cleaners', but text.cleaners is 'english_extended_cleaners'"),
    ],
)
def test_a_fastpitch_file_that_does_not_fit_is_refused_before_any_job(demo, tmp_path, changes, named):
    config = parse_config(demo)
    text = text_settings_from_config(config.text)
    if changes.get("text") == "fewer symbols":
        changes = {"text": dataclasses.replace(text, symbols=text.symbols[:-1])}
    elif changes.get("text") == "other cleaners":
        changes = {"text": dataclasses.replace(text, cleaners="basic_cleaners")}
    path = fastpitch_file(tmp_path / "voice.pt", config, **changes)
    demo["fastpitch"]["init_from"] = str(path)
    message = refusal(demo)
    assert f"fastpitch.init_from: {path}" in message and named in message, message


def test_dropout_and_max_duration_may_differ_from_the_file(demo, tmp_path):
    path = fastpitch_file(tmp_path / "voice.pt", parse_config(demo), p_in_fft_dropout=0.3, max_duration=20)
    demo["fastpitch"]["init_from"] = str(path)
    assert Pipeline(demo).check_settings() == []


@pytest.mark.parametrize(
    ("changes", "named"),
    [
        ({"audio": {"sampling_rate": 16000}}, "sampling_rate 16000, but audio.sampling_rate is 22050"),
        ({"audio": {"hop_length": 128, "filter_length": 1024}}, "audio.hop_length is 256"),
        ({"audio": {"mel_fmax": 7600.0}}, "mel_fmax 7600.0, but audio.mel_fmax is 8000.0"),
        ({"upsample_initial_channel": 64}, "upsample_initial_channel 64 (hifigan.upsample_initial_channel is 128)"),
    ],
)
def test_a_generator_that_does_not_fit_is_refused_before_any_job(demo, tmp_path, changes, named):
    config = parse_config(demo)
    if "hop_length" in changes.get("audio", {}):
        changes["upsample_rates"] = [8, 4, 4]  # a generator of that hop
    path = generator_file(tmp_path / "g.pt", config, **changes)
    demo["hifigan"]["init_from"] = str(path)
    message = refusal(demo)
    assert f"hifigan.init_from: {path}" in message and named in message, message


def test_a_published_generator_and_another_resblock_order_are_accepted(demo, tmp_path):
    # jik876's layers: the demo's own vocoder (interpolating, with a harmonic source) has no published twin
    demo["hifigan"].update(upsampling="transposed", source="none", upsample_kernel_sizes=[16, 16, 8])
    config = parse_config(demo)
    torch.manual_seed(0)
    published = tmp_path / "g_02500000"
    generator = Generator(config.hifigan, config.audio.n_mel_channels)
    torch.save(jik876_generator(generator), published)
    demo["hifigan"]["init_from"] = str(published)
    assert Pipeline(demo).check_settings() == []

    reordered = {"resblock_kernel_sizes": [7, 5, 3], "resblock_dilation_sizes": [[3, 12], [2, 6], [1, 2]]}
    demo["hifigan"]["init_from"] = str(generator_file(tmp_path / "g.pt", config, **reordered))
    assert Pipeline(demo).check_settings() == []

    torch.save({"mpd": {}, "msd": {}}, published)  # a discriminator file is no generator
    demo["hifigan"]["init_from"] = str(published)
    assert "not a HiFi-GAN generator checkpoint" in refusal(demo)


def test_a_missing_file_and_a_freeze_prefix_that_names_nothing_are_refused(demo, tmp_path):
    demo["fastpitch"]["init_from"] = str(tmp_path / "absent.pt")
    demo["hifigan"]["init_from"] = str(tmp_path / "absent_g.pt")
    message = refusal(demo)
    assert f"fastpitch.init_from: {tmp_path / 'absent.pt'}: no such file" in message
    assert f"hifigan.init_from: {tmp_path / 'absent_g.pt'}: no such file" in message

    del demo["hifigan"]["init_from"]
    demo["fastpitch"].update(init_from=str(fastpitch_file(tmp_path / "fp.pt", parse_config(demo))), freeze=["emb"])
    message = refusal(demo)
    assert "fastpitch.freeze: ['emb'] match no parameter" in message and "encoder" in message


def test_init_from_with_checkpoint_or_freeze_alone_is_a_config_error(demo):
    for section in ("fastpitch", "hifigan"):
        raw = json.loads(json.dumps(demo))
        raw[section].update(checkpoint="trained.pt", init_from="voice.pt")
        with pytest.raises(ConfigError, match=rf"{section}\.checkpoint and {section}\.init_from exclude each other"):
            parse_config(raw)
    demo["fastpitch"]["freeze"] = ["encoder"]
    with pytest.raises(ConfigError, match=r"freeze: needs fastpitch\.init_from"):
        parse_config(demo)
    demo["fastpitch"].update(init_from="voice.pt", freeze=["encoder layers"])
    with pytest.raises(ConfigError, match=r"fastpitch\.freeze\.0"):
        parse_config(demo)


def test_an_aligner_file_that_fits_is_an_input_of_train_aligner_alone(demo, tmp_path):
    config = parse_config(demo)
    before = {rule: stage_table.stage_params(config, rule) for rule in stage_table.BY_RULE}
    path = aligner_file(tmp_path / "aligner.pt", config, temperature=0.001)
    demo["aligner"].update(init_from=str(path), temperature=0.001)  # temperature may differ from the file's
    pipeline = Pipeline(demo)
    assert pipeline.check_settings() == []
    assert pipeline.warm_start("aligner") == {"init_from": str(path)}
    after = {rule: stage_table.stage_params(pipeline.config, rule) for rule in stage_table.BY_RULE}
    assert {rule for rule in before if before[rule] != after[rule]} == {"train_aligner"}

    block = _rule_blocks()["train_aligner"]
    inputs = re.search(r"\n    input:\n(.*?)\n    output:", block, re.S).group(1)
    assert '**pipeline.warm_start("aligner")' in inputs
    assert 'warm_start=pipeline.optional_input_option("--warm-start", "init_from")' in block
    assert "{params.warm_start:q}" in block.split("\n    shell:\n", 1)[1]


@pytest.mark.parametrize(
    ("changes", "named"),
    [
        ({"embedding_dim": 64}, "embedding_dim 64, but aligner.embedding_dim is 128"),
        ({"attention_dim": 40}, "attention_dim 40, but aligner.attention_dim is 80"),
        ({"n_mels": 64}, "reads 64 mel channels, but audio.n_mel_channels is 80"),
        ({"symbols": "arpabet"}, "encodes text as 'arpabet', but aligner.symbols is 'characters'"),
    ],
)
def test_an_aligner_file_that_does_not_fit_is_refused_before_any_job(demo, tmp_path, changes, named):
    path = aligner_file(tmp_path / "aligner.pt", parse_config(demo), **changes)
    demo["aligner"]["init_from"] = str(path)
    message = refusal(demo)
    assert f"aligner.init_from: {path}" in message and named in message, message


def test_a_missing_aligner_file_or_another_model_file_is_refused(demo, tmp_path):
    demo["aligner"]["init_from"] = str(tmp_path / "absent.pt")
    assert f"aligner.init_from: {tmp_path / 'absent.pt'}: no such file" in refusal(demo)
    generator = generator_file(tmp_path / "g.pt", parse_config(demo))
    demo["aligner"]["init_from"] = str(generator)
    message = refusal(demo)
    assert f"aligner.init_from: {generator}" in message, message


def test_check_config_names_the_mismatch(demo, tmp_path, capsys):
    path = fastpitch_file(tmp_path / "voice.pt", parse_config(demo), audio={"n_mel_channels": 64})
    demo["fastpitch"]["init_from"] = str(path)
    config = tmp_path / "adapt.yaml"
    config.write_text(yaml.safe_dump(demo))
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["check-config", "--quiet", str(config)])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert f"fastpitch.init_from: {path}" in err and "audio.n_mel_channels is 80" in err and "Traceback" not in err


def test_freeze_prefixes_match_whole_name_segments():
    names = ["encoder.word_emb.weight", "encoder.layers.0.w", "encoder_extra.w", "decoder.w"]
    assert frozen_names(names, ["encoder"], "k") == ["encoder.word_emb.weight", "encoder.layers.0.w"]
    assert frozen_names(names, ["encoder.word_emb"], "k") == ["encoder.word_emb.weight"]
    with pytest.raises(UserError, match=r"k: \['enc'\] match no parameter"):
        frozen_names(names, ["enc"], "k")
