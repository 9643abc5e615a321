"""Pictures that show the features are right: mel with pitch, attention with the hard path, durations.

Every function returns a matplotlib ``Figure`` (Agg backend, no display needed); ``save_figure`` writes
a PNG atomically so a stage can log it to MLflow and the Snakemake report can embed it.
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # headless: stages run on servers and in CI

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib import ticker  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from tts_pipeline.files import atomic_path  # noqa: E402


def save_figure(figure: Figure, path: str | Path, dpi: int = 110) -> Path:
    """Write ``figure`` as PNG atomically and close it."""
    path = Path(path)
    with atomic_path(path) as tmp:
        figure.savefig(tmp, format="png", dpi=dpi, bbox_inches="tight")
    plt.close(figure)
    return path


def mel_with_pitch(mel: np.ndarray, pitch: np.ndarray, frame_period_s: float, title: str = "") -> Figure:
    """Log-mel spectrogram with the f0 track drawn over it on a second axis.

    Args:
        mel: (n_mels, T) log-mel.
        pitch: (T,) f0 in Hz, 0 where unvoiced (drawn as gaps).
        frame_period_s: hop / sampling rate.
    """
    n_frames = mel.shape[1]
    times = np.arange(n_frames) * frame_period_s
    figure, axis = plt.subplots(figsize=(10, 3.5))
    extent = (0, n_frames * frame_period_s, 0, mel.shape[0])
    axis.imshow(mel, origin="lower", aspect="auto", cmap="magma", extent=extent)
    axis.set_xlabel("time (s)")
    axis.set_ylabel("mel channel")
    f0_axis = axis.twinx()
    voiced = np.where(pitch > 0, pitch, np.nan)
    f0_axis.plot(times, voiced, color="cyan", linewidth=1.5, label="f0")
    f0_axis.set_ylabel("f0 (Hz)")
    if np.isfinite(voiced).any():
        f0_axis.set_ylim(0, float(np.nanmax(voiced)) * 1.2)
    axis.set_title(title)
    return figure


def alignment(
    attention: np.ndarray,
    durations: np.ndarray,
    symbols: Sequence[str],
    title: str = "",
    path_label: str = "hard path (MAS)",
) -> Figure:
    """Soft attention with the hard path (the durations, ``path_label`` in the legend) drawn over it.

    Args:
        attention: (T, L) soft attention, rows sum to 1 over the L symbols.
        durations: (L,) frames per symbol of the hard path, summing to T.
        symbols: L labels for the y axis.
    """
    n_frames, n_symbols = attention.shape
    # 0.17 inch per symbol row keeps 8 pt labels legible without overlapping.
    figure, axis = plt.subplots(figsize=(11, max(3.5, n_symbols * 0.17 + 1.2)))
    image = axis.imshow(attention.T, origin="lower", aspect="auto", cmap="viridis", interpolation="nearest")
    token_of_frame = np.repeat(np.arange(n_symbols), durations)
    axis.plot(np.arange(n_frames), token_of_frame, color="red", linewidth=1.0, label=path_label)
    axis.set_yticks(np.arange(n_symbols))
    axis.set_yticklabels([symbol if symbol != " " else "␣" for symbol in symbols], fontsize=8)
    axis.set_ylabel("input symbol")
    axis.set_xlabel("mel frame")
    axis.set_title(title)
    axis.legend(loc="upper left", fontsize=8)
    figure.colorbar(image, ax=axis, label="soft attention weight", fraction=0.03, pad=0.01)
    return figure


def durations_over_waveform(
    audio: np.ndarray, sampling_rate: int, durations: np.ndarray, symbols: Sequence[str], hop: int, title: str = ""
) -> Figure:
    """The waveform with a line at every symbol boundary and each symbol written in its span.

    Args:
        audio: (N,) float waveform.
        durations: (L,) frames per symbol.
        symbols: L labels.
        hop: samples per mel frame.
    """
    times = np.arange(audio.size) / sampling_rate
    boundaries = np.concatenate([[0], np.cumsum(durations)]) * hop / sampling_rate
    figure, axis = plt.subplots(figsize=(12, 3))
    axis.plot(times, audio, color="0.35", linewidth=0.5)
    for start, end, symbol in zip(boundaries[:-1], boundaries[1:], symbols, strict=True):
        axis.axvline(start, color="tab:blue", linewidth=0.4, alpha=0.6)
        if end > start:
            axis.text(
                (start + end) / 2,
                0.9,
                symbol if symbol != " " else "␣",
                ha="center",
                va="top",
                fontsize=6,
                transform=axis.get_xaxis_transform(),
            )
    axis.set_xlim(0, times[-1] if times.size else 1)
    axis.set_xlabel("time (s)")
    axis.set_title(title)
    return figure


def mel_comparison(reference: np.ndarray, generated: np.ndarray, frame_period_s: float, title: str = "") -> Figure:
    """Ground-truth and generated log-mels one above the other, on one colour scale.

    Args:
        reference: (n_mels, T) log-mel of the real audio (the generator's input).
        generated: (n_mels, T') log-mel of the generated audio (T' may differ from T by a frame).
        frame_period_s: hop / sampling rate.
    """
    low = float(min(reference.min(), generated.min()))
    high = float(max(reference.max(), generated.max()))
    figure, axes = plt.subplots(2, 1, figsize=(10, 5.5), sharex=True)
    for axis, mel, label in zip(axes, (reference, generated), ("ground truth", "generated"), strict=True):
        extent = (0, mel.shape[1] * frame_period_s, 0, mel.shape[0])
        image = axis.imshow(mel, origin="lower", aspect="auto", cmap="magma", extent=extent, vmin=low, vmax=high)
        axis.set_ylabel(f"{label}\nmel channel")
    axes[-1].set_xlabel("time (s)")
    figure.colorbar(image, ax=list(axes), label="log magnitude")
    axes[0].set_title(title)
    return figure


def token_comparison(
    symbols: Sequence[str], panels: Sequence[tuple[str, np.ndarray, np.ndarray]], title: str = ""
) -> Figure:
    """Per-token target and predicted values, one panel per quantity (e.g. pitch in Hz, durations).

    Args:
        symbols: L labels for the x axis.
        panels: ``(label, target (L,), predicted (L,))`` per panel; NaN in a target leaves a gap
            (e.g. an unvoiced token's pitch).
    """
    positions = np.arange(len(symbols))
    figure, axes = plt.subplots(len(panels), 1, figsize=(max(8.0, len(symbols) * 0.18), 2.6 * len(panels)),
                                sharex=True, squeeze=False)  # fmt: skip
    for axis, (label, target, predicted) in zip(axes[:, 0], panels, strict=True):
        axis.step(positions, target, where="mid", color="tab:blue", linewidth=1.2, label="target")
        axis.step(positions, predicted, where="mid", color="tab:orange", linewidth=1.2, label="predicted")
        axis.set_ylabel(label)
        axis.legend(loc="upper right", fontsize=7)
    bottom = axes[-1, 0]
    bottom.set_xticks(positions)
    bottom.set_xticklabels([symbol if symbol != " " else "␣" for symbol in symbols], fontsize=6)
    bottom.set_xlabel("token")
    axes[0, 0].set_title(title)
    return figure


def loss_curves(histories: dict[str, Sequence[dict[str, float]]], keys: dict[str, Sequence[str]]) -> Figure:
    """One panel per training stage: the named losses against the optimiser step.

    Args:
        histories: stage name -> its ``metrics.json`` history (one dict per epoch or validation, each
            with ``step``).
        keys: stage name -> the history keys to draw (a key missing from an entry leaves a gap).
    """
    stages = [stage for stage in histories if histories[stage]]
    figure, axes = plt.subplots(1, max(len(stages), 1), figsize=(4.5 * max(len(stages), 1), 3.5), squeeze=False)
    for axis, stage in zip(axes[0], stages, strict=False):
        history = histories[stage]
        for key in keys.get(stage, ()):
            points = [(entry["step"], entry[key]) for entry in history if entry.get(key) is not None]
            if points:
                steps, values = zip(*points, strict=True)
                axis.plot(steps, values, marker="o" if len(points) < 20 else None, markersize=3, label=key)
        axis.set_title(stage)
        axis.set_xlabel("optimiser step")
        axis.set_ylabel("loss (log scale)")
        axis.set_yscale("log")
        # Ticks at 1, 2 and 5 of each decade, written plainly (0.2, 5, 20): losses span a decade or
        # two, where matplotlib's default leaves one labelled tick or labels in 10^x notation.
        axis.yaxis.set_major_locator(ticker.LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
        axis.yaxis.set_major_formatter(ticker.FuncFormatter(lambda value, _: f"{value:g}"))
        axis.yaxis.set_minor_formatter(ticker.NullFormatter())
        axis.grid(alpha=0.3, which="both")
        axis.legend(fontsize=8)
    figure.tight_layout()
    return figure


def spectrogram_panels(panels: dict[str, np.ndarray], frame_period_s: float, title: str = "") -> Figure:
    """Log-mels of the same sentence side by side (one column each, one colour scale), so that a reader
    sees at a glance whether a synthesised version has the recording's formants, harmonics and pauses.

    Args:
        panels: Label -> ``(n_mels, T_i)`` log-mel; lengths may differ (free-running TTS).
        frame_period_s: hop / sampling rate.
    """
    if not panels:
        raise ValueError("spectrogram_panels: no panel")
    low = min(float(mel.min()) for mel in panels.values())
    high = max(float(mel.max()) for mel in panels.values())
    figure, axes = plt.subplots(
        1, len(panels), figsize=(3.6 * len(panels), 3.8), sharey=True, squeeze=False, layout="constrained"
    )
    for axis, (label, mel) in zip(axes[0], panels.items(), strict=True):
        extent = (0, mel.shape[1] * frame_period_s, 0, mel.shape[0])
        image = axis.imshow(mel, origin="lower", aspect="auto", cmap="magma", extent=extent, vmin=low, vmax=high)
        axis.set_title(textwrap.fill(label, 34), fontsize=9)
        axis.set_xlabel("time (s)")
    axes[0][0].set_ylabel("mel channel")
    figure.colorbar(image, ax=list(axes[0]), label="log magnitude")
    if title:
        figure.suptitle(title, fontsize=10)
    return figure
