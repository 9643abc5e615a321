"""The benchmark stage in-process on tiny model files, tiny features and a tiny inference manifest: the
report's keys and rows, the Markdown tables, the vocoders' mel L1, the eSpeak and recording references,
training throughput, and the MLflow figures."""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from tts_pipeline import tracking
from tts_pipeline.audio import MelSpectrogram
from tts_pipeline.benchmark import inference as benchmark_inference
from tts_pipeline.benchmark import reference
from tts_pipeline.benchmark.document import headline_metrics
from tts_pipeline.config import BenchmarkConfig, DemoCorpusConfig, InferenceConfig, PitchConfig, TextConfig
from tts_pipeline.data.espeak import SynthRequest, VoiceSettings, synthesize_in_fresh_process
from tts_pipeline.errors import UserError
from tts_pipeline.files import write_jsonl
from tts_pipeline.inference import auto_precision, fastpitch_acoustic, hifigan_vocoder, write_wav
from tts_pipeline.report.pages import markdown_page
from tts_pipeline.stages import benchmark as stage
from tts_pipeline.stages import synthesize
from tts_pipeline.text import normalize_text

from ..conftest import REPO
from ..inference_models import AUDIO, save_fastpitch_file, save_hifigan_file
from ..stage_helpers import track_into

VAL_IDS = ("LJ001-0001", "LJ001-0002", "LJ001-0003")
SENTENCES = {"same": "Dr. Lewis has 2 cats.", "higher": "The weather looks calm."}
DEMO = DemoCorpusConfig()
BASE_VOICE = VoiceSettings(168, 50, 65)  # the centre of DemoCorpusConfig's ranges, rounded half up
METRICS = {"frames_per_s": 1234.5, "frames_per_s_nvidia_units": 3086.25, "steps_per_s": 2.5, "device": "cpu",
           "world_size": 1, "amp": "off", "global_batch_size": 4, "history": []}  # fmt: skip


@pytest.fixture(autouse=True)
def one_thread():
    torch.set_num_threads(1)


def tone(seconds: float, f0: float, seed: int) -> np.ndarray:
    """A voiced-sounding clip: a few harmonics of ``f0`` with a little noise, float32 in [-1, 1], with
    0.1 s of digital silence at each end (pauses, as a corpus recording has)."""
    t = np.arange(int(seconds * AUDIO.sampling_rate)) / AUDIO.sampling_rate
    wave = sum(0.2 / k * np.sin(2 * np.pi * k * f0 * t) for k in range(1, 6))
    wave = wave + 0.01 * np.random.default_rng(seed).standard_normal(t.size)
    edge = int(0.1 * AUDIO.sampling_rate)
    wave[:edge] = wave[-edge:] = 0.0
    return wave.astype(np.float32)


@pytest.fixture
def root(tmp_path) -> Path:
    """Model files, a val manifest with recordings, ground-truth and FastPitch mels, metrics files."""
    save_fastpitch_file(tmp_path / "fastpitch" / "model.pt")
    save_hifigan_file(tmp_path / "hifigan_finetuned" / "model.pt", seed=0)
    save_hifigan_file(tmp_path / "hifigan" / "model.pt", seed=1)
    mel = MelSpectrogram(AUDIO)
    records = []
    for index, utterance_id in enumerate(VAL_IDS):
        audio = tone(0.5 + 0.1 * index, 120.0 + 20 * index, index)
        wav = write_wav(tmp_path / "wavs" / f"{utterance_id}.wav", audio, AUDIO.sampling_rate)
        truth = mel(torch.from_numpy(audio)).numpy().astype(np.float32)
        (tmp_path / "features" / "mels").mkdir(parents=True, exist_ok=True)
        (tmp_path / "fastpitch_mels").mkdir(exist_ok=True)
        np.save(tmp_path / "features" / "mels" / f"{utterance_id}.npy", truth)
        np.save(tmp_path / "fastpitch_mels" / f"{utterance_id}.npy", truth + 0.3)
        records.append({"id": utterance_id, "wav": str(wav), "text": f"sentence number {index + 1}.",
                        "n_samples": audio.size})  # fmt: skip
    write_jsonl(tmp_path / "data" / "manifest.val.jsonl", records)
    for name in ("train_hifigan", "finetune_hifigan"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "metrics.json").write_text(json.dumps(METRICS), encoding="utf-8")
    return tmp_path


def espeak_inference_manifest(root: Path) -> Path:
    """An inference manifest whose wavs are eSpeak renderings: ``same`` exactly as the reference will be
    rendered (first in a fresh process, base voice), ``higher`` at a higher pitch."""
    texts = [" ".join(normalize_text(text, "english_cleaners_v2").split()) for text in SENTENCES.values()]
    voices = [BASE_VOICE, VoiceSettings(BASE_VOICE.rate_wpm, 80, BASE_VOICE.pitch_range)]
    requests = [SynthRequest(text, voice) for text, voice in zip(texts, voices, strict=True)]
    folder = root / "inference"
    records = []
    renderings = synthesize_in_fresh_process(requests, DEMO.voice)
    for (name, text), synthesis in zip(SENTENCES.items(), renderings, strict=True):
        write_wav(folder / f"{name}.wav", synthesis.audio.astype(np.float32) / 32768.0, AUDIO.sampling_rate)
        records.append({"name": name, "wav": f"{name}.wav", "text": text, "seconds": synthesis.audio.size / 22050})
    write_jsonl(folder / "manifest.jsonl", records)
    return folder / "manifest.jsonl"


def section(**benchmark: object) -> str:
    cfg = BenchmarkConfig(**{
        "phrases": str(REPO / "config" / "phrases" / "benchmark_128.txt"),
        "batch_sizes": [1, 2], "precisions": ["fp32", "fp16", "bf16"], "warmup": 1, "repeats": 3,
        "threads": 1, "n_quality": 2, "intelligibility_clips": 0, "gpus": 0, **benchmark,
    })  # fmt: skip
    payload = {
        "benchmark": cfg.model_dump(mode="json"),
        "inference": InferenceConfig(gpus=0).model_dump(mode="json"),
        "audio": AUDIO.model_dump(mode="json"),
        "pitch": PitchConfig().model_dump(mode="json"),
        "text": TextConfig().model_dump(mode="json"),
        "corpus.demo": DEMO.model_dump(mode="json"),
    }
    return json.dumps(payload)


def run_stage(root: Path, *extra: str, payload: str | None = None, out: str = "benchmark") -> dict:
    argv = [
        "--section", payload or section(),
        "--fastpitch", str(root / "fastpitch" / "model.pt"),
        "--hifigan", str(root / "hifigan_finetuned" / "model.pt"),
        "--hifigan-base", str(root / "hifigan" / "model.pt"),
        "--manifest-dir", str(root / "data"),
        "--features-dir", str(root / "features"),
        "--fastpitch-mels-dir", str(root / "fastpitch_mels"),
        "--out-dir", str(root / out),
        *extra,
    ]  # fmt: skip
    parser = argparse.ArgumentParser()
    stage.add_arguments(parser)
    stage.run(parser.parse_args(argv))
    return json.loads((root / out / "report.json").read_text(encoding="utf-8"))


def test_report_has_speed_rows_quality_training_and_nvidia_tables(root, monkeypatch):
    # bf16 as on a CPU with native bf16, whatever runs the test: its two batch sizes and its quality row
    # (an emulated bf16's single batch and skipped quality: tests/unit/test_benchmark_inference.py).
    monkeypatch.setattr(benchmark_inference, "cpu_bf16_instructions", lambda: ("avx512_bf16",))
    manifest = espeak_inference_manifest(root)
    metrics = [f"{name}={root / name / 'metrics.json'}" for name in ("train_hifigan", "finetune_hifigan")]
    payload = section(intelligibility_clips=3, n_figures=1)
    report = run_stage(
        root, "--inference-manifest", str(manifest), "--reference", "espeak", "--metrics", *metrics, payload=payload
    )  # fmt: skip

    assert set(report) == {"environment", "settings", "models", "speed", "quality", "training", "nvidia"}
    env = report["environment"]
    assert env["device"] == "cpu" and env["threads"] == 1 and env["torch"] == torch.__version__
    assert report["settings"]["phrase"]["characters"] == 128 and report["settings"]["repeats"] == 3

    speed = report["speed"]
    bf16 = "bf16 (native: avx512_bf16)"
    assert [(r["batch_size"], r["precision"], r["precision_label"]) for r in speed["rows"]] == [
        (1, "fp32", "fp32"), (2, "fp32", "fp32"), (1, "bf16", bf16), (2, "bf16", bf16),
    ]  # fmt: skip
    assert [s["precision"] for s in speed["skipped_precisions"]] == ["fp16"]
    for row in speed["rows"]:
        assert row["n_calls"] == 3 and len(row["latencies"]["total"]) == 3
        assert row["precision"] == "bf16" or row["speed_up"] == pytest.approx(1.0)
        assert row["latency_p50_s"] <= row["latency_p99_s"] and row["x_real_time"] > 0
        assert row["rtf"] == pytest.approx(1 / row["x_real_time"])
        assert row["fastpitch_latency_mean_s"] > 0 and row["vocoder_latency_mean_s"] > 0
    one, two = speed["rows"][:2]
    assert two["audio_seconds_per_call"] == pytest.approx(2 * one["audio_seconds_per_call"])

    mel_l1 = report["quality"]["vocoder_mel_l1"]
    assert mel_l1["utterance_ids"] == list(VAL_IDS[:2]) and "ground-truth mel" in mel_l1["target"]
    assert [(r["vocoder"], r["input_key"]) for r in mel_l1["rows"]] == [
        ("base", "ground_truth"), ("base", "fastpitch"), ("fine-tuned", "ground_truth"), ("fine-tuned", "fastpitch"),
    ]  # fmt: skip
    assert all(math.isfinite(r["mel_l1"]) and r["mel_l1"] > 0 and r["utterances"] == 2 for r in mel_l1["rows"])

    # bf16 against fp32 on the same utterances: close (a tiny random vocoder), but not the same samples.
    (bf16_quality,) = report["quality"]["precision"]["rows"]
    assert bf16_quality["precision"] == "bf16" and bf16_quality["utterances"] == 2
    assert 15 < bf16_quality["vocoder_snr_db_min"] <= bf16_quality["vocoder_snr_db"] < 200
    fine_tuned_l1 = next(
        r["mel_l1"] for r in mel_l1["rows"] if r["vocoder"] == "fine-tuned" and r["input_key"] == "ground_truth"
    )
    assert bf16_quality["vocoder_mel_l1_fp32"] == pytest.approx(fine_tuned_l1)
    assert bf16_quality["vocoder_mel_l1"] == pytest.approx(fine_tuned_l1, rel=0.05)
    assert 0 <= bf16_quality["fastpitch_same_length"] <= 1

    sentences = report["quality"]["synthesized"]
    assert sentences["reference"] == "espeak" and sentences["voice"]["pitch"] == BASE_VOICE.pitch
    by_name = {row["name"]: row for row in sentences["rows"]}
    assert set(by_name) == set(SENTENCES) and sentences["skipped"] == []
    for row in by_name.values():
        for key in ("mcd_db", "f0_rmse_hz", "f0_rmse_cents", "voicing_error", "duration_ratio"):
            assert math.isfinite(row[key]), key
    # The same text at the same voice, rendered first in a fresh process: the same samples.
    assert by_name["same"]["mcd_db"] == pytest.approx(0.0, abs=1e-6)
    assert by_name["same"]["f0_rmse_hz"] == pytest.approx(0.0, abs=1e-6)
    assert by_name["same"]["duration_ratio"] == 1.0
    assert by_name["higher"]["f0_rmse_hz"] > 10.0  # eSpeak pitch 80 against 50
    assert sentences["average"]["utterances"] == 2 and math.isfinite(sentences["average"]["total_duration_ratio"])

    # Tones are no speech: every row is recognised as nothing, and the report says so in words.
    listening = report["quality"]["intelligibility"]
    assert listening["utterance_ids"] == list(VAL_IDS)
    names = [row["name"] for row in listening["rows"]]
    assert names == ["recordings", "griffin_lim_ground_truth", "hifigan_base_ground_truth",
                     "hifigan_fine_tuned_ground_truth", "griffin_lim_fastpitch", "tts"]  # fmt: skip
    assert listening["rows"][-1]["description"] == "FastPitch + fine-tuned HiFi-GAN (full TTS)"
    for row in listening["rows"]:
        assert row["closed"]["clips"] == 3 and row["closed"]["reference_words"] == 9
        assert set(row["hypotheses"]["closed"]) == set(VAL_IDS) and 0 <= row["open"]["wer"]
    prefixes = ("NOT SPEECH", "NOTHING RECOGNISED", "WORSE THAN GRIFFIN-LIM", "WITHIN THE ERROR")
    assert all(finding.startswith(prefixes) for finding in listening["findings"])
    example = listening["examples"][0]
    assert len(listening["examples"]) == 1 and example["id"] == VAL_IDS[0]
    assert Path(example["figure"]).is_file() and Path(example["figure"]).stat().st_size > 10_000
    assert set(example["wavs"]) == {"recordings", "griffin_lim_ground_truth", "hifigan_fine_tuned_ground_truth", "tts"}
    assert all(Path(path).is_file() for path in example["wavs"].values())

    # The pause table: every row of the intelligibility table, measured in the pauses of its mel.
    pauses = report["quality"]["pauses"]
    assert pauses["utterance_ids"] == list(VAL_IDS) and [row["name"] for row in pauses["rows"]] == names
    rows = {row["name"]: row for row in pauses["rows"]}
    for name in ("recordings", "griffin_lim_ground_truth", "hifigan_base_ground_truth",
                 "hifigan_fine_tuned_ground_truth"):  # fmt: skip
        row = rows[name]  # the recordings' 0.1 s of silence at each end: pauses in every ground-truth mel
        assert row["measured"] == 3 and set(row["per_utterance"]) == set(VAL_IDS), name
        assert row["pause_level_db_q1"] <= row["pause_level_db"] <= row["pause_level_db_q3"], name
    assert rows["recordings"]["pause_level_db"] < -60 and rows["recordings"]["flag"] is None  # digital silence
    assert rows["griffin_lim_ground_truth"]["pause_level_db"] < -40  # a silent mel inverts to near silence
    for row in rows.values():
        assert math.isfinite(row["noise_floor_db"]) and row["utterances"] == 3
        assert row["reference"] == (row["name"] in ("recordings", "griffin_lim_ground_truth", "griffin_lim_fastpitch"))
    product = pauses["product"]
    assert product["wavs"] == 2 and set(product["per_wav"]) == set(SENTENCES)
    assert product["noise_floor_db"] < -60 and product["flag"] is None  # eSpeak's WAVs: silence around speech
    assert pauses["limits"] == {"pause_level_db": -35.0, "noise_floor_db": -45.0}
    metrics = headline_metrics(report)  # what the tracker gets
    assert metrics["pause_level_db_recordings"] == rows["recordings"]["pause_level_db"]
    tts = listening["rows"][5]["closed"]
    assert metrics["asr_closed_sentence_accuracy_se_tts"] == tts["sentence_accuracy_se"] and tts["clips"] == 3
    assert metrics["noise_floor_db_synthesized"] == product["noise_floor_db"]

    training = report["training"]["rows"]
    assert [row["stage"] for row in training] == ["train_hifigan", "finetune_hifigan"]
    assert training[0]["frames_per_s"] == 1234.5 and training[0]["world_size"] == 1
    assert "frames_per_s" in report["training"]["units"]
    assert any(row["x_real_time"] == 518.43 for row in report["nvidia"]["published"])

    markdown = (root / "benchmark" / "report.md").read_text(encoding="utf-8")
    assert report["settings"]["inference_precision"]["amp"] == "auto"
    assert "What `synthesize` runs (inference.amp = auto): " in markdown
    # On a CPU auto chose each model's path by measurement; the report shows the figures it chose by.
    # (A model with a single way to run on this CPU needs no measuring.)
    kinds = (("FastPitch", fastpitch_acoustic), ("HiFi-GAN", hifigan_vocoder))
    measured = [name for name, module in kinds if len(auto_precision.candidate_paths(module)) > 1]
    auto = report["settings"]["inference_precision"]["auto"]
    assert [choice["model"] for choice in auto] == measured
    assert all(choice["paths"][0]["name"] == "fp32" for choice in auto)
    assert all(f"- {name}: fp32 " in markdown for name in measured)
    for heading in ("## Inference speed", "NVIDIA's published figures", "### Vocoder mel L1", "### Faster precisions",
                    "### Synthesised sentences", "### Intelligibility", "### Pauses and noise floor",
                    "## Training throughput"):  # fmt: skip
        assert heading in markdown, heading
    header = "| Batch size | Precision | Avg latency (s) | p90 latency (s) | p95 latency (s) | p99 latency"
    assert header in re.sub(" +", " ", markdown)
    assert "- fp16: fp16 autocast is CUDA-only here" in markdown
    assert "this run (" in markdown and "| same " in markdown and "| mean of 2 " in markdown
    assert "| Recordings (the corpus) " in markdown and "| Synthesised WAVs (`synthesize`, 2 phrases" in markdown
    assert markdown.index("### Intelligibility") < markdown.index("### Pauses") < markdown.index("## Training")
    written = {name: (root / "benchmark" / name).stat().st_mtime_ns for name in ("report.json", "report.md")}
    assert written["report.md"] >= written["report.json"]


def test_recordings_are_the_reference_for_sentences_named_by_validation_id(root):
    """The LJSpeech case: ``synthesize`` reads the val manifest, so its sentences are named by id."""
    phrases = root / "phrases.jsonl"
    write_jsonl(phrases, [{"id": VAL_IDS[0], "text": "a first sentence."}, {"id": "other", "text": "Not one."}])
    argv = ["--section", json.dumps({"inference": InferenceConfig(gpus=0, denoising_strength=0).model_dump(mode="json"),
                                     "audio": AUDIO.model_dump(mode="json"),
                                     "text": TextConfig().model_dump(mode="json")}),
            "--fastpitch", str(root / "fastpitch" / "model.pt"), "--vocoder", str(root / "hifigan" / "model.pt"),
            "--phrases", str(phrases), "--out-dir", str(root / "inference")]  # fmt: skip
    parser = argparse.ArgumentParser()
    synthesize.add_arguments(parser)
    synthesize.run(parser.parse_args(argv))

    payload = section(batch_sizes=[1], precisions=["fp32"])
    report = run_stage(
        root, "--inference-manifest", str(root / "inference" / "manifest.jsonl"), "--reference", "manifest",
        payload=payload,
    )  # fmt: skip
    sentences = report["quality"]["synthesized"]
    assert [row["name"] for row in sentences["rows"]] == [VAL_IDS[0]]
    assert sentences["rows"][0]["reference"].endswith(f"{VAL_IDS[0]}.wav")
    assert math.isfinite(sentences["rows"][0]["mcd_db"]) and sentences["rows"][0]["reference_seconds"] == 0.5
    assert sentences["skipped"] == [{"name": "other", "reason": reference.NOT_A_VALIDATION_ID}]
    assert report["training"]["rows"] == []
    # Without the intelligibility table, the pause table holds the synthesised WAVs' noise floor alone.
    pauses = report["quality"]["pauses"]
    assert pauses["rows"] == [] and set(pauses["product"]["per_wav"]) == {VAL_IDS[0], "other"}
    assert math.isfinite(pauses["product"]["noise_floor_db"])
    assert "| Synthesised WAVs (`synthesize`, 2 phrases" in (root / "benchmark" / "report.md").read_text()
    # ... and the pitch table has no row (it needs the listening test's audio): no Markdown section.
    assert report["quality"]["pitch"]["rows"] == [] and report["quality"]["pitch"]["findings"] == []
    assert "### Pitch" not in (root / "benchmark" / "report.md").read_text()


def test_bad_inputs_are_reported(root):
    with pytest.raises(UserError, match="--reference espeak needs --inference-manifest"):
        run_stage(root, "--reference", "espeak")
    with pytest.raises(UserError, match="--metrics: expected name=path"):
        run_stage(root, "--metrics", "no-equals-sign")
    no_voice = json.loads(section())
    del no_voice["corpus.demo"]
    with pytest.raises(UserError, match="corpus.demo"):
        run_stage(root, "--reference", "espeak", "--inference-manifest", "x.jsonl", payload=json.dumps(no_voice))
    (root / "fastpitch_mels" / f"{VAL_IDS[1]}.npy").unlink()
    with pytest.raises(UserError, match=f"utterance {VAL_IDS[1]}: teacher-forced FastPitch mel not found"):
        run_stage(root, payload=section(batch_sizes=[1], precisions=["fp32"], repeats=1, warmup=0))


def test_without_the_recogniser_the_rows_are_still_synthesised_measured_and_drawn(root, monkeypatch):
    """benchmark.recognise: false (make gpu-check's machine has no PocketSphinx): never imported."""
    for module in ("pocketsphinx", "jiwer"):
        monkeypatch.setitem(sys.modules, module, None)  # an import of it now raises ImportError
    payload = section(batch_sizes=[1], precisions=["fp32"], repeats=1, warmup=0, intelligibility_clips=2,
                      n_figures=1, recognise=False)  # fmt: skip
    report = run_stage(root, payload=payload)

    listening = report["quality"]["intelligibility"]
    assert listening["recognised"] is False and listening["rows"] == [] and len(listening["utterance_ids"]) == 2
    assert Path(listening["examples"][0]["figure"]).is_file()
    pause_rows = report["quality"]["pauses"]["rows"]
    assert "hifigan_fine_tuned_ground_truth" in {row["name"] for row in pause_rows} and len(pause_rows) >= 4
    markdown = (root / "benchmark" / "report.md").read_text(encoding="utf-8")
    assert "Intelligibility: not measured here (2 held-out sentences synthesised, not recognised)" in markdown
    assert "Closed-set WER" not in markdown and "### Pauses" in markdown

    # The pitch table, on the same audio: the recordings (tones at 120 and 140 Hz) follow themselves and are
    # off the frame rate; Griffin-Lim on their mels follows them; full TTS is not aligned: lock figure only.
    pitch = report["quality"]["pitch"]
    assert pitch["utterance_ids"] == listening["utterance_ids"]
    assert [row["name"] for row in pitch["rows"]] == [row["name"] for row in pause_rows]
    assert pitch["frame_rate_hz"] == AUDIO.sampling_rate / AUDIO.hop_length
    rows = {row["name"]: row for row in pitch["rows"]}
    recordings, griffin_lim, tts = rows["recordings"], rows["griffin_lim_ground_truth"], rows["tts"]
    assert recordings["followed"] == 1.0 and recordings["median_error_cents"] == 0.0 and recordings["locked"] == 0.0
    assert recordings["voiced_frames"] > 60 and recordings["flag"] is None
    assert griffin_lim["followed"] > 0.8 and griffin_lim["median_error_cents"] < 20
    assert all(rows[name]["aligned"] for name in ("hifigan_base_ground_truth", "hifigan_fine_tuned_ground_truth"))
    assert not tts["aligned"] and tts["followed"] is None and tts["median_error_cents"] is None
    assert headline_metrics(report)["pitch_followed_recordings"] == 1.0
    heading = "### Pitch: does the audio follow the voice, or buzz at the frame rate? (2 held-out sentences)"
    assert markdown.index("### Pauses") < markdown.index(heading) < markdown.index("## Training")
    assert "| Pitch followed |" in re.sub(" +", " ", markdown) and pitch["how_to_read"] in markdown
    html = markdown_page("Benchmark", markdown)
    assert "<th>Locked to the frame rate</th>" in html and "<td>Recordings (the corpus)</td>" in html


@pytest.mark.slow
def test_figures_and_both_files_go_to_mlflow(root, monkeypatch):
    runs = track_into(monkeypatch, stage, root, "benchmark-test")
    run_stage(root, payload=section(batch_sizes=[1], precisions=["fp32"]))
    settings = tracking.settings_from_env(tracking.TrackingSettings(enabled=False, uri="", experiment=""))
    summary = tracking.get_run(settings, runs[0])
    assert summary["status"] == "FINISHED"
    assert summary["metrics"]["b1_fp32_x_real_time"] > 0 and summary["metrics"]["mel_l1_fine-tuned_ground_truth"] > 0
    artifacts = Path(summary["artifact_uri"].removeprefix("file://"))
    assert (artifacts / "report.json").is_file() and (artifacts / "report.md").is_file()


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_precisions_on_cuda(root):
    report = run_stage(root, payload=section(gpus=1, batch_sizes=[1]))
    rows = report["speed"]["rows"]
    assert rows[0]["precision"] == "fp32" and {r["precision"] for r in rows} >= {"fp32", "fp16"}
    assert all(r["speed_up"] > 0 for r in rows)
    assert report["environment"]["tf32"].keys() == {"cuda_matmul", "cudnn"}
