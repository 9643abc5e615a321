"""Every path a rule reads or writes (DESIGN.md section 3): rule files name them, they never build them."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from tts_pipeline.config import PipelineConfig
from tts_pipeline.data.feature_layout import FeatureLayout


@dataclass(frozen=True)
class Paths:
    """Every path a rule reads or writes; rule files name them, they never build them."""

    config: PipelineConfig

    @property
    def experiment(self) -> Path:
        return self.config.experiment_dir

    @property
    def corpus_dir(self) -> Path:
        return Path(self.config.resources_dir) / self.config.corpus.name

    @property
    def corpus_record(self) -> str:
        """Written last by ``corpus``: where the corpus is and what it holds."""
        return str(self.corpus_dir / "corpus.json")

    @property
    def downloads(self) -> str:
        return str(Path(self.config.resources_dir) / "downloads")

    @property
    def data_dir(self) -> str:
        return str(self.experiment / "data")

    def manifest(self, split: str) -> str:
        from tts_pipeline.data.manifest import manifest_path

        return str(manifest_path(self.data_dir, split))

    @property
    def validation(self) -> str:
        return str(self.experiment / "data" / "validation.json")

    @property
    def resampled(self) -> str:
        return str(self.experiment / "data" / "resampled")

    # features (mels, pitch, durations); the per-utterance folders are not Snakemake outputs, so a
    # killed extraction keeps its finished files. The index files are the declared outputs.
    @property
    def features_dir(self) -> str:
        return str(self.experiment / "features")

    @property
    def features(self) -> FeatureLayout:
        return FeatureLayout(Path(self.features_dir))

    @property
    def pitch_stats(self) -> str:
        return str(self.features.pitch_stats)

    @property
    def features_index(self) -> str:
        """One line per utterance: id, split, n_frames (written last by ``features``)."""
        return str(self.features.features_index)

    @property
    def aligner_model(self) -> str:
        return str(self.experiment / "aligner" / "model.pt")

    @property
    def aligner_metrics(self) -> str:
        return str(self.experiment / "aligner" / "metrics.json")

    @property
    def durations_index(self) -> str:
        """Symbol table, per-utterance summary and alignment quality (written last by ``durations``)."""
        return str(self.features.durations_index)

    @property
    def hifigan_model(self) -> str:
        return str(self.experiment / "hifigan" / "model.pt")

    @property
    def hifigan_metrics(self) -> str:
        return str(self.experiment / "hifigan" / "metrics.json")

    @property
    def hifigan_state(self) -> str:
        """The final training checkpoint (generator, discriminators, optimisers): fine-tuning's start."""
        return str(self.experiment / "hifigan" / "training_state.pt")

    @property
    def fastpitch_model(self) -> str:
        return str(self.experiment / "fastpitch" / "model.pt")

    @property
    def fastpitch_metrics(self) -> str:
        return str(self.experiment / "fastpitch" / "metrics.json")

    @property
    def fastpitch_mels_dir(self) -> str:
        return str(self.experiment / "fastpitch_mels")

    @property
    def fastpitch_mels_index(self) -> str:
        """Written last by ``extract_fastpitch_mels``: count, frames, timing, model hash."""
        return str(self.experiment / "fastpitch_mels" / "index.json")

    @property
    def hifigan_finetuned_model(self) -> str:
        return str(self.experiment / "hifigan_finetuned" / "model.pt")

    @property
    def hifigan_finetuned_metrics(self) -> str:
        return str(self.experiment / "hifigan_finetuned" / "metrics.json")

    @property
    def inference_dir(self) -> str:
        return str(self.experiment / "inference")

    @property
    def inference_manifest(self) -> str:
        """Written last by ``synthesize``, beside its ``<name>.wav`` files."""
        return str(Path(self.inference_dir) / "manifest.jsonl")

    @property
    def benchmark_dir(self) -> str:
        return str(self.experiment / "benchmark")

    @property
    def benchmark_json(self) -> str:
        return str(Path(self.benchmark_dir) / "report.json")

    @property
    def benchmark_md(self) -> str:
        return str(Path(self.benchmark_dir) / "report.md")

    @property
    def html_report(self) -> str:
        """``snakemake --report`` writes it (the Makefile's demo target does, after the run)."""
        return str(self.experiment / "report.html")

    @property
    def report_dir(self) -> str:
        return str(self.experiment / "report")

    def report_page(self, name: str) -> str:
        """A page or figure of the HTML report (``report_pages`` writes them)."""
        return str(Path(self.report_dir) / name)

    # the exported voice (export_voice): model files named by kind and format, the checks, the card
    @property
    def export_dir(self) -> str:
        return str(self.experiment / "export")

    def export_file(self, name: str) -> str:
        """A file of the export folder: ``fastpitch.onnx``, ``hifigan.ts``, ``verification.json``, ``voice.json``
        (written last by ``export_voice``)."""
        return str(Path(self.export_dir) / name)

    # WaveGlow, the optional second vocoder (FastPitch 1.0's path)
    @property
    def waveglow_model(self) -> str:
        return str(self.experiment / "waveglow" / "model.pt")

    @property
    def waveglow_metrics(self) -> str:
        return str(self.experiment / "waveglow" / "metrics.json")

    @property
    def tacotron2_model(self) -> str:
        return str(self.experiment / "tacotron2" / "model.pt")

    @property
    def tacotron2_metrics(self) -> str:
        return str(self.experiment / "tacotron2" / "metrics.json")

    def work(self, stage: str) -> str:
        """Resumable state of a stage (checkpoints), outside its declared outputs."""
        return str(self.experiment / "work" / stage)

    @property
    def stop_file(self) -> str:
        """Exists while a user's stop asks the running jobs to checkpoint and stop (workflow.stopping)."""
        return str(self.experiment / "work" / "STOP")

    def log(self, stage: str) -> str:
        return str(self.experiment / "logs" / f"{stage}.log")

    def benchmark(self, stage: str) -> str:
        return str(self.experiment / "benchmarks" / f"{stage}.tsv")
