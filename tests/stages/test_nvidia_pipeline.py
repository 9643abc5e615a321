"""The synthesize stage against NVIDIA's own FastPitch -> HiFi-GAN pipeline, end to end.

``tests/fixtures/nvidia_pipeline/`` holds a small FastPitch 1.1 and a HiFi-GAN v1 generator built with
NVIDIA's DeepLearningExamples code (random weights) and saved by their ``train.py`` checkpointers, the
same generator as a jik876 ``g_*`` file, six phrases (numbers, times, money, abbreviations, roman
numerals, heteronyms), and the 16-bit audio NVIDIA's ``inference.py`` made of them: once with the
FastPitch file as saved (``p_arpabet`` 0: characters), once with ``train_setup["p_arpabet"]`` 1.0
(CMUdict words as ARPAbet). See the folder's README.md.

The recipe's ``synthesize`` section runs as it is, except where NVIDIA's inference defaults differ:
CPU fp32 (``gpus`` 0, ``amp`` off; NVIDIA ran on the CPU without ``--amp``), no denoiser
(``denoising_strength`` 0: NVIDIA's ``-d`` default), and per-file peak normalisation
(``normalize_peak``: NVIDIA's script always scales each file to a peak of 1). ``fade_out_frames`` 10,
``pace`` 1.0 and no pitch transform are already NVIDIA's defaults. NVIDIA ran with batch size 1; the
section's batch size 8 is kept, so equality also shows batching changes nothing.

Measured: every sample within 1 LSB of NVIDIA's 16-bit value (before rounding, within 0.51 LSB):
the two pipelines differ only in float summation order.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
import torch

from tts_pipeline.stages import synthesize as stage

ROOT = Path(__file__).parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "nvidia_pipeline"
PHRASES = FIXTURES / "phrases.tsv"
NAMES = ["numbers", "times", "currency", "abbreviations", "roman", "heteronyms"]
FASTPITCH = FIXTURES / "FastPitch_checkpoint_1.pt"
GENERATORS = {"nvidia": FIXTURES / "hifigan_gen_checkpoint_1.pt", "jik876": FIXTURES / "jik876" / "g_00000000"}


@pytest.fixture(autouse=True)
def one_thread():
    torch.set_num_threads(1)


@pytest.fixture(scope="module")
def recipe_section() -> dict:
    """``tts-pipeline check-config config/config.yaml --section synthesize``, with NVIDIA's defaults."""
    result = subprocess.run(
        [sys.executable, "-m", "tts_pipeline", "check-config", str(ROOT / "config" / "config.yaml"),
         "--section", "synthesize"],
        check=True, capture_output=True, text=True, cwd=ROOT,
    )  # fmt: skip
    section = json.loads(result.stdout.strip().splitlines()[-1])
    assert section["inference"]["fade_out_frames"] == 10 and section["inference"]["pace"] == 1.0
    section["inference"].update(gpus=0, amp="off", denoising_strength=0.0, normalize_peak=True)
    return section


def arpabet_fastpitch(folder: Path) -> Path:
    """The fixture FastPitch as NVIDIA's ``train.py`` saves it after ``--p-arpabet 1.0`` (same seed, same
    weights: only ``train_setup`` differs)."""
    payload = torch.load(FASTPITCH, map_location="cpu", weights_only=False)
    assert payload["train_setup"]["p_arpabet"] == 0.0
    payload["train_setup"]["p_arpabet"] = 1.0
    path = folder / "FastPitch_checkpoint_1.pt"
    torch.save(payload, path)
    return path


def synthesize(section: dict, fastpitch: Path, hifigan: Path, out: Path) -> None:
    parser = argparse.ArgumentParser()
    stage.add_arguments(parser)
    argv = ["--section", json.dumps(section), "--fastpitch", str(fastpitch), "--vocoder", str(hifigan),
            "--phrases", str(PHRASES), "--out-dir", str(out)]  # fmt: skip
    stage.run(parser.parse_args(argv))


@pytest.mark.parametrize("generator", sorted(GENERATORS))
@pytest.mark.parametrize("symbols", ["characters", "arpabet"])
def test_wavs_equal_nvidias_pipeline_within_one_lsb(recipe_section, tmp_path, symbols, generator):
    fastpitch = FASTPITCH if symbols == "characters" else arpabet_fastpitch(tmp_path)
    synthesize(recipe_section, fastpitch, GENERATORS[generator], tmp_path / "out")
    for name in NAMES:
        reference, sr = sf.read(FIXTURES / symbols / f"{name}.flac", dtype="int16")
        ours, our_sr = sf.read(tmp_path / "out" / f"{name}.wav", dtype="int16")
        assert our_sr == sr == 22050
        assert len(ours) == len(reference), name  # same durations, so the same number of frames
        difference = np.abs(ours.astype(np.int32) - reference.astype(np.int32))
        assert difference.max() <= 1, (name, int(difference.max()))
        assert np.abs(reference.astype(np.int32)).max() >= 32767  # peak-normalised: a real signal


def test_the_two_readings_differ():
    """Characters and ARPAbet give different audio, so each comparison above tells them apart."""
    for name in NAMES:
        chars = sf.read(FIXTURES / "characters" / f"{name}.flac", dtype="int16")[0]
        arpabet = sf.read(FIXTURES / "arpabet" / f"{name}.flac", dtype="int16")[0]
        assert len(chars) != len(arpabet) or not np.array_equal(chars, arpabet)
