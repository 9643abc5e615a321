"""Peak memory of the synthesize stage on N short phrases with tiny random models, in a process of its own.

    python -m tests.synthesis_memory 10000 [folder]

prints one JSON line: ``{"phrases": N, "peak_rss_mb": ..., "seconds": ...}``. The peak is the process's
maximum resident set (``getrusage``), so each count must run in a fresh process.
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import tempfile
import time
from pathlib import Path

WORDS = "the keeper painted a bright blue door near old harbour while seven gulls circled slowly above".split()


def phrase_file(path: Path, count: int) -> Path:
    """``count`` short phrases (five to nine words each), every name unique."""
    lines = []
    for number in range(count):
        size = 5 + number % 5
        words = [WORDS[(number * 7 + k * 3) % len(WORDS)] for k in range(size)]
        lines.append(f"p{number:05d}|{' '.join(words).capitalize()}.")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def measure(count: int, root: Path) -> dict[str, float]:
    import torch

    from tests.inference_models import AUDIO, save_fastpitch_file, save_hifigan_file
    from tts_pipeline.config import InferenceConfig, TextConfig
    from tts_pipeline.stages import synthesize

    torch.set_num_threads(1)
    payload = json.dumps({
        "inference": InferenceConfig(gpus=0, batch_size=8, amp="off").model_dump(mode="json"),
        "audio": AUDIO.model_dump(mode="json"),
        "text": TextConfig().model_dump(mode="json"),
    })  # fmt: skip
    argv = [
        "--section", payload,
        "--fastpitch", str(save_fastpitch_file(root / "fastpitch.pt")),
        "--vocoder", str(save_hifigan_file(root / "hifigan.pt")),
        "--phrases", str(phrase_file(root / "phrases.txt", count)),
        "--out-dir", str(root / "inference"),
    ]  # fmt: skip
    parser = argparse.ArgumentParser()
    synthesize.add_arguments(parser)
    start = time.perf_counter()
    synthesize.run(parser.parse_args(argv))
    seconds = time.perf_counter() - start
    written = sum(1 for _ in (root / "inference").glob("*.wav"))
    assert written == count, f"{written} WAVs for {count} phrases"
    peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # kilobytes on Linux
    return {"phrases": count, "peak_rss_mb": round(peak_kb / 1024, 1), "seconds": round(seconds, 1)}


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("count", type=int)
    parser.add_argument("folder", type=Path, nargs="?")
    args = parser.parse_args(argv)
    if args.folder is not None:
        args.folder.mkdir(parents=True, exist_ok=True)
        print(json.dumps(measure(args.count, args.folder)))
        return
    with tempfile.TemporaryDirectory() as folder:
        print(json.dumps(measure(args.count, Path(folder))))


if __name__ == "__main__":
    main(sys.argv[1:])
