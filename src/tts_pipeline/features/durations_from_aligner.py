"""Durations from the trained aligner: MAS on its soft attention, in batches on the CPU.

The cleaned text is encoded as the aligner was trained (characters or ARPAbet, its symbol set);
utterances of similar length share a batch. See :func:`durations_from_aligner`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from tts_pipeline.data.feature_layout import FeatureLayout
from tts_pipeline.errors import UserError
from tts_pipeline.features.duration_batches import DurationJob, pad_batch, write_in_batches
from tts_pipeline.features.symbol_files import SplitCounts, Utterance, mel_frames

log = logging.getLogger(__name__)

DEFAULT_PRIOR_SCALING = 1.0


def _info_value(info: Any, key: str) -> Any:
    """A value the aligner's file carries: an attribute of ``info``, or a key of it or of its ``extra``."""
    if isinstance(info, Mapping):
        return info.get(key)
    if hasattr(info, key):
        return getattr(info, key)
    extra = getattr(info, "extra", None)
    return extra.get(key) if isinstance(extra, Mapping) else None


def align_batch(
    model: Any,
    texts: Sequence[Sequence[int]],
    mels: Sequence[np.ndarray],
    prior_fn: Callable[[int, int], np.ndarray] | None,
) -> list[np.ndarray]:
    """Durations of a batch by MAS on the aligner's soft attention, on the CPU.

    Args:
        model: ``model(text (B, L) long, text_lengths (B,), mels (B, n_mels, T), prior (B, T, L) | None)``
            returning an object with ``attn_soft`` ``(B, 1, T, L)``.
        texts: ``B`` symbol-id sequences (each ``L_b <= T_b``).
        mels: ``B`` log-mels ``(n_mels, T_b)``.
        prior_fn: ``(T, L) -> (T, L)`` prior, or None for no prior.

    Returns:
        ``B`` int32 ``(L_b,)`` duration vectors, each summing to ``T_b``.
    """
    import torch

    from tts_pipeline.features.durations import durations_from_attention

    text, mel, text_lengths, mel_lengths = pad_batch(texts, mels)
    prior = None
    if prior_fn is not None:
        prior = np.zeros((len(texts), max(mel_lengths), max(text_lengths)), dtype=np.float32)
        for index, (n_frames, n_tokens) in enumerate(zip(mel_lengths, text_lengths, strict=True)):
            prior[index, :n_frames, :n_tokens] = prior_fn(n_frames, n_tokens)
    with torch.no_grad():
        output = model(
            torch.from_numpy(text),
            torch.tensor(text_lengths),
            torch.from_numpy(mel),
            prior=None if prior is None else torch.from_numpy(prior),
        )
    # As training's hard alignment: log of the soft attention, floored so that an underflowed 0
    # stays finite.
    log_attn = torch.log(output.attn_soft.float().clamp_min(torch.finfo(torch.float32).tiny)).numpy()
    return [
        durations_from_attention(log_attn[index, 0, :n_frames, :n_tokens])
        for index, (n_frames, n_tokens) in enumerate(zip(mel_lengths, text_lengths, strict=True))
    ]


def _checked_symbols(info: Any, aligner_path: str, symbol_set: str) -> tuple[str, list[str]]:
    """The aligner's symbol kind and table, after checking that they are ``symbol_set``'s."""
    from tts_pipeline.text import get_symbols

    symbols = str(_info_value(info, "symbols") or "characters")
    trained_set = str(_info_value(info, "symbol_set") or symbol_set)
    if trained_set != symbol_set:
        raise UserError(
            f"{aligner_path}: the aligner was trained on symbol set {trained_set!r}, "
            f"but text.symbol_set is {symbol_set!r}; retrain it or change text.symbol_set"
        )
    table = get_symbols(symbol_set)
    trained_table = list(_info_value(info, "symbol_table") or table)
    if trained_table != table:
        raise UserError(
            f"{aligner_path}: its symbol table ({len(trained_table)} symbols) differs from symbol set "
            f"{symbol_set!r} as this version defines it ({len(table)}); retrain the aligner"
        )
    return symbols, table


def _prior_fn(info: Any, aligner_path: str) -> Callable[[int, int], np.ndarray] | None:
    """The beta-binomial prior the aligner was trained with (its ``prior_scaling``), or None for none."""
    scaling = _info_value(info, "prior_scaling")
    if scaling is None:
        log.warning("%s does not record its prior_scaling; using %s", aligner_path, DEFAULT_PRIOR_SCALING)
        scaling = DEFAULT_PRIOR_SCALING
    if float(scaling) <= 0:
        return None
    from tts_pipeline.models.aligner.prior import beta_binomial_prior

    def prior_fn(n_frames: int, n_tokens: int) -> np.ndarray:
        return beta_binomial_prior(n_frames, n_tokens, float(scaling))

    return prior_fn


def durations_from_aligner(
    utterances: Sequence[Utterance],
    layout: FeatureLayout,
    aligner_path: str,
    symbol_set: str,
    batch_size: int,
    counts: dict[str, SplitCounts],
) -> dict[str, Any]:
    """Run the aligner on every utterance and write its files; returns the index's symbol fields."""
    import torch

    from tts_pipeline.models.aligner import load_aligner
    from tts_pipeline.text import encode

    model, info = load_aligner(aligner_path)
    model = model.to("cpu").eval()
    symbols, table = _checked_symbols(info, aligner_path, symbol_set)
    prior_fn = _prior_fn(info, aligner_path)
    jobs: list[DurationJob] = []
    for utterance in utterances:
        ids = encode(utterance.text, symbols, symbol_set)
        n_frames = mel_frames(layout, utterance.id)
        if not 0 < len(ids) <= n_frames:
            raise UserError(
                f"{utterance.id}: {len(ids)} symbols for {n_frames} mel frames; MAS needs 1 <= symbols <= frames"
            )
        jobs.append(DurationJob(n_frames, utterance, ids))
    log.info("aligner (%s, %s): %d utterances, batch %d, %d CPU threads", symbols, symbol_set, len(jobs),
             batch_size, torch.get_num_threads())  # fmt: skip
    write_in_batches(jobs, layout, batch_size, counts, lambda texts, mels: align_batch(model, texts, mels, prior_fn))
    return {"symbols_kind": symbols, "symbol_set": symbol_set, "symbols": table}
