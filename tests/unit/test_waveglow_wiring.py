"""WaveGlow's wiring without Snakemake: when it is in the DAG, what synthesis and the benchmark read, which
settings reach train_waveglow, and the config rules between the waveglow and audio sections."""

from __future__ import annotations

import json

import pytest
import yaml

from tts_pipeline.config import ConfigError, parse_config
from tts_pipeline.workflow import Pipeline

from ..conftest import REPO


@pytest.fixture
def demo() -> dict:
    return yaml.safe_load((REPO / "config/demo.yaml").read_text())


def test_waveglow_is_out_of_the_default_dag(demo):
    pipeline = Pipeline(demo)
    assert pipeline.other_vocoders() == {}
    assert pipeline.synthesis_vocoder() == pipeline.paths.hifigan_finetuned_model
    assert pipeline.other_vocoders_option()(None, _Input()) == []
    assert "train_waveglow" not in pipeline.training_metrics()
    assert pipeline.paths.waveglow_metrics not in pipeline.all_targets()


def test_inference_vocoder_waveglow_brings_train_waveglow_to_synthesis_and_benchmark(demo):
    demo["inference"]["vocoder"] = "waveglow"
    pipeline = Pipeline(demo)
    model = pipeline.paths.waveglow_model
    assert model.endswith("demo/waveglow/model.pt")
    assert pipeline.synthesis_vocoder() == model and pipeline.other_vocoders() == {"waveglow": model}
    assert pipeline.training_metrics()["train_waveglow"] == pipeline.paths.waveglow_metrics
    option = pipeline.other_vocoders_option()
    assert option(None, _Input(waveglow=model)) == ["--vocoders", f"waveglow={model}"]


def test_a_pretrained_waveglow_replaces_its_training(demo):
    demo["waveglow"]["checkpoint"] = "pretrained/nvidia_waveglow256pyt_fp16.pt"
    pipeline = Pipeline(demo)
    assert pipeline.other_vocoders() == {"waveglow": demo["waveglow"]["checkpoint"]}
    assert pipeline.synthesis_vocoder() == pipeline.paths.hifigan_finetuned_model
    assert "train_waveglow" not in pipeline.training_metrics()


def test_train_waveglow_reads_its_section_and_audio_only(demo):
    before = json.loads(Pipeline(demo).params("train_waveglow"))
    assert set(before) == {"waveglow", "audio"} and "checkpoint" not in before["waveglow"]
    demo["waveglow"]["checkpoint"] = "x.pt"
    demo["inference"]["waveglow_sigma"] = 0.6
    demo["hifigan"]["epochs"] = 3
    assert json.loads(Pipeline(demo).params("train_waveglow")) == before
    assert Pipeline(demo).gpus("train_waveglow") == demo["waveglow"]["gpus"] == 0


def test_a_waveglow_in_use_must_fit_the_audio_section(demo):
    demo["audio"].update(hop_length=200, win_length=800, filter_length=800)
    demo["hifigan"]["upsample_rates"] = [5, 5, 4, 2]
    demo["hifigan"]["upsample_kernel_sizes"] = [10, 10, 8, 4]
    demo["hifigan"]["upsampling"] = ["interpolate", "transposed", "transposed", "transposed"]
    demo["hifigan"]["segment_size"] = 4000
    parse_config(demo)  # not in the DAG: no rule applies
    demo["inference"]["vocoder"] = "waveglow"
    with pytest.raises(ConfigError, match="waveglow: its upsampler has a hop of 256"):
        parse_config(demo)
    demo["waveglow"]["n_group"] = 7
    with pytest.raises(ConfigError, match="waveglow: n_group, n_early_size: expected even numbers"):
        parse_config(demo)


class _Input(dict):
    """What Snakemake hands a params function as ``input``: named files, with ``keys()``."""
