"""``corpus.json``, the corpus stage's record of where the corpus is and what it holds.

The corpus is in LJSpeech layout (``<root>/wavs/<id>.wav``, ``<root>/metadata.csv``); a corpus may
also carry ground-truth word timings as ``<root>/alignments/<id>.TextGrid`` (the demo corpus does).
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from pathlib import Path
from typing import Any

from tts_pipeline.data.metadata import METADATA_NAME, WAV_DIR_NAME, read_metadata
from tts_pipeline.errors import UserError

TRUTH_DIR_NAME = "alignments"  # where a corpus keeps ground-truth word timings


def describe_corpus(root: Path, source: str, name: str) -> dict[str, Any]:
    """The corpus record: location, counts and the metadata checksum (for provenance), and for a
    multi-speaker corpus ``speakers``, the metadata lines of each speaker (names sorted).

    UserError naming the file and line of a bad speaker name (:func:`~.metadata.read_metadata`): the
    corpus stage catches it before the manifest stage would.
    """
    metadata = root / METADATA_NAME
    data = metadata.read_bytes()
    speakers = Counter(row.speaker for row in read_metadata(metadata).rows if row.speaker is not None)
    return {
        "name": name,
        "source": source,
        "root": str(root),
        "metadata": str(metadata),
        "metadata_sha256": hashlib.sha256(data).hexdigest(),
        "n_metadata_rows": sum(1 for line in data.splitlines() if line.strip()),
        "n_wavs": sum(1 for _ in (root / WAV_DIR_NAME).glob("*.wav")),
        **({"speakers": dict(sorted(speakers.items()))} if speakers else {}),
    }


def read_corpus_root(record_path: Path) -> tuple[str, Path]:
    """Name and root folder of the corpus, from the corpus stage's record."""
    try:
        record = json.loads(record_path.read_text(encoding="utf-8"))
        return str(record["name"]), Path(record["root"])
    except (OSError, json.JSONDecodeError, KeyError, TypeError) as error:
        raise UserError(f"{record_path}: not a corpus record with 'name' and 'root' ({error})") from None
