"""The pieces of the benchmark stage and of bench-inference: precision plan, timing a synthesizer through
the runner, fixed durations of the random models, references, training throughput files."""

from __future__ import annotations

import json

import pytest
import torch

from tts_pipeline.benchmark.inference import PrecisionChoice, PrecisionPlan, plan_precisions, speed_rows, time_synthesis
from tts_pipeline.benchmark.random_models import FixedDurations, random_hifigan, spread_frames
from tts_pipeline.benchmark.reference import demo_base_voice, read_inference_manifest
from tts_pipeline.benchmark.training import parse_metrics_argument, training_throughput
from tts_pipeline.config import DemoCorpusConfig, HiFiGANConfig
from tts_pipeline.errors import UserError
from tts_pipeline.files import write_jsonl
from tts_pipeline.inference import SynthesisOptions, Synthesizer, TextEncoder

from ..inference_models import AUDIO, tiny_fastpitch, tiny_generator


@pytest.fixture(autouse=True)
def one_thread():
    torch.set_num_threads(1)


def tiny_synthesizer() -> Synthesizer:
    encoder = TextEncoder(cleaners="english_cleaners_v2", symbols="characters", symbol_set="english_basic")
    options = SynthesisOptions(vocoder_batching="padded")
    return Synthesizer(tiny_generator(), AUDIO, options, acoustic_model=tiny_fastpitch(), text_encoder=encoder)


def test_the_cpu_runs_fp32_and_bf16_and_says_why_fp16_is_skipped(monkeypatch):
    from tts_pipeline.benchmark import inference

    monkeypatch.setattr(inference, "cpu_bf16_instructions", lambda: ("amx_bf16", "avx512_bf16"))
    plan = plan_precisions(["fp16", "fp32", "bf16", "fp32"], torch.device("cpu"))
    assert [(c.name, c.amp) for c in plan.runnable] == [("fp32", "off"), ("bf16", "bf16")]
    assert [s.precision for s in plan.skipped] == ["fp16"] and "CUDA-only" in plan.skipped[0].reason
    assert plan_precisions(["bf16"], torch.device("cpu")).runnable[0].label == "bf16 (native: amx_bf16, avx512_bf16)"
    native = plan_precisions(["bf16"], torch.device("cpu"))
    assert not native.runnable[0].emulated and native.skipped == []
    monkeypatch.setattr(inference, "cpu_bf16_instructions", lambda: ())
    emulated = plan_precisions(["bf16"], torch.device("cpu"))
    assert "emulated" in emulated.runnable[0].label and emulated.runnable[0].emulated
    # the report says why its larger batches are missing
    assert [s.precision for s in emulated.skipped] == ["bf16 beyond the smallest batch"]
    assert "smallest batch size only" in emulated.skipped[0].reason
    # and why its quality against fp32 is missing
    assert "quality against fp32 is not measured" in emulated.skipped[0].reason


def test_quality_is_judged_against_fp32_for_native_precisions_only():
    fp32 = PrecisionChoice("fp32", "off", "fp32")
    native = PrecisionChoice("bf16", "bf16", "bf16 (native: avx512_bf16)")
    emulated = PrecisionChoice("bf16", "bf16", "bf16 (emulated)", emulated=True)
    assert PrecisionPlan([fp32, native], []).judged_against_fp32() == [native]
    assert PrecisionPlan([fp32, emulated], []).judged_against_fp32() == []
    assert PrecisionPlan([fp32], []).judged_against_fp32() == []


def test_an_emulated_precision_is_timed_at_the_smallest_batch_only():
    synth = tiny_synthesizer()
    tokens = synth.encode("Hello there.")
    plan = PrecisionPlan(
        [PrecisionChoice("fp32", "off", "fp32"), PrecisionChoice("bf16", "bf16", "bf16 (emulated)", emulated=True)], []
    )
    rows = speed_rows(lambda choice: synth.with_options(synth.options, choice.amp), plan, tokens, [2, 1],
                      warmup=0, repeats=1)  # fmt: skip
    assert [(row["precision"], row["batch_size"]) for row in rows] == [("fp32", 2), ("fp32", 1), ("bf16", 1)]
    assert rows[2]["speed_up"] > 0  # against fp32 at batch 1


def test_time_synthesis_records_both_models_and_counts_the_batchs_audio():
    synth = tiny_synthesizer()
    own_timer = synth.timer
    tokens = synth.encode("Hello there, how are you?")
    run = time_synthesis(synth, tokens, 3, warmup=1, repeats=2)
    assert len(run.latencies) == 2 and run.latencies.components == ("fastpitch", "vocoder")
    with torch.inference_mode():
        alone = synth.acoustic_model.infer(torch.tensor([tokens]), torch.tensor([len(tokens)]))
    assert {call.audio_samples for call in run.calls} == {3 * int(alone.mel_lengths[0]) * AUDIO.hop_length}
    assert run.batch_size == 3 and synth.timer is own_timer


def test_fixed_durations_spread_the_frames_and_still_run_the_predictor():
    frames = spread_frames(693, 128)
    assert sum(frames) == 693 and set(frames) == {5, 6}
    model = tiny_fastpitch()
    calls = []
    model.duration_predictor.register_forward_hook(lambda *_: calls.append(1))
    model.duration_predictor = FixedDurations(model.duration_predictor, torch.tensor(spread_frames(50, 7)))
    tokens = torch.tensor([[5, 6, 7, 8, 9, 10, 11], [5, 6, 7, 0, 0, 0, 0]])
    with torch.inference_mode():
        out = model.infer(tokens, torch.tensor([7, 3]))
    assert out.mel_lengths.tolist() == [50, sum(spread_frames(50, 7)[:3])] and calls == [1]


def test_fixed_durations_start_over_past_their_positions():
    # auto's probe sentence may be longer than the phrase the durations were spread over
    model = tiny_fastpitch()
    fixed = spread_frames(50, 7)
    model.duration_predictor = FixedDurations(model.duration_predictor, torch.tensor(fixed))
    with torch.inference_mode():
        out = model.infer(torch.arange(5, 14)[None], torch.tensor([9]))
    assert out.mel_lengths.tolist() == [50 + fixed[0] + fixed[1]]


def test_random_hifigan_is_v1_without_weight_norm():
    generator = random_hifigan(AUDIO)
    assert generator.model_config()["upsample_initial_channel"] == HiFiGANConfig().upsample_initial_channel == 512
    assert not any("parametrizations" in name for name, _ in generator.named_parameters())


def test_base_voice_is_the_centre_of_the_demo_ranges():
    voice = demo_base_voice(DemoCorpusConfig(rate_wpm=(150, 185), pitch=(35, 65), pitch_range=(40, 90)))
    assert (voice.rate_wpm, voice.pitch, voice.pitch_range) == (168, 50, 65)


def test_inference_manifest_wavs_are_relative_to_its_folder(tmp_path):
    write_jsonl(tmp_path / "inference" / "manifest.jsonl", [
        {"name": "a", "wav": "a.wav", "text": "Hi."},
        {"name": "b", "wav": str(tmp_path / "elsewhere" / "b.wav"), "mel": "b.npy"},
    ])  # fmt: skip
    first, second = read_inference_manifest(tmp_path / "inference" / "manifest.jsonl")
    assert first.wav == tmp_path / "inference" / "a.wav" and first.text == "Hi."
    assert second.wav == tmp_path / "elsewhere" / "b.wav" and second.text is None
    write_jsonl(tmp_path / "bad.jsonl", [{"wav": "x.wav"}])
    with pytest.raises(UserError, match=r"bad\.jsonl: record 1: expected an object with 'name' and 'wav'"):
        read_inference_manifest(tmp_path / "bad.jsonl")


def test_training_throughput_rows_and_errors(tmp_path):
    path = tmp_path / "metrics.json"
    path.write_text(json.dumps({"frames_per_s": 10.0, "steps_per_s": None, "world_size": 2, "loss": 1.0}))
    rows = training_throughput([parse_metrics_argument(f"train_fastpitch={path}")])
    assert rows == [{
        "stage": "train_fastpitch", "metrics": str(path), "frames_per_s": 10.0,
        "frames_per_s_nvidia_units": None, "steps_per_s": None, "world_size": 2,
    }]  # fmt: skip
    with pytest.raises(UserError, match="expected name=path"):
        parse_metrics_argument("=x.json")
    with pytest.raises(UserError, match="given twice"):
        training_throughput([parse_metrics_argument(f"a={path}")] * 2)
    with pytest.raises(UserError, match=r"--metrics a: file not found"):
        training_throughput([parse_metrics_argument(f"a={tmp_path / 'none.json'}")])
