"""eSpeak NG speech synthesis through its C API (ctypes), with word and phone timings.

The library and its data come from the ``espeakng-loader`` wheel, so no system package is needed.
eSpeak synthesises at 22050 Hz, the rate of the whole recipe, and reports synthesis events: the
start of each word (with its character position in the text) and of each phone (with its IPA name).
:func:`timings_from_events` turns those events into word and phone segments in samples.

Two properties of the library shape this module:

- It is process-global (one set of C globals), so :class:`Espeak` initialises it once per process
  and every call goes through that one instance.
- It keeps hidden synthesis state between calls (the phase of its pitch flutter and of its noise
  generator, among others) that no API call resets: the same text synthesised twice in one process
  gives slightly different samples. Only the same sequence of calls on a freshly loaded library is
  byte-identical.
  :func:`synthesize_in_fresh_process` therefore runs a whole batch in a new worker process.
- A voice variant with ``breath`` (``f2``, ``f3``, ``f5``, ``whisper``, ...) adds breath noise that
  differs from run to run even in a fresh process; :func:`voice_problem` refuses those variants, so
  that every voice the demo corpus uses is reproducible.

Header facts used below (``speak_lib.h``, API revision 12): the event struct layout, the event type
numbers, ``espeakINITIALIZE_PHONEME_EVENTS = 1``, ``espeakINITIALIZE_PHONEME_IPA = 2``,
``AUDIO_OUTPUT_SYNCHRONOUS = 2``, ``espeakCHARS_UTF8 = 1``, ``espeakENDPAUSE = 0x1000`` and the
parameter numbers ``espeakRATE = 1``, ``espeakVOLUME = 2``, ``espeakPITCH = 3``, ``espeakRANGE = 4``.
"""

from __future__ import annotations

import ctypes
import os
import pickle
import subprocess
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar, Literal

import numpy as np

import tts_pipeline
from tts_pipeline.errors import UserError

SAMPLE_RATE = 22050
"""eSpeak NG's native output rate, and the rate the demo corpus must have."""

# speak_lib.h constants
_AUDIO_OUTPUT_SYNCHRONOUS = 2
_INITIALIZE_PHONEME_EVENTS = 0x0001
_INITIALIZE_PHONEME_IPA = 0x0002
_POS_CHARACTER = 1
_CHARS_UTF8 = 1
_ENDPAUSE = 0x1000  # a sentence-final pause, as a recording would have
_EE_OK = 0
_EVENT_LIST_TERMINATED = 0
_EVENT_WORD = 1
_EVENT_PHONEME = 7
_PARAM_RATE = 1
_PARAM_VOLUME = 2
_PARAM_PITCH = 3
_PARAM_RANGE = 4
_PHONEMES_SEPARATED = 0x02 | (ord("_") << 8)  # espeak_TextToPhonemes: IPA names, "_" between phones

# eSpeak's default volume (100) drives loud vowels into full scale; 80 leaves headroom, so the
# manifest's clipping check never trips on synthetic speech.
_VOLUME = 80
# Stress marks in IPA phone names; phone labels drop them, as aligners' phone sets do.
_STRESS_MARKS = str.maketrans("", "", "\u02c8\u02cc")
# The largest disagreement allowed between an event's sample index and its millisecond time.
_EVENT_CLOCK_TOLERANCE_MS = 2.0


class EspeakError(RuntimeError):
    """eSpeak NG could not be loaded or initialised, or produced output that makes no sense."""


class _EventId(ctypes.Union):
    _fields_ = [
        ("number", ctypes.c_int),  # WORD and SENTENCE events: word / sentence number
        ("name", ctypes.c_char_p),  # MARK and PLAY events
        ("string", ctypes.c_char * 8),  # PHONEME events: the phone's name, NUL-terminated unless 8 bytes
    ]


class _Event(ctypes.Structure):
    _fields_ = [
        ("type", ctypes.c_int),
        ("unique_identifier", ctypes.c_uint),
        ("text_position", ctypes.c_int),  # 1-based character position in the text
        ("length", ctypes.c_int),
        ("audio_position", ctypes.c_int),  # milliseconds from the start of this text's audio
        ("sample", ctypes.c_int),  # samples from the start of this text's audio
        ("user_data", ctypes.c_void_p),
        ("id", _EventId),
    ]


# int callback(short *wav, int numsamples, espeak_EVENT *events)
_SynthCallback = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ctypes.c_short), ctypes.c_int, ctypes.POINTER(_Event))


@dataclass(frozen=True)
class VoiceSettings:
    """Per-utterance voice: speed (words per minute, 80-450), base pitch and pitch range (0-100)."""

    rate_wpm: int
    pitch: int
    pitch_range: int


@dataclass(frozen=True)
class SynthRequest:
    """One text to speak with one voice setting."""

    text: str
    voice: VoiceSettings


@dataclass(frozen=True)
class SynthEvent:
    """A word or phone start reported by eSpeak during synthesis.

    ``text_position`` is 1-based in characters; ``phone`` is the IPA name ('' for a pause, and for
    word events).
    """

    kind: Literal["word", "phone"]
    sample: int
    audio_ms: int
    text_position: int
    phone: str = ""


@dataclass(frozen=True)
class Segment:
    """A span of audio in samples, ``[start, end)``, with its label."""

    start: int
    end: int
    label: str


@dataclass(frozen=True)
class Timings:
    """Word and phone segments of one synthesis; silences are the gaps between them."""

    words: tuple[Segment, ...]
    phones: tuple[Segment, ...]


@dataclass(frozen=True)
class Synthesis:
    """The audio of one text, the events that came with it and the timings made from them.

    ``audio`` is int16, shape ``(n_samples,)``, at :data:`SAMPLE_RATE`.
    """

    audio: np.ndarray
    events: tuple[SynthEvent, ...]
    timings: Timings


class Espeak:
    """The eSpeak NG library, initialised once per process; use :meth:`instance`."""

    _instance: ClassVar[Espeak | None] = None

    @classmethod
    def instance(cls) -> Espeak:
        """The process's one initialised library (created on first use)."""
        if cls._instance is None:
            cls._instance = cls()
        return cls._instance

    def __init__(self) -> None:
        import espeakng_loader

        try:
            self._lib = ctypes.CDLL(espeakng_loader.get_library_path())
            data_path = espeakng_loader.get_data_path()
        except (OSError, RuntimeError) as error:
            raise EspeakError(f"cannot load eSpeak NG from the espeakng-loader package: {error}") from None
        self._declare_signatures()
        options = _INITIALIZE_PHONEME_EVENTS | _INITIALIZE_PHONEME_IPA
        rate = self._lib.espeak_Initialize(_AUDIO_OUTPUT_SYNCHRONOUS, 0, data_path.encode(), options)
        if rate == -1:
            raise EspeakError(f"eSpeak NG failed to initialise with its data at {data_path}")
        if rate != SAMPLE_RATE:
            raise EspeakError(f"eSpeak NG synthesises at {rate} Hz; the demo corpus needs {SAMPLE_RATE} Hz")
        # The callback object must outlive every synthesis, or the C side calls freed memory.
        self._callback = _SynthCallback(self._receive)
        self._lib.espeak_SetSynthCallback(self._callback)
        self._chunks: list[np.ndarray] = []
        self._events: list[SynthEvent] = []
        self._voice: str | None = None
        self._phone_counts: dict[tuple[str, str | None], int] = {}

    def _declare_signatures(self) -> None:
        lib = self._lib
        lib.espeak_Initialize.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_char_p, ctypes.c_int]
        lib.espeak_Initialize.restype = ctypes.c_int
        lib.espeak_SetSynthCallback.argtypes = [_SynthCallback]
        lib.espeak_SetSynthCallback.restype = None
        lib.espeak_SetVoiceByName.argtypes = [ctypes.c_char_p]
        lib.espeak_SetVoiceByName.restype = ctypes.c_int
        lib.espeak_SetParameter.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int]
        lib.espeak_SetParameter.restype = ctypes.c_int
        lib.espeak_Synth.argtypes = [
            ctypes.c_void_p, ctypes.c_size_t, ctypes.c_uint, ctypes.c_int, ctypes.c_uint, ctypes.c_uint,
            ctypes.POINTER(ctypes.c_uint), ctypes.c_void_p,
        ]  # fmt: skip
        lib.espeak_Synth.restype = ctypes.c_int
        lib.espeak_Synchronize.argtypes = []
        lib.espeak_Synchronize.restype = ctypes.c_int
        lib.espeak_TextToPhonemes.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_int, ctypes.c_int]
        lib.espeak_TextToPhonemes.restype = ctypes.c_char_p

    def _receive(self, wav: ctypes._Pointer, n_samples: int, events: ctypes._Pointer) -> int:
        """Synthesis callback: keep the audio chunk and the word / phone events. 0 = go on."""
        if wav and n_samples > 0:
            self._chunks.append(np.ctypeslib.as_array(wav, shape=(n_samples,)).copy())
        index = 0
        while events[index].type != _EVENT_LIST_TERMINATED:
            event = events[index]
            if event.type in (_EVENT_WORD, _EVENT_PHONEME):
                is_phone = event.type == _EVENT_PHONEME
                phone = event.id.string.decode("utf-8", errors="replace") if is_phone else ""
                kind = "phone" if is_phone else "word"
                self._events.append(SynthEvent(kind, event.sample, event.audio_position, event.text_position, phone))
            index += 1
        return 0

    def set_voice(self, name: str) -> None:
        """Select an eSpeak NG voice by name (``en-us``, ``en`` for British English, ``en-us+f3``, ...)."""
        if name == self._voice:
            return
        if self._lib.espeak_SetVoiceByName(name.encode()) != _EE_OK:
            raise UserError(f"corpus.demo.voice: eSpeak NG has no voice named {name!r} (try 'en-us' or 'en')")
        self._voice = name

    def synthesize(self, text: str, voice: VoiceSettings) -> Synthesis:
        """Speak ``text`` (UTF-8) with the current voice and ``voice`` settings."""
        for parameter, value in (
            (_PARAM_VOLUME, _VOLUME),
            (_PARAM_RATE, voice.rate_wpm),
            (_PARAM_PITCH, voice.pitch),
            (_PARAM_RANGE, voice.pitch_range),
        ):
            if self._lib.espeak_SetParameter(parameter, value, 0) != _EE_OK:
                raise EspeakError(f"eSpeak NG rejected parameter {parameter} = {value}")
        self._chunks, self._events = [], []
        encoded = text.encode("utf-8") + b"\0"
        flags = _CHARS_UTF8 | _ENDPAUSE
        status = self._lib.espeak_Synth(encoded, len(encoded), 0, _POS_CHARACTER, 0, flags, None, None)
        if status != _EE_OK or self._lib.espeak_Synchronize() != _EE_OK:
            raise EspeakError(f"eSpeak NG failed (status {status}) on {text!r}")
        audio = np.concatenate(self._chunks).astype(np.int16) if self._chunks else np.zeros(0, dtype=np.int16)
        events = tuple(self._events)
        return Synthesis(audio, events, timings_from_events(text, events, len(audio), self.count_phones))

    def count_phones(self, word: str) -> int:
        """How many phones eSpeak gives ``word`` spoken alone, with the current voice."""
        if (word, self._voice) not in self._phone_counts:
            encoded = ctypes.create_string_buffer(word.encode("utf-8"))
            cursor = ctypes.c_void_p(ctypes.addressof(encoded))
            clauses = []
            # It translates one clause per call and moves the cursor on; NULL marks the end.
            while cursor.value:
                result = self._lib.espeak_TextToPhonemes(ctypes.byref(cursor), _CHARS_UTF8, _PHONEMES_SEPARATED)
                clauses.append((result or b"").decode("utf-8", errors="replace"))
            self._phone_counts[word, self._voice] = sum(len([p for p in c.split("_") if p]) for c in clauses)
        return self._phone_counts[word, self._voice]


def _data_path() -> Path:
    import espeakng_loader

    return Path(espeakng_loader.get_data_path())


def voice_variants() -> list[str]:
    """The voice variants eSpeak NG's data holds (``m1`` .. ``m8``, ``f1`` .. ``f5``, ``klatt``, ...): the
    files of ``voices/!v``, which ``<voice>+<variant>`` selects."""
    return sorted(path.name for path in (_data_path() / "voices" / "!v").iterdir() if path.is_file())


def voice_problem(name: str) -> str | None:
    """Why eSpeak NG would not speak with the voice ``name`` as asked, or None.

    The language voice (before ``+``) must be a voice file of ``lang/`` (its file name, as eSpeak matches
    it: case aside) or a voice's ``name`` line; the variant after ``+`` must be a file of ``voices/!v``
    (exact name, as eSpeak opens it), and must not add breath noise (module docstring: not
    reproducible). eSpeak itself ignores an unknown variant without a word, which would quietly make
    two "different" speakers the same voice.
    """
    base, _, variant = name.partition("+")
    languages = _data_path() / "lang"
    known = {path.name.lower() for path in languages.rglob("*") if path.is_file()}
    if base.lower() not in known and base.lower() not in _voice_titles(languages):
        british = " (British English is 'en')" if base.lower().startswith("en-gb") else ""
        return f"eSpeak NG has no voice {base!r}{british}; e.g. en-us, en, en-gb-x-rp, en-029"
    if variant and variant not in voice_variants():
        return f"eSpeak NG has no voice variant {variant!r}; its variants: {', '.join(voice_variants())}"
    if variant and variant in breathy_variants():
        return (
            f"the voice variant {variant!r} adds breath noise, which eSpeak NG draws differently on every run, "
            f"so the corpus would not be reproducible; choose another (breathless female variants: f1, f4)"
        )
    return None


def breathy_variants() -> set[str]:
    """The variants whose file sets ``breath`` (a commented-out ``//breath`` line does not count)."""
    folder = _data_path() / "voices" / "!v"
    return {
        name
        for name in voice_variants()
        if any(line.split()[:1] == ["breath"] for line in (folder / name).read_text(errors="replace").splitlines())
    }


def _voice_titles(languages: Path) -> set[str]:
    """The ``name`` lines of the voice files (``english (america)``), lower case."""
    titles = set()
    for path in languages.rglob("*"):
        if path.is_file():
            for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
                if line.startswith("name "):
                    titles.add(line[5:].strip().lower())
                    break
    return titles


def synthesize_in_fresh_process(requests: Sequence[SynthRequest], voice_name: str) -> Iterator[Synthesis]:
    """Synthesise ``requests`` in order in a new worker process, yielding one :class:`Synthesis` each.

    A new process gives a freshly loaded library, so the same requests always give the same bytes
    (see the module docstring). The worker is a plain ``python -c`` subprocess rather than a
    multiprocessing child, which would re-import the caller's main script. Results stream back
    through a pipe, so memory stays bounded however many requests there are. A bad voice name
    raises :class:`UserError`; a worker that dies raises :class:`EspeakError`.
    """
    # The worker must import this package the way the caller did, installed or not.
    package_root = str(Path(tts_pipeline.__file__).resolve().parents[1])
    python_path = os.pathsep.join(filter(None, [package_root, os.environ.get("PYTHONPATH")]))
    command = [sys.executable, "-c", f"from {__name__} import _serve; _serve()"]
    with subprocess.Popen(
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env={**os.environ, "PYTHONPATH": python_path}
    ) as worker:
        assert worker.stdin is not None and worker.stdout is not None
        try:
            # The worker reads every request before it answers, so this write cannot deadlock.
            pickle.dump((voice_name, list(requests)), worker.stdin, protocol=pickle.HIGHEST_PROTOCOL)
            worker.stdin.close()
            for _ in range(len(requests)):
                status, payload = pickle.load(worker.stdout)
                if status == "error":
                    raise payload
                yield payload
        except (EOFError, BrokenPipeError):
            code = worker.wait()
            raise EspeakError(f"the eSpeak NG worker process stopped early (exit code {code})") from None
        finally:
            # Finished, failed, or stopped early by the caller: the worker has nothing more to do.
            if worker.poll() is None:
                worker.kill()


def _serve() -> None:
    """Worker-process side of :func:`synthesize_in_fresh_process`: requests in on stdin, results out."""
    results = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    # Anything else written to stdout (library messages) must not corrupt the result stream.
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    voice_name, requests = pickle.load(sys.stdin.buffer)
    try:
        engine = Espeak.instance()
        engine.set_voice(voice_name)
        for request in requests:
            synthesis = engine.synthesize(request.text, request.voice)
            pickle.dump(("ok", synthesis), results, pickle.HIGHEST_PROTOCOL)
    except Exception as error:  # handed to the parent, which raises it
        pickle.dump(("error", error), results, pickle.HIGHEST_PROTOCOL)
    results.close()


def timings_from_events(
    text: str, events: Sequence[SynthEvent], n_samples: int, count_phones: Callable[[str], int]
) -> Timings:
    """Word and phone segments, in samples, from one synthesis's events.

    - A phone lasts from its event to the next phone's start (the last one to ``n_samples``); a
      phone with an empty name is a pause and becomes silence; zero-length phones are dropped.
    - A word starts at its word event: eSpeak reports the first phone a little later (after a stop's
      closure, say), so the word's first phone is moved back to the word's start. A word ends where
      its last non-pause phone ends.
    - A word's text runs from its position to the next word's position, stripped of punctuation:
      "don't" and "well-known" stay whole, although eSpeak's own word length stops at the apostrophe
      or hyphen.
    - eSpeak speaks some pairs of words as one unit ("in the", "did not") with a single word event.
      Such a unit is split between its words at phone boundaries, in proportion to each word's own
      phone count, ``count_phones(word)``; that count is exact for almost every pair.
    """
    phones, owners = _phone_segments(events, n_samples)
    word_positions = [event.text_position - 1 for event in events if event.kind == "word"]
    words: list[Segment] = []
    for word in sorted({owner for owner in owners if owner is not None}):
        stop = word_positions[word + 1] if word + 1 < len(word_positions) else len(text)
        tokens = [token for token in map(_strip_punctuation, text[word_positions[word] : stop].split()) if token]
        word_phones = [phone for phone, owner in zip(phones, owners, strict=True) if owner == word]
        if tokens:
            words += _split_unit(word_phones, tokens, count_phones)
    return Timings(tuple(words), tuple(phones))


def _phone_segments(events: Sequence[SynthEvent], n_samples: int) -> tuple[list[Segment], list[int | None]]:
    """Phone segments (pauses and empty phones left out) and, for each, the index of its word event."""
    # (start sample, phone label, index of the word event it belongs to, or None for a pause)
    starts: list[tuple[int, str, int | None]] = []
    word_starts: list[int] = []
    word_open = False  # a word event came and none of its phones yet
    for event in events:
        previous = starts[-1][0] if starts else 0
        if event.kind == "word":
            word_starts.append(event.sample)
            word_open = True
        elif not event.phone:
            starts.append((max(event.sample, previous), "", None))
            word_open = False
        else:
            start = min(event.sample, word_starts[-1]) if word_open else event.sample
            owner = len(word_starts) - 1 if word_starts else None
            starts.append((max(start, previous), event.phone.translate(_STRESS_MARKS), owner))
            word_open = False

    phones: list[Segment] = []
    owners: list[int | None] = []
    for index, (start, label, owner) in enumerate(starts):
        end = starts[index + 1][0] if index + 1 < len(starts) else n_samples
        if label and end > start:
            phones.append(Segment(start, end, label))
            owners.append(owner)
    return phones, owners


def _split_unit(phones: Sequence[Segment], tokens: Sequence[str], count_phones: Callable[[str], int]) -> list[Segment]:
    """Word segments for the tokens of one word event (usually one token, sometimes a pair)."""
    if not phones:
        return []
    if len(tokens) == 1 or len(phones) < len(tokens):
        return [Segment(phones[0].start, phones[-1].end, " ".join(tokens))]
    counts = np.cumsum([max(1, count_phones(token)) for token in tokens])
    words = []
    first = 0
    for index, token in enumerate(tokens):
        # Each token keeps at least one phone and leaves one for each token after it.
        last = round(len(phones) * counts[index] / counts[-1])
        last = min(max(last, first + 1), len(phones) - (len(tokens) - 1 - index))
        words.append(Segment(phones[first].start, phones[last - 1].end, token))
        first = last
    return words


def _strip_punctuation(token: str) -> str:
    """Strip non-alphanumeric characters from both ends of a token."""
    start, end = 0, len(token)
    while start < end and not token[start].isalnum():
        start += 1
    while end > start and not token[end - 1].isalnum():
        end -= 1
    return token[start:end]


def check_timings(synthesis: Synthesis, what: str) -> None:
    """Raise :class:`EspeakError` unless the timings are plausible for the audio.

    Checks: every event's sample index agrees with its millisecond time (a wrong struct layout
    would break this), there are words, word and phone starts strictly increase and every segment
    lies inside the audio.
    """
    n_samples, timings = len(synthesis.audio), synthesis.timings
    for event in synthesis.events:
        if abs(event.sample * 1000 / SAMPLE_RATE - event.audio_ms) > _EVENT_CLOCK_TOLERANCE_MS:
            raise EspeakError(f"{what}: eSpeak event at sample {event.sample} but {event.audio_ms} ms")
    if not timings.words:
        raise EspeakError(f"{what}: eSpeak reported no words")
    for tier, segments in (("word", timings.words), ("phone", timings.phones)):
        previous = -1
        for segment in segments:
            if segment.start <= previous or not 0 <= segment.start < segment.end <= n_samples:
                raise EspeakError(
                    f"{what}: {tier} {segment.label!r} at samples [{segment.start}, {segment.end}) is out of "
                    f"order or outside the audio ({n_samples} samples)"
                )
            previous = segment.start
