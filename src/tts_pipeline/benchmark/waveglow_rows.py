"""WaveGlow's rows in the benchmark report, beside HiFi-GAN's: when the DAG builds a WaveGlow (trained or
given), the benchmark times FastPitch + WaveGlow as it times FastPitch + HiFi-GAN (``speed.waveglow_rows``,
the same columns: NVIDIA's table layout per vocoder), measures its mel L1 on the same mels (a
``waveglow`` row of the vocoder table) and adds two rows to the intelligibility table
(``waveglow_ground_truth``: copy synthesis; ``tts_waveglow``: FastPitch + WaveGlow from the texts).

Speed rows name the vocoder's time ``vocoder_...`` whichever vocoder ran (the synthesizer's timed
``vocoder`` step); the tables here head it WaveGlow.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tts_pipeline.benchmark.report import Column, component_columns, render_table

# The per-model table's components (those of document.COMPONENTS) and how its headers name them.
COMPONENT_HEADERS = {"fastpitch": "FastPitch", "vocoder": "WaveGlow"}

# Intelligibility rows (names and the words of the table).
GROUND_TRUTH_ROW = "waveglow_ground_truth"
TTS_ROW = "tts_waveglow"
ROW_DESCRIPTIONS = {
    GROUND_TRUTH_ROW: "WaveGlow on ground-truth mels (copy synthesis)",
    TTS_ROW: "FastPitch + WaveGlow (full TTS, fp32)",
}
# (neural row, Griffin-Lim row on the same mels, what the mels are): intelligibility.findings' pairs
COMPARISONS = (
    (GROUND_TRUTH_ROW, "griffin_lim_ground_truth", "ground-truth mels"),
    (TTS_ROW, "griffin_lim_fastpitch", "FastPitch mels"),
)
VOCODER_NAME = "waveglow"  # the vocoder key of the mel L1 table (and of copy synthesis)


def speed_markdown(report: Mapping[str, Any], speed_columns: tuple[Column, ...], notes: str) -> list[str]:
    """The section ``Inference speed: FastPitch + WaveGlow`` when the report has WaveGlow rows, else ``[]``."""
    rows = report["speed"].get("waveglow_rows")
    if not rows:
        return []
    sigma = report["settings"].get("waveglow_sigma")
    per_model = component_columns(("fastpitch", "vocoder"), COMPONENT_HEADERS)
    return [
        "## Inference speed: FastPitch + WaveGlow",
        "",
        f"The same phrase, calls and precisions as above, with WaveGlow as the vocoder (sigma {sigma:g}, "
        f"model {report['models'].get('waveglow')}).",
        "",
        render_table(rows, speed_columns),
        notes.replace("FastPitch + HiFi-GAN", "FastPitch + WaveGlow"),
        "",
        "Per model (seconds per call):",
        "",
        render_table(rows, per_model),
        "",
    ]
