"""The one table of model kinds: every vocoder and every acoustic model a config may name.

Synthesis, the benchmark, the report's pages, the workflow's wiring and the validation of
``inference.vocoder`` all read these rows; none of them names a kind in its code. Adding a vocoder is
one module in ``tts_pipeline/inference/`` (``load`` and ``prepare``, see
:class:`tts_pipeline.inference.seams.VocoderModule`) and one :class:`VocoderKind` row here; an acoustic
model likewise (:class:`tts_pipeline.inference.seams.AcousticModelModule`, :class:`AcousticModelKind`).

The rows name their modules by dotted path, as :mod:`tts_pipeline.stage_table` names the stages: the
config sits below the models and the inference code, so it knows them by name only
(:mod:`tts_pipeline.inference.seams` imports them).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tts_pipeline.config.rules import check_hifigan_fits_audio
from tts_pipeline.config.waveglow_section import check_waveglow_fits_audio

_INFERENCE = "tts_pipeline.inference."
_EXPORT = "tts_pipeline.export."


@dataclass(frozen=True)
class VocoderKind:
    """One kind of vocoder.

    Attributes:
        name: Its name in the config (``inference.vocoder``), on the command line (``--vocoders
            NAME=PATH``), in a synthesis manifest's ``vocoder`` field, as a rule's input and in the
            benchmark's row names.
        label: How tables, logs and pages name it.
        module: The module that loads and prepares it (:class:`tts_pipeline.inference.seams.VocoderModule`).
        trained_by: The rule that writes its model file.
        folder: That rule's folder under the experiment (``<folder>/model.pt``, ``<folder>/metrics.json``).
        section: The config section of its network, checked against ``audio`` by ``fits_audio``.
        fits_audio: Raises ValueError naming the key when the section cannot work with the audio section.
        pretrained: Dotted config key of a pretrained file that replaces ``trained_by``; None: always trained.
        settings: Keys of the ``inference`` section its module reads when it loads a file (as
            :attr:`tts_pipeline.inference.SynthesisOptions.vocoder_settings`).
        export: The module whose ``graph(model)`` gives its inference graph for the ONNX and TorchScript
            exports (:class:`tts_pipeline.export.graphs.ExportGraph`); None: a voice with this vocoder
            cannot be exported yet (WaveGlow draws its noise inside; its graph would take it as an input).
    """

    name: str
    label: str
    module: str
    trained_by: str
    folder: str
    section: str
    fits_audio: Callable[[Any, Any], None]
    pretrained: str | None = None
    settings: tuple[str, ...] = ()
    export: str | None = None


@dataclass(frozen=True)
class AcousticModelKind:
    """One kind of acoustic model (text symbols -> mels).

    Attributes:
        name: Its name (what :meth:`tts_pipeline.inference.Synthesizer.load` is told).
        label: How tables, logs and pages name it.
        module: The module that loads and prepares it
            (:class:`tts_pipeline.inference.seams.AcousticModelModule`).
        trained_by: The rule that writes its model file.
        folder: That rule's folder under the experiment (``<folder>/model.pt``, ``<folder>/metrics.json``).
        pretrained: Dotted config key of a pretrained file that replaces ``trained_by``.
        settings: Keys of the ``inference`` section its module reads when it loads a file (as
            :attr:`tts_pipeline.inference.SynthesisOptions.acoustic_settings`).
        speaks_with_pace: Whether it has durations for ``inference.pace`` and pitch for the pitch
            transforms (FastPitch); a model without (Tacotron 2) refuses them in the config.
        export: The module of its export graph, as :attr:`VocoderKind.export`; None: not exportable.
    """

    name: str
    label: str
    module: str
    trained_by: str
    folder: str
    pretrained: str
    settings: tuple[str, ...] = ()
    speaks_with_pace: bool = True
    export: str | None = None


PIPELINE_VOCODER = "hifigan"
"""The vocoder the pipeline always trains (base, then fine-tuned on FastPitch's mels): the benchmark's
main rows and the report's base-against-fine-tuned pages are its. Any other vocoder in the DAG is
measured beside it."""

PIPELINE_ACOUSTIC_MODEL = "fastpitch"
"""The acoustic model the pipeline trains and synthesis speaks with."""

VOCODERS: tuple[VocoderKind, ...] = (
    VocoderKind(
        "hifigan",
        "HiFi-GAN",
        _INFERENCE + "hifigan_vocoder",
        trained_by="finetune_hifigan",
        folder="hifigan_finetuned",
        section="hifigan",
        fits_audio=check_hifigan_fits_audio,
        export=_EXPORT + "hifigan_graph",
    ),
    # FastPitch 1.0's vocoder; in the DAG when inference.vocoder names it or waveglow.checkpoint is set
    VocoderKind(
        "waveglow",
        "WaveGlow",
        _INFERENCE + "waveglow_vocoder",
        trained_by="train_waveglow",
        folder="waveglow",
        section="waveglow",
        fits_audio=check_waveglow_fits_audio,
        pretrained="waveglow.checkpoint",
        settings=("waveglow_sigma",),
    ),
)

ACOUSTIC_MODELS: tuple[AcousticModelKind, ...] = (
    AcousticModelKind(
        "fastpitch",
        "FastPitch",
        _INFERENCE + "fastpitch_acoustic",
        trained_by="train_fastpitch",
        folder="fastpitch",
        pretrained="fastpitch.checkpoint",
        settings=("speaker",),
        export=_EXPORT + "fastpitch_graph",
    ),
    # NVIDIA's Tacotron 2 + WaveGlow system's acoustic model; in the DAG when inference.acoustic_model names
    # it, durations come from it (FastPitch 1.0's path) or tacotron2.checkpoint is set
    AcousticModelKind(
        "tacotron2",
        "Tacotron 2",
        _INFERENCE + "tacotron2_acoustic",
        trained_by="train_tacotron2",
        folder="tacotron2",
        pretrained="tacotron2.checkpoint",
        settings=("tacotron2_gate_threshold", "tacotron2_max_decoder_steps"),
        speaks_with_pace=False,
    ),
)


def vocoder_names() -> tuple[str, ...]:
    return tuple(kind.name for kind in VOCODERS)


def vocoder_kind(name: str) -> VocoderKind:
    """The row of vocoder ``name``; a ``KeyError`` naming the known ones otherwise."""
    for kind in VOCODERS:
        if kind.name == name:
            return kind
    raise KeyError(f"unknown vocoder {name!r}; expected one of {', '.join(vocoder_names())}")


def acoustic_model_names() -> tuple[str, ...]:
    return tuple(kind.name for kind in ACOUSTIC_MODELS)


def acoustic_model_kind(name: str) -> AcousticModelKind:
    """The row of acoustic model ``name``; a ``KeyError`` naming the known ones otherwise."""
    for kind in ACOUSTIC_MODELS:
        if kind.name == name:
            return kind
    raise KeyError(f"unknown acoustic model {name!r}; expected one of {', '.join(acoustic_model_names())}")


# ``config`` below is a tts_pipeline.config.PipelineConfig, whose module imports this table.


def pretrained_file(config: Any, kind: VocoderKind | AcousticModelKind) -> str | None:
    """The pretrained file the config names for ``kind`` (its ``pretrained`` key), or None."""
    if kind.pretrained is None:
        return None
    section, key = kind.pretrained.split(".")
    return getattr(getattr(config, section), key)


def vocoders_in_use(config: Any) -> tuple[VocoderKind, ...]:
    """The vocoders the DAG builds, in table order: :data:`PIPELINE_VOCODER`, the one of
    ``inference.vocoder``, and every one whose pretrained file the config names (the benchmark then
    compares it with HiFi-GAN)."""
    chosen = {PIPELINE_VOCODER, config.inference.vocoder}
    return tuple(kind for kind in VOCODERS if kind.name in chosen or pretrained_file(config, kind) is not None)


def acoustic_models_in_use(config: Any) -> tuple[AcousticModelKind, ...]:
    """The acoustic models the DAG builds, in table order: :data:`PIPELINE_ACOUSTIC_MODEL`, the one of
    ``inference.acoustic_model``, Tacotron 2 when the durations come from it, and every one whose
    pretrained file the config names (the benchmark then measures it beside FastPitch)."""
    chosen = {PIPELINE_ACOUSTIC_MODEL, config.inference.acoustic_model}
    if config.durations.source == "tacotron2":
        chosen.add("tacotron2")
    return tuple(kind for kind in ACOUSTIC_MODELS if kind.name in chosen or pretrained_file(config, kind) is not None)
