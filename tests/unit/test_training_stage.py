"""The sequence every training stage runs (stages.training_stage), with a stand-in trainer: manifests,
datasets, checkpoints and their resume hash, the tracking run, the outputs and the summary line."""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tts_pipeline.config import LoopSettings
from tts_pipeline.data.manifest import manifest_path
from tts_pipeline.errors import UserError
from tts_pipeline.files import write_jsonl
from tts_pipeline.stages import training_stage
from tts_pipeline.stages.training_stage import TrainingRun, TrainingStage, run_training

SETTINGS = LoopSettings.with_defaults(epochs=1, batch_size=1, gpus=0, keep_checkpoints=2)()


@dataclass
class Result:
    step: int
    epoch: int
    metrics: dict[str, Any]


@dataclass
class FakeSink:
    """A tracking run that records what it is given."""

    run_id: str
    active: bool = False
    tags: dict[str, Any] = field(default_factory=dict)
    artifacts: list[tuple[str, str | None]] = field(default_factory=list)

    def set_tags(self, tags: dict[str, Any]) -> None:
        self.tags.update(tags)

    def log_artifact(self, path: Path, folder: str | None = None) -> None:
        self.artifacts.append((Path(path).name, folder))


@dataclass
class Trainer:
    """A stand-in for a trainer and its model file: each fit adds 3 steps and checkpoints them."""

    calls: list[tuple[str, Any]] = field(default_factory=list)

    def datasets(self, train: list, val: list) -> tuple[list, list | None]:
        self.calls.append(("datasets", ([r.id for r in train], [r.id for r in val])))
        return train, val or None

    def fit(self, run: TrainingRun, train_set: list, val_set: list | None, **prepared: Any) -> Result:
        start = run.io.checkpoint.step if run.io.checkpoint is not None else 0
        self.calls.append(("fit", (start, len(train_set), val_set is not None, prepared, run.io.run_id)))
        run.io.manager.save(start + 3, 1, {}, run_id=run.io.run_id)
        return Result(step=start + 3, epoch=1, metrics={"val_loss_start": 2.0, "val_loss": 1.0, "frames_per_s": 5.0,
                                                        "n_params": 7})  # fmt: skip

    def save(self, result: Result, run: TrainingRun) -> None:
        self.calls.append(("save", result.step))


def make_manifests(root: Path, n_train: int = 2, n_val: int = 1) -> Path:
    manifest_dir = root / "demo" / "data"
    for split, count in (("train", n_train), ("val", n_val)):
        records = [{"id": f"{split}-{i}", "wav": f"{split}-{i}.wav", "text": "a", "n_samples": 0} for i in range(count)]
        write_jsonl(manifest_path(manifest_dir, split), records)
    return manifest_dir


def stage_args(root: Path, manifest_dir: Path) -> argparse.Namespace:
    return argparse.Namespace(
        manifest_dir=manifest_dir,
        work_dir=root / "work",
        model=root / "out" / "model.pt",
        metrics=root / "out" / "metrics.json",
        gpus=None,
    )


@pytest.fixture
def tracked_runs(monkeypatch) -> list[dict[str, Any]]:
    """Every tracking run the skeleton opens, with what it was opened with and its sink."""
    runs: list[dict[str, Any]] = []

    @contextlib.contextmanager
    def fake_tracked(stage: str, payload: dict, **options: Any):
        sink = FakeSink(run_id=options["run_id"] or f"run-{len(runs) + 1}")
        runs.append({"stage": stage, "payload": payload, **options, "sink": sink})
        yield sink

    monkeypatch.setattr(training_stage, "tracked", fake_tracked)
    return runs


def test_a_stage_trains_writes_its_outputs_then_resumes_in_the_same_run(tmp_path, tracked_runs, caplog):
    manifest_dir = make_manifests(tmp_path)
    trainer = Trainer()

    def stage(resume_hash: str = "h1") -> TrainingStage:
        return TrainingStage(
            name="train_fake",
            section="fake",
            settings=SETTINGS,
            resume_hash=resume_hash,
            datasets=trainer.datasets,
            fit=trainer.fit,
            save=trainer.save,
            tags={"mode": "base"},
            extra_metrics={"symbols": "characters"},
            tag_parameter_count=True,
        )

    args = stage_args(tmp_path, manifest_dir)
    with caplog.at_level(logging.INFO, logger="tts_pipeline"):
        run_training(args, {"fake": {"epochs": 1}}, stage())
    assert trainer.calls == [
        ("datasets", (["train-0", "train-1"], ["val-0"])),
        ("fit", (0, 2, True, {}, "run-1")),
        ("save", 3),
    ]
    first = tracked_runs[0]
    assert first["stage"] == "train_fake" and first["payload"] == {"fake": {"epochs": 1}}
    assert first["dataset"] == "demo" and first["manifest_dir"] == manifest_dir and first["run_id"] is None
    assert first["tags"] == {"device": "cpu", "world_size": "1", "mode": "base"}
    assert first["sink"].tags == {"n_params": 7}
    assert first["sink"].artifacts == [("metrics.json", None), ("model.pt", "model")]
    metrics = json.loads(args.metrics.read_text())
    assert metrics == {"val_loss_start": 2.0, "val_loss": 1.0, "frames_per_s": 5.0, "n_params": 7,
                       "symbols": "characters"}  # fmt: skip
    summary = [record for record in caplog.records if record.name == "tts_pipeline.stages.train_fake"]
    assert [record.getMessage() for record in summary] == [
        "train_fake: step 3, epoch 1, val loss 2 -> 1, 5 frames/s, 7 parameters"
    ]

    # the next run continues from the checkpoint, in the same tracking run
    trainer.calls.clear()
    run_training(args, {"fake": {"epochs": 2}}, stage())
    assert trainer.calls[1:] == [("fit", (3, 2, True, {}, "run-1")), ("save", 6)]
    assert tracked_runs[1]["run_id"] == "run-1"

    # other settings that shape training: a fresh start, the old checkpoints set aside
    trainer.calls.clear()
    run_training(args, {"fake": {"epochs": 2, "seed": 1}}, stage(resume_hash="h2"))
    assert trainer.calls[1:] == [("fit", (0, 2, True, {}, "run-3")), ("save", 3)]

    # other data (a rerun because the corpus changed): a fresh start too, not the old training finished
    make_manifests(tmp_path, n_train=3)
    trainer.calls.clear()
    run_training(args, {"fake": {"epochs": 2, "seed": 1}}, stage(resume_hash="h2"))
    assert trainer.calls[1:] == [("fit", (0, 3, True, {}, "run-4")), ("save", 3)]


def test_a_single_process_stage_prepares_before_tracking_under_its_own_name(tmp_path, tracked_runs):
    manifest_dir = make_manifests(tmp_path, n_val=0)
    trainer = Trainer()
    prepared_before = []

    def prepare(run: TrainingRun) -> dict[str, Any]:
        prepared_before.append((run.io.checkpoint, run.io.sink, len(tracked_runs), run.records["train"][0].id))
        return {"init": "weights"}

    stage = TrainingStage(
        name="train_fake",
        section="fake",
        settings=SETTINGS,
        resume_hash="h",
        datasets=trainer.datasets,
        fit=trainer.fit,
        save=trainer.save,
        tracked_as="finetune_fake",
        single_process=True,
        prepare=prepare,
    )
    run_training(stage_args(tmp_path, manifest_dir), {}, stage)
    assert prepared_before == [(None, None, 0, "train-0")]
    assert trainer.calls[1] == ("fit", (0, 2, False, {"init": "weights"}, "run-1"))
    (tracked,) = tracked_runs
    assert tracked["stage"] == "finetune_fake" and tracked["tags"] == {"device": "cpu"}
    assert tracked["sink"].tags == {}  # no parameter count asked for


def test_an_empty_train_manifest_stops_the_stage_before_anything_is_built(tmp_path, tracked_runs):
    manifest_dir = make_manifests(tmp_path, n_train=0)
    trainer = Trainer()
    stage = TrainingStage("train_fake", "fake", SETTINGS, "h", trainer.datasets, trainer.fit, trainer.save)
    with pytest.raises(UserError, match=r"train_fake: the train manifest in .* lists no utterances"):
        run_training(stage_args(tmp_path, manifest_dir), {}, stage)
    assert trainer.calls == [] and tracked_runs == [] and not (tmp_path / "work").exists()


def test_gpus_come_from_the_section_unless_the_command_line_names_them(tmp_path, tracked_runs, monkeypatch):
    asked: list[tuple[int, str]] = []

    @contextlib.contextmanager
    def fake_session(gpus: int, *, what: str):
        from tts_pipeline.training.distributed import DistributedContext

        asked.append((gpus, what))
        yield DistributedContext()

    monkeypatch.setattr("tts_pipeline.training.distributed.distributed_session", fake_session)
    manifest_dir = make_manifests(tmp_path)
    trainer = Trainer()
    settings = LoopSettings.with_defaults(epochs=1, batch_size=1, gpus=3)()
    stage = TrainingStage("train_fake", "fake", settings, "h", trainer.datasets, trainer.fit, trainer.save)
    args = stage_args(tmp_path, manifest_dir)
    run_training(args, {}, stage)
    args.gpus = 0
    run_training(args, {}, stage)
    assert asked == [(3, "fake.gpus"), (0, "fake.gpus")]
