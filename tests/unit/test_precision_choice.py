"""``inference.amp: auto`` on a CPU: the choice from a timing table (never slower than plain float32,
never below the quality floor), the cache of choices (miss, hit, unwritable, unreadable, a disturbed
measurement), the CPU flags deciding only which paths are candidates, and the synthesizer running what
was chosen. Every table here is made up: no test times anything."""

from __future__ import annotations

import dataclasses
import json
import logging
import math
import random
from collections.abc import Callable, Mapping
from pathlib import Path

import pytest
import torch

from tts_pipeline.inference import (
    SynthesisOptions,
    Synthesizer,
    TextEncoder,
    auto_precision,
    fastpitch_acoustic,
    hifigan_vocoder,
    precision_cache,
)
from tts_pipeline.inference.precision_choice import (
    FASTER_BY,
    MIN_SNR_DB,
    STEADY_SPREAD,
    PathChoice,
    PathFigures,
    choose_path,
)
from tts_pipeline.inference.seams import PLAIN_FP32
from tts_pipeline.interleaved import SideBySide
from tts_pipeline.models.hifigan.cpu_inference import (
    FusedCpuGenerator,
    fused_cpu_kernels_available,
    onednn_bf16_available,
)
from tts_pipeline.snr import snr_db

from ..inference_models import AUDIO, text_settings, tiny_fastpitch, tiny_generator

needs_onednn = pytest.mark.skipif(not fused_cpu_kernels_available(), reason="torch built without oneDNN")
CPU = torch.device("cpu")


def row(name: str, ms: float, snr: float = 60.0) -> PathFigures:
    return PathFigures(name, ms / 1000, 200.0 if name == PLAIN_FP32 else snr)


# --------------------------------------------------------------------------------------------------
# the rule


def test_the_fastest_path_whose_output_holds_is_chosen() -> None:
    table = [row(PLAIN_FP32, 100), row("fp32 fused", 60, 130), row("bf16 fused", 40, 52)]
    assert choose_path(table) == "bf16 fused"


def test_a_bf16_path_slower_than_plain_fp32_is_never_chosen() -> None:
    # The Intel Xeon: bf16 advertised, fused bf16 slower than plain fp32, fused fp32 fastest.
    table = [row(PLAIN_FP32, 1351), row("fp32 fused", 909, 130), row("bf16 fused", 1542, 52)]
    assert choose_path(table) == "fp32 fused"
    assert choose_path([row(PLAIN_FP32, 100), row("bf16 held", 120, 50)]) == PLAIN_FP32


def test_a_path_no_faster_than_the_margin_keeps_plain_fp32() -> None:
    barely = 100 * FASTER_BY + 0.5  # faster, but within the noise a short probe has
    assert choose_path([row(PLAIN_FP32, 100), row("bf16 held", barely, 50)]) == PLAIN_FP32
    assert choose_path([row(PLAIN_FP32, 100), row("bf16 held", 100 * FASTER_BY, 50)]) == "bf16 held"


@pytest.mark.parametrize("snr", [MIN_SNR_DB - 0.1, -math.inf, math.nan])
def test_a_fast_path_below_the_quality_floor_is_not_chosen(snr: float) -> None:
    table = [row(PLAIN_FP32, 100), row("fp32 fused", 80, 130), row("bf16 fused", 40, snr)]
    assert choose_path(table) == "fp32 fused"
    assert choose_path([row(PLAIN_FP32, 100), row("bf16 held", 10, snr)]) == PLAIN_FP32


def test_no_table_ever_yields_a_path_slower_than_plain_fp32() -> None:
    rng = random.Random(0)
    names = ["fp32 fused", "bf16 fused", "bf16 held"]
    for _ in range(500):
        table = [row(PLAIN_FP32, rng.uniform(1, 100))]
        table += [row(name, rng.uniform(1, 200), rng.uniform(20, 140)) for name in names]
        chosen = next(r for r in table if r.name == choose_path(table))
        assert chosen.seconds <= table[0].seconds and chosen.snr_db >= MIN_SNR_DB


def test_a_table_without_plain_fp32_is_refused() -> None:
    with pytest.raises(ValueError, match="no 'fp32' figures"):
        choose_path([row("bf16 fused", 10)])


def test_the_choice_reads_as_one_line_and_survives_json() -> None:
    figures = (row(PLAIN_FP32, 21.0), row("fp32 fused", 14.2, 131.0), row("bf16 held", 9.8, -math.inf))
    choice = PathChoice("HiFi-GAN", "fp32 fused", figures, cached=False)
    assert choice.describe() == (
        "HiFi-GAN: fp32 21.0 ms; fp32 fused 14.2 ms (131.0 dB); bf16 held 9.8 ms (-inf dB) -> fp32 fused (measured)"
    )
    record = json.loads(json.dumps(choice.as_dict()))
    assert record["paths"][2]["snr_db"] is None  # JSON has no infinities
    assert [PathFigures.from_dict(r) for r in record["paths"]] == list(figures)


# --------------------------------------------------------------------------------------------------
# the flags decide the candidates


@pytest.fixture
def cpu_flags(monkeypatch) -> Callable[..., None]:
    def pretend(*flags: str) -> None:
        monkeypatch.setattr(auto_precision, "cpu_bf16_instructions", lambda: flags)

    return pretend


@needs_onednn
def test_bf16_paths_are_candidates_only_where_the_cpu_advertises_bf16(cpu_flags) -> None:
    cpu_flags()
    assert [p.name for p in auto_precision.candidate_paths(hifigan_vocoder)] == [PLAIN_FP32, "fp32 fused"]
    assert [p.name for p in auto_precision.candidate_paths(fastpitch_acoustic)] == [PLAIN_FP32]
    cpu_flags("avx512_bf16")
    hifigan = auto_precision.candidate_paths(hifigan_vocoder)
    # fused in bf16 where oneDNN runs bf16 on this CPU (not on an AVX2-only one), else under autocast
    bf16 = "bf16 fused" if onednn_bf16_available() else "bf16"
    assert [(p.name, p.amp) for p in hifigan] == [(PLAIN_FP32, "off"), ("fp32 fused", "off"), (bf16, "bf16")]
    assert [p.name for p in auto_precision.candidate_paths(fastpitch_acoustic)] == [PLAIN_FP32, "bf16 held"]


# --------------------------------------------------------------------------------------------------
# the cache


class FakeMeasure:
    """Stands in for measure_paths: a scripted table per call (its rounds ``spread`` apart), the calls counted."""

    def __init__(self, milliseconds: Mapping[str, float], spread: float = 1.1) -> None:
        self.milliseconds = milliseconds
        self.spread = spread
        self.calls = 0

    def __call__(self, label, paths, model, device, probe, call):
        self.calls += 1
        figures = tuple(
            dataclasses.replace(row(path.name, self.milliseconds[path.name]), spread=self.spread) for path in paths
        )
        return PathChoice(label, choose_path(figures), figures, cached=False), {}


@pytest.fixture
def fresh_cache(monkeypatch, tmp_path) -> Path:
    """An empty cache folder of this test's own, and no choice remembered from an earlier test."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setattr(precision_cache, "_remembered", {})
    return tmp_path / "cache"


def measured(model: torch.nn.Module):
    return auto_precision.measured_path("FastPitch", "fastpitch", fastpitch_acoustic, model, CPU, lambda: None, None)


def test_a_miss_measures_and_writes_a_hit_reads_without_measuring(monkeypatch, cpu_flags, fresh_cache) -> None:
    cpu_flags("avx512_bf16")
    fake = FakeMeasure({PLAIN_FP32: 100, "bf16 held": 60})
    monkeypatch.setattr(auto_precision, "measure_paths", fake)
    model = tiny_fastpitch()
    first = measured(model)
    assert fake.calls == 1 and first.choice is not None and not first.choice.cached
    assert first.precision.label == "bf16 held" and first.precision.amp == "bf16"

    stored = json.loads((fresh_cache / "tts-pipeline" / "cpu_paths.json").read_text(encoding="utf-8"))
    (key,) = stored["choices"]
    assert "torch " + torch.__version__ in key and "fastpitch" in key and "fp32, bf16 held" in key
    assert stored["choices"][key]["chosen"] == "bf16 held"

    monkeypatch.setattr(precision_cache, "_remembered", {})  # another process: only the file remains
    again = measured(model)
    assert fake.calls == 1 and again.choice is not None and again.choice.cached
    assert again.precision.label == "bf16 held" and again.choice.figures == first.choice.figures


def test_the_key_changes_with_the_thread_count_and_the_model(monkeypatch, cpu_flags, fresh_cache, one_thread) -> None:
    cpu_flags("avx512_bf16")
    fake = FakeMeasure({PLAIN_FP32: 100, "bf16 held": 60})
    monkeypatch.setattr(auto_precision, "measure_paths", fake)
    measured(tiny_fastpitch())
    measured(tiny_fastpitch(seed=1))  # other weights, same shape: the same choice
    assert fake.calls == 1
    torch.set_num_threads(2)
    measured(tiny_fastpitch())
    assert fake.calls == 2


def test_an_unwritable_cache_warns_and_the_choice_holds_for_the_process(
    monkeypatch, cpu_flags, fresh_cache, tmp_path, caplog
) -> None:
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("a file where the cache folder would be", encoding="utf-8")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocked))
    cpu_flags("avx512_bf16")
    fake = FakeMeasure({PLAIN_FP32: 100, "bf16 held": 60})
    monkeypatch.setattr(auto_precision, "measure_paths", fake)
    with caplog.at_level(logging.WARNING):
        prepared = measured(tiny_fastpitch())
    assert prepared.precision.label == "bf16 held"
    assert "could not write the cache" in caplog.text and "for this process only" in caplog.text
    measured(tiny_fastpitch())
    assert fake.calls == 1


def test_an_unreadable_cache_is_measured_afresh(monkeypatch, cpu_flags, fresh_cache, caplog) -> None:
    path = fresh_cache / "tts-pipeline" / "cpu_paths.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("{not json", encoding="utf-8")
    cpu_flags("avx512_bf16")
    fake = FakeMeasure({PLAIN_FP32: 100, "bf16 held": 120})
    monkeypatch.setattr(auto_precision, "measure_paths", fake)
    with caplog.at_level(logging.WARNING):
        prepared = measured(tiny_fastpitch())
    assert fake.calls == 1 and prepared.precision.label == PLAIN_FP32 and "unreadable cache" in caplog.text
    assert json.loads(path.read_text(encoding="utf-8"))["version"] == precision_cache.VERSION  # rewritten whole


def test_a_disturbed_measurement_decides_for_the_process_and_is_not_cached(
    monkeypatch, cpu_flags, fresh_cache, caplog
) -> None:
    cpu_flags("avx512_bf16")
    fake = FakeMeasure({PLAIN_FP32: 100, "bf16 held": 60}, spread=STEADY_SPREAD + 0.5)
    monkeypatch.setattr(auto_precision, "measure_paths", fake)
    with caplog.at_level(logging.INFO):
        prepared = measured(tiny_fastpitch())
    assert prepared.precision.label == "bf16 held" and "a disturbed measurement: not cached" in caplog.text
    assert not (fresh_cache / "tts-pipeline" / "cpu_paths.json").exists()
    measured(tiny_fastpitch())
    assert fake.calls == 1  # remembered for this process
    monkeypatch.setattr(precision_cache, "_remembered", {})  # the next process measures again
    measured(tiny_fastpitch())
    assert fake.calls == 2


def test_one_candidate_needs_no_measurement(monkeypatch, cpu_flags, fresh_cache) -> None:
    cpu_flags()  # FastPitch has no float32 path but the model itself
    monkeypatch.setattr(auto_precision, "measure_paths", FakeMeasure({}))
    prepared = measured(tiny_fastpitch())
    assert prepared.choice is None and prepared.precision.amp == "off"


# --------------------------------------------------------------------------------------------------
# the synthesizer runs what was chosen


def scripted_timing(milliseconds: Mapping[str, float]):
    """Stands in for the interleaved timing: each call runs once, its seconds come from the table."""

    def interleaved(calls, *, rounds, repeats, warmup, synchronize=None):
        for call in calls.values():
            call()
        return SideBySide({name: [[milliseconds[name] / 1000]] for name in calls})

    return interleaved


def auto_synthesizer() -> Synthesizer:
    generator = tiny_generator()
    generator.remove_weight_norm()
    encoder = TextEncoder.from_settings(text_settings(), "fastpitch.pt")
    options = SynthesisOptions(fade_out_frames=0)
    return Synthesizer(generator, AUDIO, options, acoustic_model=tiny_fastpitch(), text_encoder=encoder, amp="auto")


@needs_onednn
@pytest.mark.parametrize(
    ("milliseconds", "vocoder", "acoustic"),
    [
        # bf16 slow (the Xeon): the fused float32 copy, FastPitch in float32 (an AVX2-only CPU
        # offers bf16 under autocast instead of the fused bf16 copy)
        (
            {PLAIN_FP32: 100, "fp32 fused": 60, "bf16 fused": 120, "bf16": 120, "bf16 held": 130},
            "fp32 fused",
            PLAIN_FP32,
        ),
        # bf16 fast (the README's Zen 5): the fused bf16 copy and FastPitch held in bf16
        pytest.param(
            {PLAIN_FP32: 100, "fp32 fused": 60, "bf16 fused": 30, "bf16 held": 50},
            "bf16 fused",
            "bf16 held",
            marks=pytest.mark.skipif(not onednn_bf16_available(), reason="oneDNN runs no bf16 convolution on this CPU"),
        ),
    ],
)
def test_the_synthesizer_runs_each_model_on_its_chosen_path(
    monkeypatch, cpu_flags, fresh_cache, one_thread, milliseconds, vocoder, acoustic
) -> None:
    cpu_flags("avx512_bf16")
    monkeypatch.setattr(auto_precision, "interleaved", scripted_timing(milliseconds))
    synth = auto_synthesizer()
    assert (synth.vocoder_precision.label, synth.acoustic_precision.label) == (vocoder, acoustic)
    assert isinstance(synth.vocoder_runner, FusedCpuGenerator)
    expected_dtype = torch.bfloat16 if vocoder == "bf16 fused" else torch.float32
    assert synth.vocoder_runner.dtype == expected_dtype
    assert synth.precision.label == f"auto: FastPitch {acoustic}, HiFi-GAN {vocoder}"
    assert [choice.model for choice in synth.auto_choices] == ["FastPitch", "HiFi-GAN"]
    assert all(row.snr_db >= MIN_SNR_DB for choice in synth.auto_choices for row in choice.figures)

    plain = synth.with_options(synth.options, "off")
    mels = [torch.randn(AUDIO.n_mel_channels, 30, generator=torch.Generator().manual_seed(3)).numpy() - 5]
    (exact,), (fast,) = plain.vocode(mels), synth.vocode(mels)
    assert snr_db(exact.audio, fast.audio) >= MIN_SNR_DB


def test_a_configured_precision_is_not_measured(monkeypatch, fresh_cache) -> None:
    monkeypatch.setattr(auto_precision, "measure_paths", FakeMeasure({}))
    generator = tiny_generator()
    generator.remove_weight_norm()
    synth = Synthesizer(generator, AUDIO, SynthesisOptions(), amp="off")
    assert synth.vocoder_runner is generator and synth.auto_choices == []
    assert synth.precision.label == synth.vocoder_precision.label == "fp32"
