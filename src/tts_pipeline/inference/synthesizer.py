"""Text to waveform with a trained FastPitch and HiFi-GAN (reference section 5).

:class:`Synthesizer` holds both models in eval mode on one device (HiFi-GAN with its weight norm
folded), checks that they were trained on the same audio settings, and runs NVIDIA's procedure:

1. encode each text as the FastPitch model was trained (:mod:`tts_pipeline.inference.text`); a text
   longer than ``max_piece_symbols`` is split at sentence ends, then commas, then spaces
   (:mod:`tts_pipeline.inference.chunking`), and one over ``max_phrase_symbols`` is refused;
2. sort by token count, longest first, and cut into batches of ``batch_size`` (zero-padded);
3. FastPitch ``infer`` with the pace and pitch transform -> mels and their lengths;
4. the vocoder on each mel (HiFi-GAN, or WaveGlow with ``waveglow_sigma``:
   :mod:`tts_pipeline.inference.waveglow_vocoder`), then the optional bias-spectrum denoiser;
5. crop each waveform to ``mel_length x hop``, fade out its last ``fade_out_frames`` frames, join the
   pieces of one text in order with ``pause_seconds`` of silence (in the audio and, at the log floor,
   in the mel), and (only if asked) scale it to a peak of 1.

Steps 3 and 4 are timed per batch with device synchronisation
(:class:`tts_pipeline.timers.Timer`); the denoiser counts as vocoder time, as in NVIDIA's
figures. Precision (:mod:`tts_pipeline.precision`): fp32, or fp16/bf16 autocast on CUDA; on a CPU
fp32, or bf16 (the default where the CPU multiplies bf16 natively), where neither model runs under
autocast: FastPitch runs from a copy held in bf16 (:mod:`tts_pipeline.models.fastpitch.bf16`) and the
vocoder as a prepared bf16 copy with fused oneDNN convs (:mod:`tts_pipeline.models.hifigan.cpu_inference`).

Batches never change results. FastPitch masks its padding, so an utterance gets the same mel alone or
batched. HiFi-GAN is a stack of convolutions whose receptive field spans about a dozen frames, so on a
padded batch the end of every shorter utterance would hear its padding; by default
(``vocoder_batching="exact"``) each mel of a batch is vocoded at its own length. ``"padded"`` runs one
vocoder call per batch as NVIDIA does (padding filled with the log-mel of silence): faster on a GPU,
and the same whenever a batch's utterances have the same length (the benchmark sentences), but the
last frames of shorter utterances then depend on their batch.

:meth:`Synthesizer.vocode` turns ground-truth mels into waveforms with the same vocoder, denoiser and
post-processing (vocoder-only checks; no FastPitch needed).
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Literal, NamedTuple

import numpy as np
import torch
from torch import nn

from tts_pipeline.audio import LOG_FLOOR
from tts_pipeline.config import AudioConfig, TextConfig
from tts_pipeline.errors import UserError
from tts_pipeline.inference.batching import pad_mels, pad_tokens, plan_batches
from tts_pipeline.inference.chunking import (
    MAX_PHRASE_SYMBOLS,
    MAX_PIECE_SYMBOLS,
    PIECE_PAUSE_SECONDS,
    check_phrase_length,
    split_text,
)
from tts_pipeline.inference.postprocess import fade_out, normalize_peak
from tts_pipeline.inference.text import TextEncoder
from tts_pipeline.models.denoiser import Denoiser
from tts_pipeline.models.fastpitch import FastPitch, FastPitchInference, PitchTransform
from tts_pipeline.models.fastpitch.bf16 import bf16_inference_copy, is_held_in_bf16
from tts_pipeline.models.hifigan import Generator
from tts_pipeline.models.hifigan.cpu_inference import prepare_generator
from tts_pipeline.precision import resolve_precision
from tts_pipeline.timers import Timer

if TYPE_CHECKING:
    from tts_pipeline.config import InferenceConfig

log = logging.getLogger(__name__)

VocoderBatching = Literal["exact", "padded"]
# The timer names of the two timed steps; the vocoder's is generic because it may be HiFi-GAN or WaveGlow.
FASTPITCH = "fastpitch"
VOCODER = "vocoder"
# The audio settings two models must share for one's mels to be the other's input.
AGREEMENT_KEYS = ("sampling_rate", "hop_length", "n_mel_channels")
# Settings that change what a mel means without changing its shape: a mismatch is worth a warning.
MEL_KEYS = ("filter_length", "win_length", "mel_fmin", "mel_fmax", "max_wav_value")
# The log-mel of silence: what padded frames hold when mels are vocoded as one padded batch.
LOG_FLOOR_VALUE = float(np.log(LOG_FLOOR))


@dataclass(frozen=True)
class SynthesisOptions:
    """How text becomes audio (the ``inference`` section, minus device and precision).

    Attributes:
        batch_size: Utterances per FastPitch call.
        pace: Speaking rate (durations are divided by it).
        pitch_transform: Applied to the predicted pitch; None = unchanged.
        denoising_strength: Bias-spectrum subtraction strength; 0 = off.
        fade_out_frames: Frames of linear fade-out at the end of each utterance.
        normalize_peak: Scale each utterance to a peak of 1.
        vocoder_batching: ``"exact"`` (one vocoder call per utterance) or ``"padded"`` (one per batch).
        max_piece_symbols: Longer texts are split into pieces of at most this many symbols.
        max_phrase_symbols: Longer texts are refused (UserError) before any model runs.
        pause_seconds: Silence between the pieces of one text.
        waveglow_sigma: WaveGlow's noise scale (a WaveGlow vocoder only; NVIDIA's inference: 0.9).
    """

    batch_size: int = 8
    pace: float = 1.0
    pitch_transform: PitchTransform | None = None
    denoising_strength: float = 0.0
    fade_out_frames: int = 10
    normalize_peak: bool = False
    vocoder_batching: VocoderBatching = "exact"
    max_piece_symbols: int = MAX_PIECE_SYMBOLS
    max_phrase_symbols: int = MAX_PHRASE_SYMBOLS
    pause_seconds: float = PIECE_PAUSE_SECONDS
    waveglow_sigma: float = 0.9

    def __post_init__(self) -> None:
        if self.batch_size < 1:
            raise ValueError(f"batch_size: expected >= 1, got {self.batch_size}")
        if self.pace <= 0:
            raise ValueError(f"pace: expected > 0, got {self.pace}")
        if self.denoising_strength < 0 or self.fade_out_frames < 0:
            raise ValueError("denoising_strength and fade_out_frames: expected >= 0")
        if self.vocoder_batching not in ("exact", "padded"):
            raise ValueError(f"vocoder_batching: expected 'exact' or 'padded', got {self.vocoder_batching!r}")
        if not 1 <= self.max_piece_symbols <= self.max_phrase_symbols:
            raise ValueError("max_piece_symbols, max_phrase_symbols: expected 1 <= piece <= phrase")
        if self.pause_seconds < 0:
            raise ValueError(f"pause_seconds: expected >= 0, got {self.pause_seconds}")
        if self.waveglow_sigma < 0:
            raise ValueError(f"waveglow_sigma: expected >= 0, got {self.waveglow_sigma}")

    @classmethod
    def from_config(cls, cfg: InferenceConfig, vocoder_batching: VocoderBatching = "exact") -> SynthesisOptions:
        """The options of an ``inference`` section."""
        transform = PitchTransform(
            flatten=cfg.pitch_flatten, invert=cfg.pitch_invert, amplify=cfg.pitch_amplify, shift_hz=cfg.pitch_shift_hz
        )
        return cls(
            batch_size=cfg.batch_size,
            pace=cfg.pace,
            pitch_transform=None if transform.is_identity else transform,
            denoising_strength=cfg.denoising_strength,
            fade_out_frames=cfg.fade_out_frames,
            normalize_peak=cfg.normalize_peak,
            vocoder_batching=vocoder_batching,
            waveglow_sigma=cfg.waveglow_sigma,
        )


@dataclass
class Utterance:
    """One synthesised utterance.

    A text synthesised in pieces is one utterance: its pieces' audio and mels joined in order with
    silent pause frames (log-floor mel frames, zero audio), so ``len(audio) == n_frames * hop`` holds.

    Attributes:
        index: Its position in the input list.
        audio: float32 ``(n_frames * hop,)`` waveform, post-processed.
        mel: float32 ``(n_mels, n_frames)`` the vocoder's input (pauses included).
        n_frames: Mel frames (pauses included).
        n_tokens: Symbols FastPitch read (None when a ground-truth mel was vocoded).
        batch: Index of the batch it was synthesised in (of its first piece).
        batch_size: Utterances in that batch.
        fastpitch_ms: FastPitch time of the whole batch (None for ground-truth mels).
        vocoder_ms: Vocoder (and denoiser) time of the whole batch.
        n_pieces: Pieces the text was split into (1 = spoken whole).
    """

    index: int
    audio: np.ndarray
    mel: np.ndarray
    n_frames: int
    n_tokens: int | None
    batch: int
    batch_size: int
    fastpitch_ms: float | None
    vocoder_ms: float
    n_pieces: int = 1


class BatchOutput(NamedTuple):
    """What one batch gives before post-processing (tensors on the device).

    Attributes:
        mels: ``(B, n_mels, T_max)`` float mels, as FastPitch produced them or as given.
        mel_lengths: ``(B,)`` int64 frames per utterance.
        audio: ``B`` float32 waveforms ``(mel_lengths[b] * hop,)``, cropped and denoised.
    """

    mels: torch.Tensor
    mel_lengths: torch.Tensor
    audio: list[torch.Tensor]


def check_audio_agreement(first: AudioConfig, second: AudioConfig, first_name: str, second_name: str) -> None:
    """Raise UserError naming both sources when they differ in sampling rate, hop or mel channels;
    warn when they differ in another setting of the mel definition."""
    differences = [
        f"{key} {getattr(first, key)} vs {getattr(second, key)}"
        for key in AGREEMENT_KEYS
        if getattr(first, key) != getattr(second, key)
    ]
    if differences:
        raise UserError(
            f"{first_name} and {second_name} disagree on the audio settings ({'; '.join(differences)}): "
            "the vocoder must be trained on the mels the acoustic model produces"
        )
    for key in MEL_KEYS:
        if getattr(first, key) != getattr(second, key):
            log.warning(
                "%s and %s differ in audio.%s (%s vs %s): the vocoder will hear mels unlike its training mels",
                first_name,
                second_name,
                key,
                getattr(first, key),
                getattr(second, key),
            )


class _VocoderInfo(NamedTuple):
    """What :meth:`Synthesizer.load` needs of a vocoder's file."""

    step: int
    audio: AudioConfig


class Synthesizer:
    """FastPitch + HiFi-GAN on one device.

    Args:
        vocoder: HiFi-GAN generator (weight norm removed for speed; eval mode is set here), or a
            :class:`tts_pipeline.inference.waveglow_vocoder.WaveGlowVocoder`.
        audio: The audio settings the models share.
        options: Batching, pace, pitch, denoising and post-processing.
        fastpitch: The acoustic model; None for a vocoder-only synthesiser (:meth:`vocode` only).
        text_encoder: How FastPitch's symbols are made from text (required with ``fastpitch``).
        device: Where both models run.
        amp: ``"auto"``, ``"off"``, ``"fp16"`` or ``"bf16"`` (:mod:`tts_pipeline.precision`).
    """

    def __init__(
        self,
        vocoder: Generator | nn.Module,
        audio: AudioConfig,
        options: SynthesisOptions,
        *,
        fastpitch: FastPitch | None = None,
        text_encoder: TextEncoder | None = None,
        device: torch.device | str = "cpu",
        amp: str = "off",
    ) -> None:
        if fastpitch is not None and text_encoder is None:
            raise ValueError("text_encoder: required with a FastPitch model")
        self.device = torch.device(device)
        self.audio = audio
        self.options = options
        self.precision = resolve_precision(amp, self.device, key="inference.amp")
        self.vocoder = vocoder.to(self.device).eval()
        # What _vocode_batch calls: the vocoder itself, or its bf16 copy prepared for the CPU.
        self.vocoder_runner = prepare_generator(self.vocoder, self.precision)
        self.fastpitch = fastpitch.to(self.device).eval() if fastpitch is not None else None
        # What run_batch calls: FastPitch itself, or on a CPU in bf16 its copy held in bf16. The model
        # as given stays in ``fastpitch`` (float32), for synthesizers in other precisions to share.
        self.fastpitch_runner = self.fastpitch
        if self.fastpitch is not None and self.precision.amp == "bf16" and self.device.type == "cpu":
            self.fastpitch_runner = bf16_inference_copy(self.fastpitch)
        self.text_encoder = text_encoder
        self.timer = Timer(self.device)
        self.denoiser = Denoiser.from_vocoder(self.vocoder, audio) if options.denoising_strength > 0 else None

    @classmethod
    def load(
        cls,
        hifigan_path: str | Path,
        fastpitch_path: str | Path | None,
        options: SynthesisOptions,
        *,
        audio: AudioConfig | None = None,
        text: TextConfig | None = None,
        foreign_audio: AudioConfig | None = None,
        device: torch.device | str = "cpu",
        amp: str = "off",
        vocoder: Literal["hifigan", "waveglow"] = "hifigan",
    ) -> Synthesizer:
        """Load the models from their files and check that they agree (and agree with ``audio``, the
        config's audio section, when given). Errors name the files.

        ``hifigan_path`` is the vocoder's file: a HiFi-GAN, or with ``vocoder="waveglow"`` a WaveGlow
        (this pipeline's model file or NVIDIA's / NGC's checkpoint; ``options.waveglow_sigma``).

        Foreign checkpoints (NVIDIA's, jik876's) are read as they are; they record no audio or text
        settings, which come from ``audio`` (else ``foreign_audio``, for callers without a config) and
        ``text`` (the config's text section).
        """
        from tts_pipeline.models.hifigan.model_file import load_generator

        settings = audio or foreign_audio
        if vocoder == "waveglow":
            from tts_pipeline.inference.waveglow_vocoder import load_waveglow_vocoder, model_file_audio

            model, waveglow_info = load_waveglow_vocoder(hifigan_path, sigma=options.waveglow_sigma, audio=settings)
            vocoder_info = _VocoderInfo(waveglow_info.step, model_file_audio(waveglow_info, settings, hifigan_path))
            hifigan_name = f"the WaveGlow model {hifigan_path}"
        else:
            model, vocoder_info = load_generator(hifigan_path, remove_weight_norm=True, audio=settings)
            hifigan_name = f"the HiFi-GAN model {hifigan_path}"
        if audio is not None:
            check_audio_agreement(audio, vocoder_info.audio, "the config's audio section", hifigan_name)
        fastpitch = encoder = None
        if fastpitch_path is not None:
            from tts_pipeline.models.fastpitch.model_file import load_fastpitch

            fastpitch, info = load_fastpitch(fastpitch_path, text=text, audio=settings)
            fastpitch_name = f"the FastPitch model {fastpitch_path}"
            check_audio_agreement(info.audio, vocoder_info.audio, fastpitch_name, hifigan_name)
            encoder = TextEncoder.from_settings(info.text, fastpitch_path)
        log.info(
            "synthesizer: %s %s (step %d)%s on %s",
            "WaveGlow" if vocoder == "waveglow" else "HiFi-GAN",
            hifigan_path,
            vocoder_info.step,
            f", FastPitch {fastpitch_path}" if fastpitch_path is not None else " (vocoder only)",
            torch.device(device),
        )
        return cls(
            model,
            audio or vocoder_info.audio,
            options,
            fastpitch=fastpitch,
            text_encoder=encoder,
            device=device,
            amp=amp,
        )

    def warm_up(self) -> None:
        """One untimed pass of each model on a short input, so that the first timed batch does not pay
        for CUDA context set-up, kernel selection and allocator growth."""
        with torch.inference_mode():
            if self.fastpitch is not None:
                tokens = torch.ones(1, 16, dtype=torch.int64, device=self.device)
                self.run_batch(tokens, torch.full((1,), 16, dtype=torch.int64, device=self.device))
            else:
                silence = torch.full((1, self.audio.n_mel_channels, 32), LOG_FLOOR_VALUE, device=self.device)
                self._vocode_batch(silence, torch.full((1,), 32, dtype=torch.int64, device=self.device))
        self.timer.take()

    # ---------------------------------------------------------------------------------------------
    # text

    def encode(self, text: str) -> list[int]:
        """Raw text -> FastPitch symbol ids (UserError for text the model cannot read)."""
        if self.text_encoder is None:
            raise UserError("this synthesizer has no FastPitch model: it can only vocode mels")
        return self.text_encoder.encode(text)

    def encode_pieces(self, text: str) -> list[list[int]]:
        """Raw text -> the symbol ids of its pieces, in order (one piece when it is short enough).

        Raises UserError for text the model cannot read, or longer than ``max_phrase_symbols`` (the
        message quotes its start and names the limit); callers add the phrase's name or file:line.
        """
        whole = self.encode(text)
        check_phrase_length(text, len(whole), self.options.max_phrase_symbols)
        if len(whole) <= self.options.max_piece_symbols:
            return [whole]
        assert self.text_encoder is not None
        encode_cleaned = self.text_encoder.encode_cleaned
        pieces = split_text(
            self.text_encoder.clean(text), self.options.max_piece_symbols, lambda piece: len(encode_cleaned(piece))
        )
        return [encode_cleaned(piece) for piece in pieces]

    def synthesize(self, texts: Sequence[str]) -> list[Utterance]:
        """Synthesise each text (long ones in pieces); one utterance per text, in input order.

        Every text is encoded (and checked against the length limit) before any model runs."""
        pieces = []
        for number, text in enumerate(texts, start=1):
            try:
                pieces.append(self.encode_pieces(text))
            except UserError as error:
                raise UserError(f"text {number}: {error}") from None
        return self.synthesize_pieces(pieces)

    def synthesize_pieces(self, texts: Sequence[Sequence[Sequence[int]]]) -> list[Utterance]:
        """Synthesise encoded texts given as pieces (:meth:`encode_pieces`): all pieces share the
        length-sorted batches, then each text's pieces are joined in order with ``pause_seconds`` of
        silence into one utterance. The result is in input order."""
        if any(len(pieces) == 0 for pieces in texts):
            raise ValueError("synthesize_pieces: every text needs at least one piece")
        flat = [piece for pieces in texts for piece in pieces]
        spoken = self._synthesize_sequences(flat, normalize=False)
        results, start = [], 0
        for index, pieces in enumerate(texts):
            results.append(self._join(index, spoken[start : start + len(pieces)]))
            start += len(pieces)
        return results

    def synthesize_tokens(self, sequences: Sequence[Sequence[int]]) -> list[Utterance]:
        """Synthesise encoded texts in length-sorted batches, each whole; the result is in input order."""
        return self._synthesize_sequences(sequences, normalize=self.options.normalize_peak)

    def _synthesize_sequences(self, sequences: Sequence[Sequence[int]], normalize: bool) -> list[Utterance]:
        if self.fastpitch is None:
            raise UserError("this synthesizer has no FastPitch model: it can only vocode mels")
        if any(len(sequence) == 0 for sequence in sequences):
            raise ValueError("synthesize: every symbol sequence needs at least one symbol")
        results: list[Utterance | None] = [None] * len(sequences)
        for batch_index, indices in enumerate(plan_batches([len(s) for s in sequences], self.options.batch_size)):
            tokens, lengths = pad_tokens([sequences[i] for i in indices], self.device)
            output = self.run_batch(tokens, lengths)
            times = self.timer.take()
            for row, index in enumerate(indices):
                results[index] = self._finish(
                    index,
                    output,
                    row,
                    batch_index,
                    len(sequences[index]),
                    times.get(FASTPITCH),
                    times[VOCODER],
                    normalize=normalize,
                )
        return [utterance for utterance in results if utterance is not None]

    def _join(self, index: int, pieces: Sequence[Utterance]) -> Utterance:
        """The pieces of text ``index`` as one utterance: audio and ``(n_mels, T)`` mels concatenated
        with ``pause_seconds`` of silence between them (zero samples; log-floor mel frames)."""
        first = pieces[0]
        if len(pieces) > 1:
            hop = self.audio.hop_length
            pause = round(self.options.pause_seconds * self.audio.sampling_rate / hop)
            silent_mel = np.full((first.mel.shape[0], pause), LOG_FLOOR_VALUE, dtype=np.float32)
            silent_audio = np.zeros(pause * hop, dtype=np.float32)
            mels, audio = [first.mel], [first.audio]
            for piece in pieces[1:]:
                mels += [silent_mel, piece.mel]
                audio += [silent_audio, piece.audio]
            first = replace(
                first,
                audio=np.concatenate(audio),
                mel=np.concatenate(mels, axis=1),
                n_frames=sum(piece.n_frames for piece in pieces) + pause * (len(pieces) - 1),
                n_tokens=sum(piece.n_tokens or 0 for piece in pieces),
                n_pieces=len(pieces),
            )
        audio = normalize_peak(first.audio) if self.options.normalize_peak else first.audio
        return replace(first, index=index, audio=audio)

    def run_batch(self, tokens: torch.Tensor, token_lengths: torch.Tensor) -> BatchOutput:
        """FastPitch then the vocoder on one padded batch, timed as ``"fastpitch"`` and ``"vocoder"``
        on :attr:`timer` (read them with ``timer.take()``).

        Args:
            tokens: ``(B, L)`` int64 symbol ids on the device, 0 = padding.
            token_lengths: ``(B,)`` int64 symbols per utterance.
        """
        if self.fastpitch is None:
            raise UserError("this synthesizer has no FastPitch model: it can only vocode mels")
        with torch.inference_mode():
            with self.timer(FASTPITCH):
                inferred = self.infer_mels(tokens, token_lengths)
            return self._vocode_batch(inferred.mel, inferred.mel_lengths)

    def infer_mels(self, tokens: torch.Tensor, token_lengths: torch.Tensor) -> FastPitchInference:
        """FastPitch's ``infer`` on ``(B, L)`` tokens in this synthesizer's precision, with its pace and
        pitch transform (the bf16 copy runs as it is; the float32 model under the precision's autocast)."""
        assert self.fastpitch_runner is not None
        held = is_held_in_bf16(self.fastpitch_runner)
        with contextlib.nullcontext() if held else self.precision.autocast():
            return self.fastpitch_runner.infer(
                tokens, token_lengths, pace=self.options.pace, pitch_transform=self.options.pitch_transform
            )

    def vocoder_audio(self, mels: torch.Tensor) -> torch.Tensor:
        """The vocoder alone on ``(B, n_mels, T)`` mels in this synthesizer's precision: ``(B, 1, T x hop)``
        float32 audio, no cropping, no denoiser."""
        with self.precision.autocast():
            return self.vocoder_runner(mels).float()

    # ---------------------------------------------------------------------------------------------
    # mels

    def vocode(self, mels: Sequence[np.ndarray | torch.Tensor]) -> list[Utterance]:
        """Turn ``(n_mels, T)`` log-mels (e.g. ground truth) into waveforms, batched by length; input order."""
        tensors = [torch.as_tensor(np.asarray(mel), dtype=torch.float32) for mel in mels]
        for number, mel in enumerate(tensors, start=1):
            if mel.dim() != 2 or mel.shape[0] != self.audio.n_mel_channels:
                raise UserError(
                    f"mel {number}: expected shape ({self.audio.n_mel_channels}, T), got {tuple(mel.shape)}"
                )
        results: list[Utterance | None] = [None] * len(tensors)
        for batch_index, indices in enumerate(plan_batches([mel.shape[1] for mel in tensors], self.options.batch_size)):
            batch, lengths = pad_mels([tensors[i].to(self.device) for i in indices], LOG_FLOOR_VALUE)
            with torch.inference_mode():
                output = self._vocode_batch(batch, lengths.to(self.device))
            times = self.timer.take()
            for row, index in enumerate(indices):
                results[index] = self._finish(index, output, row, batch_index, None, None, times[VOCODER])
        return [utterance for utterance in results if utterance is not None]

    def _vocode_batch(self, mels: torch.Tensor, mel_lengths: torch.Tensor) -> BatchOutput:
        """The vocoder (+ denoiser) on ``(B, n_mels, T)`` mels, timed as ``"vocoder"``; crops to the lengths."""
        hop = self.audio.hop_length
        lengths = [int(n) for n in mel_lengths.tolist()]
        with self.timer(VOCODER):
            with self.precision.autocast():
                if self.options.vocoder_batching == "padded" and max(lengths) > 0:
                    frames = torch.arange(mels.shape[-1], device=mels.device)
                    silent = frames[None, None, :] >= mel_lengths[:, None, None]
                    whole = self.vocoder_runner(mels.masked_fill(silent, LOG_FLOOR_VALUE)).squeeze(1)
                    audio = [whole[row, : n * hop] for row, n in enumerate(lengths)]
                else:
                    audio = [
                        self.vocoder_runner(mels[row : row + 1, :, :n]).reshape(-1) if n > 0 else mels.new_zeros(0)
                        for row, n in enumerate(lengths)
                    ]
            audio = [wave.float() for wave in audio]
            if self.denoiser is not None:
                audio = [self.denoiser(wave, self.options.denoising_strength) for wave in audio]
        return BatchOutput(mels, mel_lengths, audio)

    def _finish(
        self,
        index: int,
        output: BatchOutput,
        row: int,
        batch_index: int,
        n_tokens: int | None,
        fastpitch_s: float | None,
        vocoder_s: float,
        normalize: bool | None = None,
    ) -> Utterance:
        """Post-process row ``row`` of a batch into an :class:`Utterance` (on the CPU); ``normalize``
        (default: the option) scales it to a peak of 1."""
        n_frames = int(output.mel_lengths[row])
        audio = output.audio[row].detach().cpu().numpy().astype(np.float32)
        if n_frames == 0:
            log.warning("utterance %d: the model predicted no frames at all; its audio is empty", index + 1)
        audio = fade_out(audio, self.options.fade_out_frames * self.audio.hop_length)
        if self.options.normalize_peak if normalize is None else normalize:
            audio = normalize_peak(audio)
        return Utterance(
            index=index,
            audio=audio,
            mel=output.mels[row, :, :n_frames].detach().float().cpu().numpy(),
            n_frames=n_frames,
            n_tokens=n_tokens,
            batch=batch_index,
            batch_size=len(output.audio),
            fastpitch_ms=None if fastpitch_s is None else 1000.0 * fastpitch_s,
            vocoder_ms=1000.0 * vocoder_s,
        )
