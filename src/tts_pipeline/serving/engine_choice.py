"""Which engine speaks a voice faster on this machine: both timed side by side, the faster one chosen.

Neither engine is fastest everywhere: ONNX Runtime and PyTorch's oneDNN paths rank differently on
different CPUs, thread counts and model sizes. So ``serve --engine auto`` times the engines the export
folder holds on one sentence, in interleaved rounds (:mod:`tts_pipeline.interleaved`), and
takes the faster median. The choice is cached per CPU model, library versions, voice and thread count
(``engine-choice.json`` in :func:`tts_pipeline.files.user_cache_dir`), so only a server's first start on a machine
pays the few seconds of measurement. ``tts-pipeline bench-engines`` prints the same comparison.
"""

from __future__ import annotations

import hashlib
import json
import logging
from dataclasses import asdict, dataclass
from importlib import metadata
from pathlib import Path

from tts_pipeline.cpu import cpu_model_name as cpu_name
from tts_pipeline.export.voice_card import VOICE_CARD, read_card
from tts_pipeline.files import user_cache_dir, write_json
from tts_pipeline.interleaved import interleaved
from tts_pipeline.serving.engines import available_engines
from tts_pipeline.serving.speaker import Speaker

log = logging.getLogger(__name__)

# What the choice is timed on: an ordinary sentence of about 4 s.
CHOICE_TEXT = "The committee met on Tuesday afternoon and agreed to open the new library in the spring."


@dataclass(frozen=True)
class EngineComparison:
    """Median seconds per sentence of each engine, the sentence's audio seconds, and the faster engine.

    Attributes:
        seconds: ``{engine: median seconds to speak the sentence}``.
        audio_seconds: The sentence's audio length.
        rounds: Interleaved rounds timed.
        threads: Intra-op threads of each engine (None: the library's default).
        chosen: The engine with the smallest median.
    """

    seconds: dict[str, float]
    audio_seconds: float
    rounds: int
    threads: int | None
    chosen: str

    def real_time(self, engine: str) -> float:
        """How many times faster than real time ``engine`` speaks."""
        return self.audio_seconds / self.seconds[engine]


def compare_engines(
    folder: str | Path, *, text: str = CHOICE_TEXT, rounds: int = 5, threads: int | None = None, amp: str = "off"
) -> EngineComparison:
    """Time every engine the folder holds on ``text`` (one warm-up call each, then ``rounds`` interleaved
    rounds of one call); ``amp`` is the torch engine's precision."""
    folder = Path(folder)
    engines = available_engines(folder, read_card(folder))
    speakers = {name: Speaker.load(folder, engine=name, threads=threads, amp=amp) for name in engines}
    timing = interleaved(
        {name: (lambda speaker=speaker: speaker.speak(text)) for name, speaker in speakers.items()},
        rounds=rounds,
        repeats=1,
        warmup=1,
    )
    first = next(iter(speakers.values()))
    seconds = {name: timing.median(name) for name in speakers}
    return EngineComparison(
        seconds=seconds,
        audio_seconds=len(first.speak(text)) / first.sampling_rate,
        rounds=rounds,
        threads=threads,
        chosen=min(seconds, key=seconds.__getitem__),
    )


def choose_engine(folder: str | Path, threads: int | None = None, cache: Path | None = None) -> str:
    """The faster engine for ``folder`` on this machine: cached, else measured (and cached)."""
    folder = Path(folder)
    engines = available_engines(folder, read_card(folder))
    if len(engines) < 2:
        return engines[0] if engines else "onnx"  # loading it will name what is missing
    cache = cache or default_cache()
    key = _cache_key(folder, threads)
    known = _read_cache(cache)
    if key in known:
        log.info("engine: %s (measured before on this machine: %s)", known[key]["chosen"], cache)
        return str(known[key]["chosen"])
    comparison = compare_engines(folder, rounds=3, threads=threads)
    log.info(
        "engine: %s; seconds per %.1f s sentence: %s",
        comparison.chosen,
        comparison.audio_seconds,
        ", ".join(f"{name} {value:.3f}" for name, value in comparison.seconds.items()),
    )
    known[key] = asdict(comparison)
    try:
        write_json(cache, known)
    except OSError as error:  # a read-only home is no reason not to serve
        log.warning("engine choice not cached (%s)", error)
    return comparison.chosen


def default_cache() -> Path:
    return user_cache_dir() / "engine-choice.json"


def _cache_key(folder: Path, threads: int | None) -> str:
    """CPU model, library versions, the voice (its card's hash) and the thread count."""
    versions = []
    for package in ("onnxruntime", "torch"):
        try:
            versions.append(f"{package} {metadata.version(package)}")
        except metadata.PackageNotFoundError:
            versions.append(f"{package} absent")
    voice = hashlib.sha256((folder / VOICE_CARD).read_bytes()).hexdigest()[:16]
    return " | ".join([cpu_name(), *versions, f"voice {voice}", f"threads {threads or 'default'}"])


def _read_cache(cache: Path) -> dict:
    try:
        known = json.loads(cache.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return known if isinstance(known, dict) else {}
