"""What the training jobs will meet: how many training clips, and how long the longest is.

Once the ``manifest`` stage has run, its training manifest says exactly. Before the first run it does
not exist yet, so the figures are bounds the config itself implies: no more clips than the corpus
holds less the validation and test splits (the demo's ``corpus.demo.n_utterances``, LJSpeech's 13,100,
a local corpus's ``metadata.csv`` lines), and no clip longer than ``data.max_duration_s`` (the manifest
rejects longer ones). A check against a bound refuses only what no data can make work.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# LJSpeech-1.1 holds 13,100 clips (NVIDIA's v3 split keeps 100 for validation and 500 for test).
LJSPEECH_CLIPS = 13_100


@dataclass(frozen=True)
class TrainingData:
    """The training clips as far as they are known before any job runs.

    Attributes:
        n_train: Training clips: exact from the manifest, else at most this many; None when unknown
            (a local corpus whose ``metadata.csv`` cannot be read).
        longest_samples: Samples of the longest training clip (exact), else the longest a clip may be.
        source: Where the figures come from, for messages: the manifest's path, or what bounds the count
            (the longest clip's bound is always ``data.max_duration_s``).
        exact: True when read from the manifest.
    """

    n_train: int | None
    longest_samples: int
    source: str
    exact: bool


def training_data(config: Any, manifest: str | Path) -> TrainingData:
    """The training data ``config`` will meet: read from the training manifest ``manifest`` when it
    exists and reads back, else the bounds the config implies."""
    measured = _read_manifest(Path(manifest))
    if measured is not None:
        return measured
    longest = round(config.data.max_duration_s * config.audio.sampling_rate)
    corpus, corpus_source = _corpus_clips(config)
    if corpus is None:
        return TrainingData(None, longest, corpus_source, exact=False)
    held_out = _held_out(config)
    source = f"{corpus_source} less the validation and test splits"
    return TrainingData(max(0, corpus - held_out), longest, source, exact=False)


def _read_manifest(path: Path) -> TrainingData | None:
    """Count and longest clip of a training manifest; None when it is absent or unreadable (the stage
    that reads it reports the problem, with its line)."""
    if not path.is_file():
        return None
    count, longest = 0, 0
    try:
        with path.open(encoding="utf-8") as lines:
            for line in lines:
                if line.strip():
                    count += 1
                    longest = max(longest, int(json.loads(line)["n_samples"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return TrainingData(count, longest, str(path), exact=True)


def _corpus_clips(config: Any) -> tuple[int | None, str]:
    """Clips the corpus holds before validation, and the key or file that says so."""
    corpus = config.corpus
    if corpus.source == "demo":
        return corpus.demo.n_utterances, "corpus.demo.n_utterances"
    if corpus.source == "ljspeech":
        return LJSPEECH_CLIPS, "LJSpeech-1.1's 13,100 clips"
    metadata = Path(corpus.path) / "metadata.csv"
    try:
        with metadata.open(encoding="utf-8", errors="replace") as lines:
            return sum(1 for line in lines if line.strip()), str(metadata)
    except OSError:
        return None, str(metadata)


def _held_out(config: Any) -> int:
    """Clips the split keeps out of training."""
    if config.data.split.scheme == "ljspeech":
        from tts_pipeline.data.ljspeech_split import TEST_IDS, VAL_IDS

        return len(VAL_IDS) + len(TEST_IDS)
    return config.data.split.val_size + config.data.split.test_size
