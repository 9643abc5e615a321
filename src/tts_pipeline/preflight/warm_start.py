"""Warm starts (``aligner.init_from``, ``fastpitch.init_from``, ``hifigan.init_from``) checked before any
job: the file exists, loads as the training stage would read it, and fits the config
(:mod:`tts_pipeline.training.warm_start` and each model's ``warm_start`` module say what must agree).
Every finding names ``<section>.init_from`` and, in its message, the file and the config key it
disagrees with.

The training's symbol table is known before the durations exist when the durations come from the
aligner or Tacotron 2 (``text.symbol_set``'s table); TextGrid phones are known once the durations stage
wrote its index (until then the stage checks them).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from tts_pipeline.errors import UserError
from tts_pipeline.preflight.findings import Finding


def check_warm_starts(config: Any, *, durations_index: str | Path | None = None) -> list[Finding]:
    """Findings about the config's warm-start files (none when it names none).

    Args:
        config: The validated :class:`~tts_pipeline.config.PipelineConfig`.
        durations_index: ``R/features/durations.json``, read for TextGrid phones when it exists.
    """
    return [*_aligner(config), *_fastpitch(config, durations_index), *_hifigan(config)]


def _read(key: str, path: str, what: str, read: Callable[[], Any]) -> tuple[Any, Finding | None]:
    """``read()``'s file (``key``'s), or None and the finding that names why not: no such file (``what``
    says what was expected there), or the UserError of reading it."""
    if not Path(path).is_file():
        return None, Finding(key, f"{path}: no such file; expected {what} to start training from")
    try:
        return read(), None
    except UserError as error:
        return None, Finding(key, str(error))


def _aligner(config: Any) -> Iterator[Finding]:
    path, key = config.aligner.init_from, "aligner.init_from"
    if path is None:
        return
    from tts_pipeline.text import get_symbols
    from tts_pipeline.training.aligner import warm_start

    what = "an aligner model file of this pipeline (R/aligner/model.pt)"
    init, refused = _read(key, path, what, lambda: warm_start.read_init(path))
    if refused is not None:
        yield refused
        return
    symbol_set = config.text.symbol_set
    found = warm_start.mismatches(
        init,
        section=config.aligner,
        n_mels=config.audio.n_mel_channels,
        symbol_set=symbol_set,
        symbol_table=get_symbols(symbol_set),
    )
    yield from (Finding(key, line) for line in found)


def _fastpitch(config: Any, durations_index: str | Path | None) -> Iterator[Finding]:
    path, key = config.fastpitch.init_from, "fastpitch.init_from"
    if path is None:
        return
    from tts_pipeline.training.fastpitch import warm_start
    from tts_pipeline.training.warm_start import frozen_names

    what = "a FastPitch model file of this pipeline or NVIDIA's checkpoint"
    init, refused = _read(key, path, what, lambda: warm_start.read_init(path, text=config.text, audio=config.audio))
    if refused is not None:
        yield refused
        return
    symbols, symbol_set, origin = _training_symbols(config, durations_index)
    found = warm_start.mismatches(
        init,
        section=config.fastpitch,
        audio=config.audio,
        cleaners=config.text.cleaners,
        symbols=symbols,
        symbol_set=symbol_set,
        symbols_origin=origin,
    )
    yield from (Finding(key, line) for line in found)
    if config.fastpitch.freeze and not found:
        names = [name for name, _ in init.model.named_parameters()]
        try:
            frozen_names(names, config.fastpitch.freeze, "fastpitch.freeze")
        except UserError as error:
            yield Finding("fastpitch.freeze", str(error).removeprefix("fastpitch.freeze: "))


def _training_symbols(config: Any, durations_index: str | Path | None) -> tuple[list[str] | None, str | None, str]:
    """The symbol table FastPitch will train on, the symbol set it is of (None for TextGrid phones) and
    where it comes from; the table is None while TextGrid durations are not extracted yet."""
    if config.durations.source != "textgrid":
        from tts_pipeline.text import get_symbols

        name = config.text.symbol_set
        return get_symbols(name), name, f"text.symbol_set {name!r}"
    if durations_index is None or not Path(durations_index).is_file():
        return None, None, "TextGrid phones"
    from tts_pipeline.models.fastpitch.data import TextSettings

    try:
        return list(TextSettings.from_durations_index(durations_index, None).symbols), None, str(durations_index)
    except UserError:
        return None, None, "TextGrid phones"  # an index the durations stage will rewrite


def _hifigan(config: Any) -> Iterator[Finding]:
    path, key = config.hifigan.init_from, "hifigan.init_from"
    if path is None:
        return
    from tts_pipeline.training.hifigan import warm_start

    what = "a HiFi-GAN generator (model file, trainer checkpoint, NVIDIA's or jik876's)"
    section, audio = config.hifigan, config.audio
    init, refused = _read(key, path, what, lambda: warm_start.read_init(path, audio=audio, section=section))
    if refused is not None:
        yield refused
        return
    yield from (Finding(key, line) for line in warm_start.mismatches(init, section=config.hifigan, audio=config.audio))
