"""Text to waveform with a trained acoustic model and vocoder (reference section 5).

:class:`Synthesizer` holds both models in eval mode on one device, checks that they were trained on the
same audio settings, and runs NVIDIA's procedure:

1. encode each text as the acoustic model was trained (:mod:`tts_pipeline.inference.text`); a text
   longer than ``max_piece_symbols`` is split at sentence ends, then commas, then spaces
   (:mod:`tts_pipeline.inference.chunking`), and one over ``max_phrase_symbols`` is refused;
2. sort by token count, longest first, and cut into batches of ``batch_size`` (zero-padded);
3. the acoustic model with the pace and pitch transform -> mels and their lengths;
4. the vocoder on each mel, then the optional bias-spectrum denoiser;
5. crop each waveform to ``mel_length x hop``, fade out its last ``fade_out_frames`` frames, join the
   pieces of one text in order with ``pause_seconds`` of silence (in the audio and, at the log floor,
   in the mel), and (only if asked) scale it to a peak of 1 (:mod:`tts_pipeline.inference.utterance`).

Which acoustic model and which vocoder is a kind's business: a row of
:mod:`tts_pipeline.config.model_kinds` and its module behind the seams of
:mod:`tts_pipeline.inference.seams` (FastPitch; HiFi-GAN or WaveGlow), which load a file and prepare a
model for a precision. The synthesizer names no kind.

Steps 3 and 4 are timed per batch with device synchronisation
(:class:`tts_pipeline.timers.Timer`); the denoiser counts as vocoder time, as in NVIDIA's
figures. Precision (:mod:`tts_pipeline.precision`): fp32, or fp16/bf16 autocast on CUDA; on a CPU
fp32, or bf16, where each kind's ``prepare`` may run a copy made for it (FastPitch held in bf16,
HiFi-GAN with fused oneDNN convs). ``auto``, the default, chooses on a CPU per model by measurement
(:mod:`tts_pipeline.inference.auto_precision`): the acoustic model and the vocoder may then run at
different precisions (:attr:`Synthesizer.vocoder_precision`, :attr:`Synthesizer.acoustic_precision`).

Batches never change results. FastPitch masks its padding, so an utterance gets the same mel alone or
batched. HiFi-GAN is a stack of convolutions whose receptive field spans about a dozen frames, so on a
padded batch the end of every shorter utterance would hear its padding; by default
(``vocoder_batching="exact"``) each mel of a batch is vocoded at its own length. ``"padded"`` runs one
vocoder call per batch as NVIDIA does (padding filled with the log-mel of silence): faster on a GPU,
and the same whenever a batch's utterances have the same length (the benchmark sentences), but the
last frames of shorter utterances then depend on their batch.

:meth:`Synthesizer.vocode` turns ground-truth mels into waveforms with the same vocoder, denoiser and
post-processing (vocoder-only checks; no acoustic model needed).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np
import torch
from torch import nn

from tts_pipeline.config import AudioConfig, TextConfig, model_kinds
from tts_pipeline.errors import UserError
from tts_pipeline.inference.agreement import check_audio_agreement
from tts_pipeline.inference.auto_precision import prepare_models
from tts_pipeline.inference.batching import pad_mels, pad_tokens, plan_batches
from tts_pipeline.inference.chunking import check_phrase_length, split_text
from tts_pipeline.inference.options import SynthesisOptions
from tts_pipeline.inference.seams import AcousticModel, MelPrediction, acoustic_model_module, vocoder_module
from tts_pipeline.inference.text import TextEncoder
from tts_pipeline.inference.utterance import (
    LOG_FLOOR_VALUE,
    BatchOutput,
    BatchTimes,
    Placement,
    Utterance,
    finish_row,
    join_pieces,
)
from tts_pipeline.models.denoiser import Denoiser
from tts_pipeline.timers import Timer

log = logging.getLogger(__name__)

# The timer names of the two timed steps. The acoustic model's keeps the name the manifests and the
# benchmark's rows have always used (fastpitch_ms, fastpitch_latency_*), whichever model it is.
ACOUSTIC_MODEL_TIMER = "fastpitch"
VOCODER_TIMER = "vocoder"
NO_ACOUSTIC_MODEL = "this synthesizer has no acoustic model: it can only vocode mels"

# Batches' worth of texts a streaming synthesis (Synthesizer.stream_pieces) sorts together: enough that
# batches pad about as little as one sort of the whole file would, few enough that the texts of one
# window waiting for their last piece stay a small, fixed amount of memory.
STREAM_WINDOW_BATCHES = 16


class Synthesizer:
    """An acoustic model and a vocoder on one device.

    Args:
        vocoder: The vocoder (a :class:`tts_pipeline.inference.seams.Vocoder` module, ready for inference;
            eval mode is set here), of kind ``vocoder_kind``.
        audio: The audio settings the models share.
        options: Batching, pace, pitch, denoising and post-processing.
        acoustic_model: The float32 acoustic model of kind ``acoustic_model_kind``; None for a
            vocoder-only synthesiser (:meth:`vocode` only).
        text_encoder: How its symbols are made from text (required with ``acoustic_model``).
        device: Where both models run.
        amp: ``"auto"``, ``"off"``, ``"fp16"`` or ``"bf16"`` (:mod:`tts_pipeline.precision`).
        vocoder_kind: A vocoder row of :mod:`tts_pipeline.config.model_kinds`.
        acoustic_model_kind: An acoustic-model row of the same table.
    """

    def __init__(
        self,
        vocoder: nn.Module,
        audio: AudioConfig,
        options: SynthesisOptions,
        *,
        acoustic_model: nn.Module | None = None,
        text_encoder: TextEncoder | None = None,
        device: torch.device | str = "cpu",
        amp: str = "off",
        vocoder_kind: str = model_kinds.PIPELINE_VOCODER,
        acoustic_model_kind: str = model_kinds.PIPELINE_ACOUSTIC_MODEL,
    ) -> None:
        if acoustic_model is not None and text_encoder is None:
            raise ValueError("text_encoder: required with an acoustic model")
        self.device = torch.device(device)
        self.audio = audio
        self.options = options
        self.vocoder_kind = vocoder_kind
        self.acoustic_model_kind = acoustic_model_kind
        self.vocoder = vocoder.to(self.device).eval()
        # The model as given stays in ``acoustic_model`` (float32), for synthesizers in other precisions
        # to share; run_batch calls the runner its kind prepared.
        self.acoustic_model = acoustic_model.to(self.device).eval() if acoustic_model is not None else None
        self.text_encoder = text_encoder
        acoustic = None
        if self.acoustic_model is not None:
            assert text_encoder is not None
            acoustic = (acoustic_model_kind, self.acoustic_model, text_encoder)
        prepared = prepare_models(amp, self.device, (vocoder_kind, self.vocoder), acoustic, audio.n_mel_channels)
        self.precision = prepared.precision
        # What _vocode_batch calls: the vocoder itself, or a copy its kind prepared for its precision,
        # which is the synthesizer's, or with ``auto`` on a CPU the way chosen for the vocoder alone.
        self.vocoder_runner = prepared.vocoder.runner
        self.vocoder_precision = prepared.vocoder.precision
        self.acoustic_runner: AcousticModel | None = prepared.acoustic.runner if prepared.acoustic else None
        self.acoustic_precision = prepared.acoustic.precision if prepared.acoustic else None
        # What ``auto`` chose by on a CPU (empty otherwise): shown by the benchmarks.
        self.auto_choices = prepared.choices
        self.timer = Timer(self.device)
        self.denoiser = Denoiser.from_vocoder(self.vocoder, audio) if options.denoising_strength > 0 else None

    @classmethod
    def load(
        cls,
        acoustic_model_path: str | Path | None,
        vocoder_path: str | Path,
        options: SynthesisOptions,
        *,
        acoustic_model_kind: str = model_kinds.PIPELINE_ACOUSTIC_MODEL,
        vocoder_kind: str = model_kinds.PIPELINE_VOCODER,
        audio: AudioConfig | None = None,
        text: TextConfig | None = None,
        foreign_audio: AudioConfig | None = None,
        device: torch.device | str = "cpu",
        amp: str = "off",
    ) -> Synthesizer:
        """Load the models from their files through their kinds' modules and check that they agree (and
        agree with ``audio``, the config's audio section, when given). Errors name the files.

        ``acoustic_model_path`` None gives a vocoder-only synthesizer. The vocoder reads its kind's
        ``options.vocoder_settings`` (WaveGlow's noise scale). Foreign checkpoints (NVIDIA's, jik876's)
        are read as they are; they record no audio or text settings, which come from ``audio`` (else
        ``foreign_audio``, for callers without a config) and ``text`` (the config's text section).
        """
        settings = audio or foreign_audio
        vocoder = vocoder_module(vocoder_kind).load(vocoder_path, audio=settings, settings=options.vocoder_settings)
        vocoder_name = f"the {model_kinds.vocoder_kind(vocoder_kind).label} model {vocoder_path}"
        if audio is not None:
            check_audio_agreement(audio, vocoder.audio, "the config's audio section", vocoder_name)
        acoustic = None
        if acoustic_model_path is not None:
            acoustic = acoustic_model_module(acoustic_model_kind).load(
                acoustic_model_path, audio=settings, text=text, settings=options.acoustic_settings
            )
            label = model_kinds.acoustic_model_kind(acoustic_model_kind).label
            acoustic_name = f"the {label} model {acoustic_model_path}"
            check_audio_agreement(acoustic.audio, vocoder.audio, acoustic_name, vocoder_name)
        log.info(
            "synthesizer: %s %s (step %d)%s on %s",
            vocoder.description,
            vocoder_path,
            vocoder.step,
            f", {acoustic.description} {acoustic_model_path}" if acoustic is not None else " (vocoder only)",
            torch.device(device),
        )
        return cls(
            vocoder.model,
            audio or vocoder.audio,
            options,
            acoustic_model=acoustic.model if acoustic is not None else None,
            text_encoder=acoustic.text_encoder if acoustic is not None else None,
            device=device,
            amp=amp,
            vocoder_kind=vocoder_kind,
            acoustic_model_kind=acoustic_model_kind,
        )

    def with_options(
        self, options: SynthesisOptions, amp: str = "off", *, vocoder_from: Synthesizer | None = None
    ) -> Synthesizer:
        """The same models with other options, in precision ``amp``, sharing their float32 weights; with
        ``vocoder_from``, that synthesizer's vocoder instead of this one's."""
        source = vocoder_from or self
        return Synthesizer(
            source.vocoder, self.audio, options, acoustic_model=self.acoustic_model, text_encoder=self.text_encoder,
            device=self.device, amp=amp, vocoder_kind=source.vocoder_kind, acoustic_model_kind=self.acoustic_model_kind,
        )  # fmt: skip

    def with_acoustic_model(
        self,
        kind: str,
        path: str | Path,
        options: SynthesisOptions,
        amp: str = "off",
        *,
        text: TextConfig | None = None,
    ) -> Synthesizer:
        """This synthesizer's vocoder with another acoustic model, of kind ``kind``, loaded from ``path`` (its
        audio settings checked against this synthesizer's; ``text``: the config's text section)."""
        loaded = acoustic_model_module(kind).load(path, audio=self.audio, text=text, settings=options.acoustic_settings)
        label = model_kinds.acoustic_model_kind(kind).label
        check_audio_agreement(loaded.audio, self.audio, f"the {label} model {path}", "this synthesizer's vocoder")
        return Synthesizer(
            self.vocoder, self.audio, options, acoustic_model=loaded.model, text_encoder=loaded.text_encoder,
            device=self.device, amp=amp, vocoder_kind=self.vocoder_kind, acoustic_model_kind=kind,
        )  # fmt: skip

    def vocoder_only(self, options: SynthesisOptions) -> Synthesizer:
        """This synthesizer's vocoder alone, float32, with other options (:meth:`vocode` only)."""
        return Synthesizer(
            self.vocoder, self.audio, options, device=self.device, amp="off", vocoder_kind=self.vocoder_kind
        )

    def warm_up(self) -> None:
        """One untimed pass of each model on a short input, so that the first timed batch does not pay
        for CUDA context set-up, kernel selection and allocator growth."""
        with torch.inference_mode():
            if self.acoustic_model is not None:
                tokens = torch.ones(1, 16, dtype=torch.int64, device=self.device)
                self.run_batch(tokens, torch.full((1,), 16, dtype=torch.int64, device=self.device))
            else:
                silence = torch.full((1, self.audio.n_mel_channels, 32), LOG_FLOOR_VALUE, device=self.device)
                self._vocode_batch(silence, torch.full((1,), 32, dtype=torch.int64, device=self.device))
        self.timer.take()

    # ---------------------------------------------------------------------------------------------
    # text

    def encode(self, text: str) -> list[int]:
        """Raw text -> the acoustic model's symbol ids (UserError for text the model cannot read)."""
        if self.text_encoder is None:
            raise UserError(NO_ACOUSTIC_MODEL)
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
        spoken = self.stream_pieces(texts, window=max(1, len(texts)))
        return sorted(spoken, key=lambda utterance: utterance.index)

    def stream_pieces(self, texts: Sequence[Sequence[Sequence[int]]], window: int | None = None) -> Iterator[Utterance]:
        """Synthesise encoded texts given as pieces, yielding each text's utterance as soon as the batch
        holding its last piece is done (batch order, not input order: ``Utterance.index`` is its position
        in ``texts``).

        The texts are taken ``window`` at a time (default :data:`STREAM_WINDOW_BATCHES` batches' worth):
        the pieces of one window share its length-sorted batches, numbered on across windows. A caller
        that writes each utterance and lets it go holds at most one window's unfinished texts, however
        many texts there are."""
        if any(len(pieces) == 0 for pieces in texts):
            raise ValueError("synthesize_pieces: every text needs at least one piece")
        if self.acoustic_model is None:
            raise UserError(NO_ACOUSTIC_MODEL)
        return self._stream_windows(texts, window or STREAM_WINDOW_BATCHES * self.options.batch_size)

    def _stream_windows(self, texts: Sequence[Sequence[Sequence[int]]], window: int) -> Iterator[Utterance]:
        first_batch = 0
        for start in range(0, len(texts), window):
            chunk = texts[start : start + window]
            # flat piece number -> (its text in the chunk, its place among that text's pieces)
            owners = [(text, place) for text, pieces in enumerate(chunk) for place in range(len(pieces))]
            flat = [piece for pieces in chunk for piece in pieces]
            waiting: dict[int, list[Utterance | None]] = {}
            for batch in self._batches(flat, normalize=False, first_batch=first_batch):
                first_batch += 1
                for spoken in batch:
                    text, place = owners[spoken.index]
                    slots = waiting.setdefault(text, [None] * len(chunk[text]))
                    slots[place] = spoken
                    if all(slot is not None for slot in slots):
                        del waiting[text]
                        pieces = [slot for slot in slots if slot is not None]
                        yield join_pieces(start + text, pieces, self.audio, self.options)

    def synthesize_tokens(self, sequences: Sequence[Sequence[int]]) -> list[Utterance]:
        """Synthesise encoded texts in length-sorted batches, each whole; the result is in input order."""
        return self._synthesize_sequences(sequences, normalize=self.options.normalize_peak)

    def _synthesize_sequences(self, sequences: Sequence[Sequence[int]], normalize: bool) -> list[Utterance]:
        if self.acoustic_model is None:
            raise UserError(NO_ACOUSTIC_MODEL)
        if any(len(sequence) == 0 for sequence in sequences):
            raise ValueError("synthesize: every symbol sequence needs at least one symbol")
        spoken = [utterance for batch in self._batches(sequences, normalize) for utterance in batch]
        return sorted(spoken, key=lambda utterance: utterance.index)

    def _batches(
        self, sequences: Sequence[Sequence[int]], normalize: bool, first_batch: int = 0
    ) -> Iterator[list[Utterance]]:
        """The utterances of each length-sorted batch of ``sequences`` as it is done (``index``: the
        position in ``sequences``; batches numbered from ``first_batch``)."""
        plan = plan_batches([len(sequence) for sequence in sequences], self.options.batch_size)
        for batch_index, indices in enumerate(plan, start=first_batch):
            tokens, lengths = pad_tokens([sequences[i] for i in indices], self.device)
            output = self.run_batch(tokens, lengths)
            taken = self.timer.take()
            times = BatchTimes(taken.get(ACOUSTIC_MODEL_TIMER), taken[VOCODER_TIMER])
            yield [
                self._finish(output, row, index, batch_index, len(sequences[index]), times, normalize)
                for row, index in enumerate(indices)
            ]

    def run_batch(self, tokens: torch.Tensor, token_lengths: torch.Tensor) -> BatchOutput:
        """The acoustic model then the vocoder on one padded batch, timed as ``"fastpitch"`` and
        ``"vocoder"`` on :attr:`timer` (read them with ``timer.take()``).

        Args:
            tokens: ``(B, L)`` int64 symbol ids on the device, 0 = padding.
            token_lengths: ``(B,)`` int64 symbols per utterance.
        """
        if self.acoustic_model is None:
            raise UserError(NO_ACOUSTIC_MODEL)
        with torch.inference_mode():
            with self.timer(ACOUSTIC_MODEL_TIMER):
                inferred = self.infer_mels(tokens, token_lengths)
            output = self._vocode_batch(inferred.mel, inferred.mel_lengths)
        # an autoregressive model says which utterances it cut at its step limit (MelPrediction)
        return output._replace(stopped=getattr(inferred, "stopped", None))

    def infer_mels(self, tokens: torch.Tensor, token_lengths: torch.Tensor) -> MelPrediction:
        """The acoustic model on ``(B, L)`` tokens in this synthesizer's precision, with its pace and pitch
        transform: ``mel`` ``(B, n_mels, T_max)`` and ``mel_lengths`` ``(B,)`` (and what else the kind gives)."""
        assert self.acoustic_runner is not None
        return self.acoustic_runner.infer(
            tokens, token_lengths, pace=self.options.pace, pitch_transform=self.options.pitch_transform
        )

    def vocoder_audio(self, mels: torch.Tensor) -> torch.Tensor:
        """The vocoder alone on ``(B, n_mels, T)`` mels in this synthesizer's precision: ``(B, 1, T x hop)``
        float32 audio, no cropping, no denoiser."""
        with self.vocoder_precision.autocast():
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
            times = BatchTimes(None, self.timer.take()[VOCODER_TIMER])
            for row, index in enumerate(indices):
                results[index] = self._finish(output, row, index, batch_index, None, times, self.options.normalize_peak)
        return [utterance for utterance in results if utterance is not None]

    def _vocode_batch(self, mels: torch.Tensor, mel_lengths: torch.Tensor) -> BatchOutput:
        """The vocoder (+ denoiser) on ``(B, n_mels, T)`` mels, timed as ``"vocoder"``; crops to the lengths."""
        hop = self.audio.hop_length
        lengths = [int(n) for n in mel_lengths.tolist()]
        with self.timer(VOCODER_TIMER):
            with self.vocoder_precision.autocast():
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
        self, output: BatchOutput, row: int, index: int, batch: int, n_tokens: int | None, times: BatchTimes, peak: bool
    ) -> Utterance:
        """Row ``row`` of a batch as utterance ``index``, faded out, scaled to a peak of 1 when ``peak``."""
        fade = self.options.fade_out_frames * self.audio.hop_length
        return finish_row(output, row, Placement(index, batch, n_tokens), times, fade, peak)
