"""The bench-vocoders command end to end: eSpeak NG recordings, their mels, a vocoder that has learnt
nothing beside Griffin-Lim; the rows carry the benchmark's figures, and a gap is a difference only when
it exceeds its error."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
import yaml

from tts_pipeline.audio import MelSpectrogram
from tts_pipeline.commands import bench_vocoders
from tts_pipeline.config import DemoCorpusConfig
from tts_pipeline.data.espeak import SynthRequest, VoiceSettings, synthesize_in_fresh_process
from tts_pipeline.errors import UserError
from tts_pipeline.files import write_jsonl
from tts_pipeline.inference import write_wav

from ..conftest import REPO
from ..inference_models import AUDIO, save_hifigan_file
from ..stage_helpers import run_in_process

HELD_OUT = {"val": ["green trees grow tall."], "test": ["the cat sat on the mat.", "a dog ran home."]}


@pytest.fixture
def run_dir(tmp_path):
    config = yaml.safe_load((REPO / "config/demo.yaml").read_text())
    config["audio"] = AUDIO.model_dump(mode="json")
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(config))
    texts = [text for split in HELD_OUT.values() for text in split]
    voice = VoiceSettings(160, 50, 60)
    spoken = iter(synthesize_in_fresh_process([SynthRequest(t, voice) for t in texts], DemoCorpusConfig().voice))
    mel = MelSpectrogram(AUDIO)
    (tmp_path / "features" / "mels").mkdir(parents=True)
    for split, split_texts in HELD_OUT.items():
        records = []
        for index, text in enumerate(split_texts):
            utterance_id = f"{split}-{index}"
            audio = next(spoken).audio.astype(np.float32) / 32768.0
            wav = write_wav(tmp_path / "wavs" / f"{utterance_id}.wav", audio, AUDIO.sampling_rate)
            np.save(tmp_path / "features" / "mels" / f"{utterance_id}.npy", mel(torch.from_numpy(audio)).numpy())
            records.append({"id": utterance_id, "text": text, "wav": str(wav), "n_samples": audio.size})
        write_jsonl(tmp_path / "data" / f"manifest.{split}.jsonl", records)
    save_hifigan_file(tmp_path / "untrained.pt")
    return tmp_path


def arguments(root, *extra: str) -> list[str]:
    return [
        "--config", str(root / "config.yaml"), "--manifest-dir", str(root / "data"),
        "--features-dir", str(root / "features"), "--workers", "1", "--threads", "1", *extra,
    ]  # fmt: skip


def test_each_vocoder_is_judged_beside_the_recordings_and_griffin_lim(run_dir, capsys):
    vocoders = ["--vocoder", f"first={run_dir / 'untrained.pt'}", "--vocoder", f"again={run_dir / 'untrained.pt'}"]
    run_in_process(bench_vocoders, arguments(run_dir, *vocoders, "--json", str(run_dir / "rows.json")))
    printed = capsys.readouterr().out
    saved = json.loads((run_dir / "rows.json").read_text())
    rows = {row["name"]: row for row in saved["rows"]}
    assert list(rows) == ["recordings", "griffin-lim", "first", "again"] and saved["utterances"] == 3
    recordings, untrained = rows["recordings"], rows["first"]
    # eSpeak's own audio is heard and is its own pitch; a vocoder that learnt nothing is neither
    assert recordings["sentence_accuracy"] == 1.0 and recordings["pitch_followed"] == 1.0
    assert untrained["sentence_accuracy"] == 0.0 and untrained["model"] == str(run_dir / "untrained.pt")
    assert (untrained["pitch_followed"] or 0.0) < 0.5
    assert recordings["pause_level_db"] < untrained["pause_level_db"]
    assert rows["again"] == {**untrained, "name": "again"}  # the same file, the same figures
    assert "again: within the error of first (+0 points, error 0)" in printed
    assert "| recordings | 100 % ± 0 | 100 % |" in printed


def test_a_gap_is_a_difference_only_beyond_its_error():
    first = {"name": "a", "sentence_accuracy": 0.90, "sentence_accuracy_se": 0.03}
    close = {"name": "b", "sentence_accuracy": 0.86, "sentence_accuracy_se": 0.034}
    far = {"name": "c", "sentence_accuracy": 0.60, "sentence_accuracy_se": 0.05}
    assert bench_vocoders.difference(close, first) == "within the error of a (-4 points, error 5)"
    assert bench_vocoders.difference(far, first) == "30 points below a (error 6)"


def test_bad_items_and_missing_mels_are_named(run_dir):
    with pytest.raises(UserError, match="--vocoder: expected NAME=FILE, got 'x.pt'"):
        bench_vocoders.parse_vocoder("x.pt")
    with pytest.raises(UserError, match="'recordings' names a reference row"):
        bench_vocoders.parse_vocoder("recordings=x.pt")
    (run_dir / "features" / "mels" / "test-1.npy").unlink()
    with pytest.raises(UserError, match="no mel for held-out utterance test-1"):
        run_in_process(bench_vocoders, arguments(run_dir, "--vocoder", f"a={run_dir / 'untrained.pt'}"))
