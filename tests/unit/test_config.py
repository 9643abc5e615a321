"""The typed config: defaults, strictness, and errors that name the key."""

from __future__ import annotations

import copy

import pytest
import yaml

from tts_pipeline.commands.schema import render, with_stage_list
from tts_pipeline.config import ConfigError, config_hash, load_config, parse_config

from ..conftest import REPO


@pytest.fixture
def demo() -> dict:
    return yaml.safe_load((REPO / "config/demo.yaml").read_text())


@pytest.mark.parametrize("name", ["config.yaml", "demo.yaml"])
def test_shipped_configs_are_valid(name):
    config = load_config(REPO / "config" / name)
    assert config.audio.hop_length == 256
    assert config.audio.n_mel_channels == 80


def test_recipe_config_has_nvidia_values():
    config = load_config(REPO / "config/config.yaml")
    assert config.corpus.source == "ljspeech"
    assert config.corpus.ljspeech.size_bytes == 2_748_572_632
    assert config.data.split.scheme == "ljspeech"
    assert (config.audio.sampling_rate, config.audio.filter_length, config.audio.win_length) == (22050, 1024, 1024)
    assert (config.audio.mel_fmin, config.audio.mel_fmax, config.audio.mel_fmax_loss) == (0.0, 8000.0, None)


def _error(raw: dict) -> str:
    with pytest.raises(ConfigError) as info:
        parse_config(raw, source="test.yaml")
    return str(info.value)


def test_unknown_key_names_its_full_path(demo):
    demo["data"]["split"]["val_sise"] = 3
    message = _error(demo)
    assert "data.split.val_sise" in message and "unknown key" in message
    assert "test.yaml" in message


def test_wrong_type_names_key_and_value(demo):
    demo["corpus"]["demo"]["n_utterances"] = "many"
    message = _error(demo)
    assert "corpus.demo.n_utterances" in message and "'many'" in message


def test_bad_choice_lists_allowed_values(demo):
    demo["data"]["on_invalid"] = "ignore"
    message = _error(demo)
    assert "data.on_invalid" in message and "'error'" in message and "'skip'" in message


def test_cross_field_rules(demo):
    bad = copy.deepcopy(demo)
    bad["corpus"]["source"] = "local"
    assert "corpus: path: required when source is 'local'" in _error(bad).replace("\n", " ").replace("  - ", "")
    bad = copy.deepcopy(demo)
    bad["audio"]["mel_fmax"] = 12000.0
    assert "audio: mel_fmax" in _error(bad)
    bad = copy.deepcopy(demo)
    bad["corpus"]["demo"]["pitch"] = [70, 30]
    assert "corpus.demo" in _error(bad) and "low <= high" in _error(bad)
    bad = copy.deepcopy(demo)
    bad["data"]["min_duration_s"] = 30
    assert "max_duration_s" in _error(bad)


def test_every_error_is_reported_at_once(demo):
    demo["experiment"] = "has space"
    demo["data"]["max_duration_s"] = -1
    demo["bogus"] = 1
    message = _error(demo)
    assert "experiment" in message and "data.max_duration_s" in message and "bogus" in message


@pytest.mark.parametrize("name", [".", "..", "..."])
def test_folder_names_that_leave_the_results_folder_are_refused(demo, name):
    bad = copy.deepcopy(demo)
    bad["experiment"] = name
    assert "experiment" in _error(bad)
    bad = copy.deepcopy(demo)
    bad["corpus"]["name"] = name
    assert "corpus.name" in _error(bad)
    demo["experiment"], demo["corpus"]["name"] = "run.2", ".hidden-ok"
    parse_config(demo)  # dots inside a name are fine


def test_missing_experiment_is_an_error():
    assert "experiment: Field required" in _error({})


def test_load_config_reports_missing_file_and_bad_yaml(tmp_path):
    with pytest.raises(ConfigError, match="not found"):
        load_config(tmp_path / "nope.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("experiment: [unclosed\n")
    with pytest.raises(ConfigError, match="not valid YAML"):
        load_config(bad)


def test_config_hash_ignores_key_order_and_whitespace():
    assert config_hash('{"a": 1, "b": 2}') == config_hash({"b": 2, "a": 1})
    assert config_hash({"a": 1}) != config_hash({"a": 2})


def test_committed_schema_is_generated_from_the_model():
    committed = (REPO / "workflow/schemas/config.schema.json").read_text()
    assert committed == render(), "schema is stale: run 'tts-pipeline schema'"


def test_committed_stage_list_is_generated_from_the_stage_table():
    readme = (REPO / "config/README.md").read_text()
    assert readme == with_stage_list(readme, REPO / "config/README.md"), "stale: run 'tts-pipeline schema'"
    assert "`tts-pipeline train-hifigan`" in readme


def test_schema_rejects_what_the_model_rejects(demo):
    import jsonschema

    schema = yaml.safe_load(render())
    jsonschema.validate(demo, schema)
    demo["data"]["surprise"] = True
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(demo, schema)


@pytest.mark.parametrize(
    ("section", "key", "value"),
    [
        ("hifigan", "epochs", True),
        ("hifigan", "epochs", "10"),
        ("hifigan", "epochs", 1.5),
        ("inference", "normalize_peak", "yes"),
        ("inference", "pace", "1.0"),
    ],
)
def test_model_and_schema_refuse_the_same_loose_values(demo, section, key, value):
    import jsonschema

    schema = yaml.safe_load(render())
    demo[section][key] = value
    assert f"{section}.{key}" in _error(demo)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(demo, schema)


@pytest.mark.parametrize("name", ["config.yaml", "demo.yaml"])
def test_shipped_configs_pass_model_and_schema(name):
    import jsonschema

    raw = yaml.safe_load((REPO / "config" / name).read_text())
    parse_config(raw)
    jsonschema.validate(raw, yaml.safe_load(render()))


def test_what_yaml_writes_for_floats_and_pairs_is_kept(demo):
    demo["hifigan"]["learning_rate"] = 1
    demo["hifigan"]["adam_betas"] = [0.8, 0.99]
    demo["corpus"]["demo"]["rate_wpm"] = [150, 185]
    config = parse_config(demo)
    assert config.hifigan.learning_rate == 1.0
    assert config.hifigan.adam_betas == (0.8, 0.99)
    assert config.corpus.demo.rate_wpm == (150, 185)


# The loop settings every model section inherits (config.loop_settings), with each model's defaults.
LOOP_DEFAULTS = {
    # section: (epochs, batch_size, gpus, num_workers, keep_checkpoints, global_batch_size, checkpoint_every_n_epochs)
    "aligner": (100, 16, 0, 0, 3, None, None),
    "hifigan": (6500, 16, 8, 4, 2, 128, 10),
    "fastpitch": (1000, 32, 8, 4, 2, 256, 20),
    "tacotron2": (1501, 128, 8, 4, 2, 1024, 50),
    "waveglow": (1001, 10, 8, 4, 2, 80, 50),
}


@pytest.mark.parametrize("section", sorted(LOOP_DEFAULTS))
def test_model_sections_inherit_the_loop_settings_with_their_own_defaults(section):
    from tts_pipeline.config import EpochLoopSettings, LoopSettings, PipelineConfig

    cfg = getattr(PipelineConfig(experiment="x"), section)
    assert isinstance(cfg, LoopSettings)
    # the shared keys are the base's, not retyped by the section
    declared_here = type(cfg).__dict__.get("__annotations__", {})
    assert not set(declared_here) & set(LoopSettings.model_fields)
    epochs, batch, gpus, workers, keep, global_batch, every = LOOP_DEFAULTS[section]
    assert (cfg.epochs, cfg.batch_size, cfg.gpus, cfg.num_workers, cfg.keep_checkpoints) == (
        epochs, batch, gpus, workers, keep
    )  # fmt: skip
    assert (cfg.max_steps, cfg.amp, cfg.seed) == (None, "off", 1234)
    if global_batch is None:
        assert not isinstance(cfg, EpochLoopSettings)
    else:
        assert (cfg.global_batch_size, cfg.checkpoint_every_n_epochs) == (global_batch, every)


def test_loop_settings_keep_their_bounds_in_every_section(demo):
    assert "aligner.epochs" in _error({**demo, "aligner": {**demo["aligner"], "epochs": 0}})
    assert "waveglow.global_batch_size" in _error({**demo, "waveglow": {"global_batch_size": 0}})
    message = _error({**demo, "fastpitch": {**demo["fastpitch"], "global_batch_size": 30, "batch_size": 8}})
    assert "global_batch_size: expected a multiple of batch_size (8), got 30" in message


def test_with_defaults_refuses_unknown_fields_and_fields_left_without_a_default():
    from tts_pipeline.config import EpochLoopSettings, LoopSettings

    with pytest.raises(TypeError, match=r"no such fields \['epoch'\]"):
        LoopSettings.with_defaults(epoch=3, batch_size=1)
    with pytest.raises(TypeError, match="global_batch_size needs a default"):
        EpochLoopSettings.with_defaults(epochs=3, batch_size=1, checkpoint_every_n_epochs=1)
    section = LoopSettings.with_defaults(epochs=3, batch_size=1, descriptions={"amp": "Our words."})
    assert section().epochs == 3 and section.model_fields["amp"].description == "Our words."
    assert LoopSettings.model_fields["amp"].description != "Our words."  # the base is left as it was
