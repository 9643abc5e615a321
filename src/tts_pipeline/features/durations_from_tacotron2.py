"""Durations from Tacotron 2 (FastPitch 1.0's way): the model runs teacher-forced over the ground-truth
mel, and each mel frame is given to the symbol its attention weighs most; a symbol's duration is the
count of its frames. The durations therefore sum exactly to the mel's ``T`` (a symbol no frame picks
gets 0). See :func:`durations_from_tacotron2`.

The text is encoded as the model was trained (its file's ``symbols`` kind and ``symbol_set``; an
NVIDIA checkpoint, which records none, is taken as NVIDIA trained it: characters of the config's
``text.symbol_set``), the same encoding the aligner path uses, so the durations belong to the symbols
FastPitch trains on. The prenet's dropout, which NVIDIA keeps on in eval mode, draws from a fixed seed,
so reruns give the same durations.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

import numpy as np

from tts_pipeline.data.feature_layout import FeatureLayout
from tts_pipeline.errors import UserError
from tts_pipeline.features.duration_batches import DurationJob, pad_batch, write_in_batches
from tts_pipeline.features.symbol_files import SplitCounts, Utterance, mel_frames

log = logging.getLogger(__name__)

SEED = 1234  # of the prenet's dropout during extraction


def durations_from_alignment(alignment: np.ndarray) -> np.ndarray:
    """Per-symbol durations of one utterance's attention ``(T, L)`` (rows: mel frames; columns: its
    symbols, padding cut off): argmax over symbols per frame, counted. ``(L,)`` int32 summing to ``T``."""
    alignment = np.asarray(alignment)
    if alignment.ndim != 2 or alignment.shape[0] < 1 or alignment.shape[1] < 1:
        raise ValueError(f"alignment: expected (T >= 1, L >= 1), got {alignment.shape}")
    return np.bincount(alignment.argmax(axis=1), minlength=alignment.shape[1]).astype(np.int32)


def teacher_forced_attention(
    model: Any, texts: Sequence[Sequence[int]], mels: Sequence[np.ndarray]
) -> list[np.ndarray]:
    """Tacotron 2's teacher-forced attention of a batch, on the CPU.

    Args:
        model: :class:`tts_pipeline.models.tacotron2.Tacotron2` in eval mode.
        texts: ``B`` symbol-id sequences.
        mels: ``B`` log-mels ``(n_mels, T_b)``.

    Returns:
        ``B`` float32 ``(T_b, L_b)`` attention maps (rows: mel frames; columns: the item's symbols).
    """
    import torch

    text, mel, text_lengths, mel_lengths = pad_batch(texts, mels)
    with torch.no_grad():
        output = model(
            torch.from_numpy(text), torch.tensor(text_lengths), torch.from_numpy(mel), torch.tensor(mel_lengths)
        )
    alignments = output.alignments.float().numpy()
    return [
        alignments[index, :n_frames, :n_tokens]
        for index, (n_frames, n_tokens) in enumerate(zip(mel_lengths, text_lengths, strict=True))
    ]


def align_batch(model: Any, texts: Sequence[Sequence[int]], mels: Sequence[np.ndarray]) -> list[np.ndarray]:
    """Durations of a batch from Tacotron 2's teacher-forced attention (:func:`teacher_forced_attention`):
    ``B`` int32 ``(L_b,)`` duration vectors, each summing to ``T_b``."""
    return [durations_from_alignment(alignment) for alignment in teacher_forced_attention(model, texts, mels)]


def model_text(info: Any, model_path: str, symbol_set: str) -> tuple[str, list[str]]:
    """The symbol kind and table Tacotron 2 was trained with, checked against ``symbol_set``."""
    symbols, trained_set, table = info.trained_symbols(model_path, symbol_set)
    if trained_set != symbol_set:
        raise UserError(
            f"{model_path}: Tacotron 2 was trained on symbol set {trained_set!r}, but text.symbol_set is "
            f"{symbol_set!r}; retrain it or change text.symbol_set"
        )
    return symbols, table


def durations_from_tacotron2(
    utterances: Sequence[Utterance],
    layout: FeatureLayout,
    model_path: str,
    symbol_set: str,
    n_mels: int,
    batch_size: int,
    counts: dict[str, SplitCounts],
) -> dict[str, Any]:
    """Run Tacotron 2 on every utterance and write its files; returns the index's symbol fields."""
    import torch

    from tts_pipeline.models.tacotron2 import load_tacotron2
    from tts_pipeline.text import encode

    model, info = load_tacotron2(model_path)
    model = model.to("cpu").eval()
    if model.cfg.n_mel_channels != n_mels:
        raise UserError(
            f"{model_path}: Tacotron 2 reads {model.cfg.n_mel_channels} mel channels, "
            f"but audio.n_mel_channels is {n_mels}"
        )
    symbols, table = model_text(info, model_path, symbol_set)
    jobs: list[DurationJob] = []
    for utterance in utterances:
        ids = encode(utterance.text, symbols, symbol_set)
        if not ids:
            raise UserError(f"{utterance.id}: text {utterance.text!r} encodes to no symbols")
        jobs.append(DurationJob(mel_frames(layout, utterance.id), utterance, ids))
    log.info("tacotron2 (%s, %s): %d utterances, batch %d, %d CPU threads", symbols, symbol_set, len(jobs),
             batch_size, torch.get_num_threads())  # fmt: skip
    # The prenet's dropout stays on in eval mode: a fixed seed makes reruns give the same durations.
    torch.manual_seed(SEED)
    write_in_batches(jobs, layout, batch_size, counts, lambda texts, mels: align_batch(model, texts, mels))
    return {"symbols_kind": symbols, "symbol_set": symbol_set, "symbols": table}
