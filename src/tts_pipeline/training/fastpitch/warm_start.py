"""FastPitch's warm start (``fastpitch.init_from``): the file read (a model file of this pipeline or
NVIDIA's checkpoint, as :func:`~tts_pipeline.models.fastpitch.model_file.load_fastpitch` reads them),
checked against the config, and loaded into a fresh training state.

What must agree: the network keys that shape the weights (:data:`SHAPE_KEYS`; dropouts and
``max_duration`` may differ, they shape training and inference, not the weights), the symbol table
(the embedding's rows are the symbol ids), the cleaners when the file records them, the mel channels
and the mel settings. Pitch is the exception on purpose: the model's pitch buffers keep this corpus's
statistics (the new speaker's mean and std, which its pitch targets are normalised with), not the file's.

Speakers: the speaker embedding's rows are speaker ids, so a multi-speaker file must have the training's
``n_speakers`` and, when both name their speakers, the same names in the same order (a row would
otherwise carry another voice under this corpus's name). A file that names none (NVIDIA's) lends its
rows to this corpus's speakers in id order. A single-speaker file has no embedding: it may start a
multi-speaker training, whose speaker embedding then starts fresh (:func:`apply_warm_start`). A
multi-speaker file cannot start a single-speaker training (its other weights learnt with a speaker
vector added that would be gone).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from tts_pipeline.config import FASTPITCH_MODEL_FIELDS, AudioConfig, FastPitchConfig, TextConfig
from tts_pipeline.errors import UserError
from tts_pipeline.models.fastpitch import FastPitch
from tts_pipeline.models.fastpitch.model_file import FastPitchInfo, load_fastpitch
from tts_pipeline.training.warm_start import audio_mismatches

log = logging.getLogger(__name__)

KEY = "fastpitch.init_from"

# The network keys that fix the weights' names and shapes.
SHAPE_KEYS = tuple(key for key in FASTPITCH_MODEL_FIELDS if not key.startswith("p_") and key != "max_duration")

# The speaker embedding's weight (absent from a single-speaker model).
SPEAKER_EMBEDDING = "speaker_emb.weight"

# Buffers that hold the pitch statistics: a warm start keeps this corpus's.
PITCH_BUFFERS = ("pitch_mean", "pitch_std")


@dataclass
class FastPitchInit:
    """A FastPitch to start training from.

    Attributes:
        path: Its file.
        model: The model rebuilt from it (eval mode, on the CPU).
        info: What the file says besides the weights (text settings, pitch statistics, audio section).
    """

    path: Path
    model: FastPitch
    info: FastPitchInfo


def read_init(path: str | Path, *, text: TextConfig, audio: AudioConfig) -> FastPitchInit:
    """Read the file ``fastpitch.init_from`` names; ``text`` and ``audio`` describe a file that records
    no text or audio settings (NVIDIA's). Raises UserError naming the file when it does not load."""
    model, info = load_fastpitch(path, text=text, audio=audio)
    return FastPitchInit(Path(path), model, info)


def mismatches(
    init: FastPitchInit,
    *,
    section: FastPitchConfig,
    audio: AudioConfig,
    cleaners: str | None,
    symbols: Sequence[str] | None,
    symbol_set: str | None,
    symbols_origin: str,
    speakers: Sequence[str] | None = None,
) -> list[str]:
    """How the file differs from what the training it starts needs, one sentence each naming the file and
    the config key; ``[]`` when it fits.

    Args:
        init: The file read (:func:`read_init`).
        section, audio: The config's ``fastpitch`` and ``audio`` sections.
        cleaners: ``text.cleaners``, compared when the file records its own.
        symbols: The training's symbol table, or None when it is not known yet (TextGrid durations before
            the durations stage ran).
        symbol_set: ``text.symbol_set`` when the training's symbols are of that set, compared with the
            set the file records; None for TextGrid phones.
        symbols_origin: Where ``symbols`` come from, for the message (``text.symbol_set 'english_basic'``).
        speakers: The training corpus's speaker names in id order (``()`` for a single-speaker corpus), or
            None when not known yet (before the features stage); the module docstring says what must agree.
    """
    path, info = init.path, init.info
    model_config = init.model.model_config()
    found = []
    other = [key for key in SHAPE_KEYS if model_config[key] != getattr(section, key)]
    if "n_speakers" in other and int(model_config["n_speakers"]) == 1:
        other.remove("n_speakers")  # a single-speaker file starts a multi-speaker model: a fresh embedding
    if other:
        listed = ", ".join(
            f"{key} {model_config[key]!r} (fastpitch.{key} is {getattr(section, key)!r})" for key in other
        )
        found.append(f"{path} has another network: {listed}; expected the fastpitch section to give the file's network")
    by_audio = audio_mismatches(path, info.audio.model_dump(mode="json"), audio)
    found += by_audio
    n_mels = int(model_config["n_mels"])
    if n_mels != audio.n_mel_channels and not any("n_mel_channels" in line for line in by_audio):
        found.append(
            f"{path} makes {n_mels} mel channels, but audio.n_mel_channels is {audio.n_mel_channels}; "
            "expected the same number"
        )
    text = info.text
    if symbol_set is not None and text.symbol_set is not None and text.symbol_set != symbol_set:
        found.append(
            f"{path} was trained on symbol set {text.symbol_set!r}, but text.symbol_set is {symbol_set!r}; "
            "expected the same set"
        )
    elif symbols is not None and tuple(symbols) != tuple(text.symbols):
        found.append(_symbols_differ(path, tuple(text.symbols), tuple(symbols), symbols_origin))
    if speakers is not None:
        found += _speaker_mismatches(init, tuple(speakers))
    if cleaners is not None and text.cleaners is not None and text.cleaners != cleaners:
        found.append(
            f"{path} was trained on text cleaned by {text.cleaners!r}, but text.cleaners is {cleaners!r}; "
            "expected the same cleaners (the same text would become other symbols)"
        )
    return found


def _speaker_mismatches(init: FastPitchInit, ours: tuple[str, ...]) -> list[str]:
    """How the file's speakers differ from the training corpus's ``ours`` (module docstring: the rules)."""
    path, n_file, theirs = init.path, init.info.n_speakers, init.info.speakers
    described = f"{n_file} speakers ({', '.join(theirs)})" if theirs else f"{n_file} unnamed speakers"
    if n_file > 1 and len(ours) <= 1:
        return [
            f"{path} is a multi-speaker model ({described}) but this corpus has a single speaker; its weights "
            "learnt with a speaker vector that a single-speaker model has not (start from a single-speaker "
            "model, or train on a corpus with its speakers)"
        ]
    if n_file > 1 and theirs and len(ours) > 1 and theirs != ours:
        rows = [
            f"id {index}: {a!r} in the file, {b!r} here"
            for index, (a, b) in enumerate(zip(theirs, ours, strict=False))
            if a != b
        ]
        if len(theirs) != len(ours):
            rows.append(f"{len(theirs)} speakers in the file, {len(ours)} here")
        return [
            f"{path} was trained on other speakers ({', '.join(theirs)}) than this corpus's ({', '.join(ours)}): "
            f"{'; '.join(rows)}; expected the same speakers (the speaker embedding's rows are their ids)"
        ]
    return []


def _symbols_differ(path: Path, theirs: tuple[str, ...], ours: tuple[str, ...], origin: str) -> str:
    expected = "expected the same symbols in the same order (an embedding row per symbol id)"
    if len(theirs) != len(ours):
        return f"{path} has {len(theirs)} symbols, the training's table ({origin}) {len(ours)}; {expected}"
    first = next(index for index, (a, b) in enumerate(zip(theirs, ours, strict=True)) if a != b)
    return (
        f"{path}'s symbol table differs from the training's ({origin}) at id {first}: {theirs[first]!r} in the "
        f"file, {ours[first]!r} here; {expected}"
    )


def apply_warm_start(model: FastPitch, init: FastPitchInit) -> None:
    """Load ``init``'s weights into a freshly built ``model`` (on any device), keeping its pitch buffers:
    this corpus's statistics, which its pitch targets are normalised with. A multi-speaker ``model``
    started from a single-speaker file keeps its fresh speaker embedding (the file has none).
    ``requires_grad`` (frozen parameters) stays as it is.

    Raises UserError naming ``fastpitch.init_from`` and the file when the weights do not fit.
    """
    weights = init.model.state_dict()
    for name in PITCH_BUFFERS:
        weights[name] = getattr(model, name).detach().clone()
    fresh = model.speaker_emb is not None and SPEAKER_EMBEDDING not in weights
    if fresh:
        weights[SPEAKER_EMBEDDING] = model.state_dict()[SPEAKER_EMBEDDING].detach().clone()
    elif model.speaker_emb is not None and not init.info.speakers:
        log.warning(
            "warm start from %s: its %d speakers are unnamed (NVIDIA's file?); speaker id i of this corpus "
            "starts from its row i",
            init.path,
            init.info.n_speakers,
        )
    try:
        model.load_state_dict(weights)
    except RuntimeError as error:
        raise UserError(f"{KEY} {init.path}: its weights do not fit the fastpitch section ({error})") from None
    log.info(
        "warm start from %s (step %s of its training%s): pitch statistics %.1f / %.1f Hz in the file, this "
        "corpus's %.1f / %.1f Hz used",
        init.path,
        init.info.step,
        f"; a fresh speaker embedding for {model.n_speakers} speakers" if fresh else "",
        init.info.pitch.mean,
        init.info.pitch.std,
        float(model.pitch_mean),
        float(model.pitch_std),
    )
