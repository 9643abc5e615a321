"""Importing NVIDIA's code from a checkout the user names, against a tiny fake checkout with the same
layout (three top-level packages, two of them namespace packages) and the same names: the import is
isolated from this process's modules and path, and a wrong folder gets a clear error."""

from __future__ import annotations

import sys
import types
from pathlib import Path

import pytest
import torch
from torch import nn

from tts_pipeline.benchmark.nvidia_code import (
    FASTPITCH_FOLDER,
    fastpitch_folder,
    load_nvidia_code,
    load_our_weights,
    nvidia_fastpitch_arguments,
    their_names,
)
from tts_pipeline.benchmark.nvidia_twins import max_abs_diff, snr_db
from tts_pipeline.errors import UserError
from tts_pipeline.models.hifigan.foreign import convert_discriminator_state_dict

FAKE_MODULES = {
    "common/utils.py": "MARK = 'nvidia-common'\n",
    "fastpitch/model.py": (
        "import torch.nn as nn\n"
        "from common.utils import MARK\n"
        "class FastPitch(nn.Module):\n"
        "    def __init__(self, n_mel_channels, n_symbols, padding_idx, symbols_embedding_dim, n_speakers,\n"
        "                 speaker_emb_weight, pitch_conditioning_formants=1):\n"
        "        super().__init__()\n"
        "        self.encoder = nn.Embedding(n_symbols, symbols_embedding_dim)\n"
    ),
    "hifigan/models.py": (
        "from common.utils import MARK\n"
        "class Generator: pass\n"
        "class MultiPeriodDiscriminator: pass\n"
        "class MultiScaleDiscriminator: pass\n"
        "def feature_loss(a, b): return MARK\n"
        "def discriminator_loss(a, b): return MARK\n"
        "def generator_loss(a): return MARK\n"
    ),
    "hifigan/data_function.py": (
        "def librosa_mel_fn(*args): raise TypeError('keyword-only in librosa >= 0.10')\n"
        "def mel_spectrogram(y): return librosa_mel_fn(22050, 1024, 80, 0.0, 8000.0)\n"
    ),
}


def fake_checkout(root: Path, skip: str | None = None) -> Path:
    """A DeepLearningExamples-like tree under ``root`` (without ``skip``); returns ``root``."""
    folder = root / FASTPITCH_FOLDER
    for name, text in FAKE_MODULES.items():
        if name != skip:
            (folder / name).parent.mkdir(parents=True, exist_ok=True)
            (folder / name).write_text(text)
    return root


def test_the_checkout_root_and_the_fastpitch_folder_are_both_accepted(tmp_path: Path) -> None:
    root = fake_checkout(tmp_path)
    assert fastpitch_folder(root) == root / FASTPITCH_FOLDER
    assert fastpitch_folder(root / FASTPITCH_FOLDER) == root / FASTPITCH_FOLDER


def test_the_import_leaves_sys_path_and_same_named_modules_as_they_were(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = fake_checkout(tmp_path / "dle")
    # A regular package called `common` on the path would win over NVIDIA's namespace package
    # in a plain import; and a `common` already imported must survive.
    (tmp_path / "other" / "common").mkdir(parents=True)
    (tmp_path / "other" / "common" / "__init__.py").write_text("")
    (tmp_path / "other" / "common" / "utils.py").write_text("MARK = 'someone else'\n")
    monkeypatch.syspath_prepend(str(tmp_path / "other"))
    ours = types.ModuleType("common")
    monkeypatch.setitem(sys.modules, "common", ours)
    path_before = list(sys.path)

    code = load_nvidia_code(root)

    assert code.feature_loss(None, None) == "nvidia-common"
    assert code.FastPitch.__module__ == "fastpitch.model"
    assert sys.path == path_before
    assert sys.modules["common"] is ours
    assert not any(name.split(".")[0] in ("fastpitch", "hifigan") for name in sys.modules)
    assert "common.utils" not in sys.modules


def test_their_positional_librosa_call_gets_a_working_front(tmp_path: Path) -> None:
    code = load_nvidia_code(fake_checkout(tmp_path))
    filters = code.mel_spectrogram(None)
    assert filters.shape == (80, 513)


@pytest.mark.parametrize("skip", ["hifigan/models.py", "common/utils.py"])
def test_a_missing_file_is_named_with_what_was_expected(tmp_path: Path, skip: str) -> None:
    root = fake_checkout(tmp_path, skip=skip)
    with pytest.raises(UserError, match=f"--nvidia-root .*{skip}.* is missing; expected NVIDIA's FastPitch folder"):
        load_nvidia_code(root)


def test_a_folder_without_their_code_and_a_missing_folder_are_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(UserError, match=r"found neither .*PyTorch/SpeechSynthesis/FastPitch/fastpitch/model.py"):
        load_nvidia_code(tmp_path)
    with pytest.raises(UserError, match="--nvidia-root .*nowhere: not a folder"):
        load_nvidia_code(tmp_path / "nowhere")


def test_a_module_without_the_expected_class_is_named(tmp_path: Path) -> None:
    root = fake_checkout(tmp_path)
    (root / FASTPITCH_FOLDER / "fastpitch" / "model.py").write_text("X = 1\n")
    with pytest.raises(UserError, match="model.py: defines no FastPitch"):
        load_nvidia_code(root)


def test_fastpitch_arguments_come_from_our_config_and_missing_ones_are_named(tmp_path: Path) -> None:
    code = load_nvidia_code(fake_checkout(tmp_path))
    ours = {"n_mels": 80, "n_symbols": 148, "symbols_embedding_dim": 8, "n_speakers": 3, "speaker_emb_weight": 0.5}
    assert nvidia_fastpitch_arguments(code, ours) == {
        "symbols_embedding_dim": 8,
        "n_mel_channels": 80,
        "n_symbols": 148,
        "padding_idx": 0,
        "n_speakers": 3,
        "speaker_emb_weight": 0.5,
    }
    with pytest.raises(ValueError, match="symbols_embedding_dim"):
        nvidia_fastpitch_arguments(code, {"n_mels": 80, "n_symbols": 148, "n_speakers": 1, "speaker_emb_weight": 1.0})


def _old_norm_conv(spectral: bool) -> nn.Module:
    conv = nn.Conv1d(2, 3, 3)
    norm = torch.nn.utils.spectral_norm if spectral else torch.nn.utils.weight_norm
    return nn.Sequential(norm(conv))


@pytest.mark.filterwarnings("ignore:`torch.nn.utils.weight_norm` is deprecated:FutureWarning")
def test_our_weights_land_in_their_old_norm_layout() -> None:
    torch.manual_seed(0)
    from torch.nn.utils import parametrizations

    ours = nn.Sequential(parametrizations.weight_norm(nn.Conv1d(2, 3, 3)))
    theirs = _old_norm_conv(spectral=False)
    assert their_names(theirs.state_dict(), convert_discriminator_state_dict) == {
        "0.bias": "0.bias",
        "0.parametrizations.weight.original0": "0.weight_g",
        "0.parametrizations.weight.original1": "0.weight_v",
    }
    load_our_weights(theirs, ours.state_dict(), convert_discriminator_state_dict, "conv")
    x = torch.randn(1, 2, 9)
    assert max_abs_diff(ours(x), theirs(x)) < 1e-6
    with pytest.raises(ValueError, match="conv: our weights .*extra"):
        extra = {**ours.state_dict(), "extra": torch.zeros(1)}
        load_our_weights(theirs, extra, convert_discriminator_state_dict, "conv")


def test_snr_is_infinite_for_equal_signals_and_falls_with_the_noise() -> None:
    signal = torch.sin(torch.arange(1000.0) / 10)
    assert snr_db(signal, signal.clone()) == float("inf")
    assert snr_db(signal, signal + 0.001) > snr_db(signal, signal + 0.01) > 0
    with pytest.raises(ValueError, match="shapes differ"):
        snr_db(signal, signal[:10])
