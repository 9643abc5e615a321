"""The train_tacotron2 stage and its trainer on a tiny synthetic features folder: two steps write a model
file that rebuilds alone, a rerun resumes (also after SIGKILL), a changed config restarts, NVIDIA's
annealed learning rate, and the durations stage with ``durations.source: tacotron2``."""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

from tts_pipeline.config import AudioConfig, Tacotron2SectionConfig
from tts_pipeline.data.feature_layout import FeatureLayout
from tts_pipeline.data.splits import SPLIT_NAMES
from tts_pipeline.features.durations_from_tacotron2 import durations_from_alignment
from tts_pipeline.files import save_npy, write_json, write_jsonl
from tts_pipeline.models.tacotron2 import load_tacotron2, save_tacotron2
from tts_pipeline.stages import durations as durations_stage
from tts_pipeline.stages import train_tacotron2 as stage
from tts_pipeline.text import encode, get_symbols
from tts_pipeline.training import tacotron2 as trainer
from tts_pipeline.training.checkpoint import CheckpointManager, load_checkpoint

from ..conftest import REPO
from ..stage_helpers import kill_after_first_checkpoint, rerun, run_in_process

AUDIO = AudioConfig()
N_MELS = 16
TINY: dict[str, Any] = {
    "symbols_embedding_dim": 16,
    "encoder_embedding_dim": 16,
    "encoder_n_convolutions": 1,
    "attention_rnn_dim": 16,
    "attention_dim": 8,
    "attention_location_n_filters": 4,
    "attention_location_kernel_size": 5,
    "decoder_rnn_dim": 16,
    "prenet_dim": 8,
    "postnet_embedding_dim": 8,
    "postnet_n_convolutions": 2,
    "global_batch_size": 4,
    "batch_size": 2,
    "gpus": 0,
    "num_workers": 0,
    "epochs": 100,
    "validation_every_n_epochs": 1,
    "checkpoint_every_n_epochs": 1,
}
TEXTS = ("a cat.", "the dog ran", "hello there", "one two", "yes, no", "big red box")
TRACKING_ENV = ("TTS_TRACKING", "TTS_TRACKING_URI", "TTS_MLFLOW_EXPERIMENT", "TTS_PARENT_RUN_ID")


@pytest.fixture(autouse=True)
def quiet(monkeypatch):
    torch.set_num_threads(1)
    for variable in TRACKING_ENV:
        monkeypatch.delenv(variable, raising=False)


def make_corpus(root: Path, counts: dict[str, int] | None = None) -> None:
    """Manifests (``root/data``), and mels and pitch (``root/features``) of random utterances, 2 frames
    per character of their text."""
    rng = np.random.default_rng(0)
    features = FeatureLayout(root / "features")
    for split, count in (counts or {"train": 4, "val": 2, "test": 1}).items():
        records = []
        for index in range(count):
            utterance_id, text = f"{split}-{index}", TEXTS[index % len(TEXTS)]
            n_frames = 2 * len(text) + index
            save_npy(features.mel(utterance_id), rng.normal(-5, 2, (N_MELS, n_frames)).astype(np.float32))
            pitch = np.where(rng.random(n_frames) < 0.7, rng.uniform(100, 250, n_frames), 0.0).astype(np.float32)
            save_npy(features.pitch(utterance_id), pitch)
            record = {"id": utterance_id, "wav": f"{utterance_id}.wav", "text": text, "n_samples": 256 * n_frames}
            records.append(record)
        write_jsonl(root / "data" / f"manifest.{split}.jsonl", records)


def section(**tacotron2: Any) -> str:
    return json.dumps(
        {"tacotron2": {**TINY, **tacotron2}, "audio.n_mel_channels": N_MELS, "text.symbol_set": "english_basic"}
    )


def stage_argv(root: Path, payload: str) -> list[str]:
    return [
        "--section", payload,
        "--features-dir", str(root / "features"),
        "--manifest-dir", str(root / "data"),
        "--work-dir", str(root / "work" / "train_tacotron2"),
        "--model", str(root / "tacotron2" / "model.pt"),
        "--metrics", str(root / "tacotron2" / "metrics.json"),
    ]  # fmt: skip


def run_stage(argv: list[str]) -> dict:
    args = run_in_process(stage, argv)
    return json.loads(Path(args.metrics).read_text(encoding="utf-8"))


@pytest.fixture
def corpus(tmp_path) -> Path:
    make_corpus(tmp_path)
    return tmp_path


def test_two_steps_write_a_model_that_rebuilds_alone_then_resume_continues(corpus):
    metrics = run_stage(stage_argv(corpus, section(max_steps=2)))
    assert metrics["step"] == 2 and metrics["resumed_from_step"] == 0 and metrics["steps_this_run"] == 2
    assert metrics["accumulation"] == 2 and metrics["steps_per_epoch"] == 1 and metrics["epoch"] == 2
    for name in trainer.LOSS_NAMES:
        for key in (f"train_{name}_start", f"train_{name}", f"val_{name}_start", f"val_{name}"):
            assert math.isfinite(metrics[key]), key
    assert metrics["learning_rate"] == 1e-3 and metrics["symbols"] == "characters"

    model, info = load_tacotron2(corpus / "tacotron2" / "model.pt")
    assert info.step == 2 and info.extra["symbol_set"] == "english_basic"
    assert info.extra["symbol_table"] == get_symbols("english_basic") and not model.training
    assert model.cfg.n_symbols == len(get_symbols("english_basic")) and model.cfg.n_mel_channels == N_MELS
    assert sum(p.numel() for p in model.parameters()) == metrics["n_params"]
    saved = load_checkpoint(CheckpointManager(corpus / "work" / "train_tacotron2", "unused").paths()[-1])
    assert saved.step == 2
    for name, tensor in model.state_dict().items():
        torch.testing.assert_close(tensor, saved.states["model"][name])

    resumed = run_stage(stage_argv(corpus, section(max_steps=3)))
    assert resumed["step"] == 3 and resumed["resumed_from_step"] == 2 and resumed["steps_this_run"] == 1
    assert resumed["train_loss_start"] == metrics["train_loss_start"]
    # a trajectory key starts afresh
    assert run_stage(stage_argv(corpus, section(max_steps=1, learning_rate=2e-3)))["resumed_from_step"] == 0


@pytest.mark.slow
def test_sigkill_then_rerun_reaches_the_same_final_step(corpus):
    command = [sys.executable, "-m", "tts_pipeline", "train_tacotron2", *stage_argv(corpus, section(max_steps=40))]
    saved = kill_after_first_checkpoint(command, corpus / "work" / "train_tacotron2")
    assert not (corpus / "tacotron2" / "model.pt").exists()
    assert saved and saved[-1] < 40
    rerun(command)
    metrics = json.loads((corpus / "tacotron2" / "metrics.json").read_text())
    assert metrics["step"] == 40 and metrics["resumed_from_step"] == saved[-1]
    assert metrics["steps_this_run"] == 40 - saved[-1]


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("torchrun") is None, reason="needs torchrun")
def test_two_processes_split_the_global_batch(corpus):
    """DDP on 2 CPU processes: one micro-batch each makes the global batch, and rank 0 alone writes the
    outputs. (Its update cannot be compared with one process accumulating: the encoder and postnet
    dropout, fixed by NVIDIA's design, draws other masks on other ranks.)"""
    runner = corpus / "runner.py"
    runner.write_text("import sys\nfrom tts_pipeline import cli\ncli.main(sys.argv[1:])\n")
    env = {key: value for key, value in os.environ.items() if key not in TRACKING_ENV}
    env["OMP_NUM_THREADS"] = "1"
    command = ["torchrun", "--standalone", "--nproc_per_node=2", str(runner), "train_tacotron2"]
    argv = stage_argv(corpus, section(max_steps=2))
    subprocess.run([*command, *argv], cwd=REPO, env=env, check=True, capture_output=True, timeout=120)
    metrics = json.loads((corpus / "tacotron2" / "metrics.json").read_text())
    assert metrics["world_size"] == 2 and metrics["accumulation"] == 1 and metrics["step"] == 2
    assert math.isfinite(metrics["val_loss"]) and metrics["n_val"] == 2
    model, info = load_tacotron2(corpus / "tacotron2" / "model.pt")
    assert info.step == 2 and not model.training


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
@pytest.mark.parametrize("amp", ["off", "fp16", "bf16"])
def test_two_steps_on_cuda(corpus, amp):
    metrics = run_stage(stage_argv(corpus, section(max_steps=2, gpus=1, amp=amp)))
    assert metrics["device"].startswith("cuda") and metrics["step"] == 2 and math.isfinite(metrics["val_loss"])
    model, _ = load_tacotron2(corpus / "tacotron2" / "model.pt")
    assert next(model.parameters()).device.type == "cpu"


@pytest.mark.parametrize(
    ("factor", "epoch", "expected"),
    [(0.1, 1, 1e-3), (0.1, 501, 1e-4), (0.1, 1001, 1e-5), (0.3, 500, 1e-3), (0.3, 501, 3e-4), (0.3, 1001, 1e-4),
     (0.3, 1501, 3e-5)],
)  # fmt: skip
def test_the_rate_is_annealed_as_nvidia_counts_epochs(factor, epoch, expected):
    cfg = Tacotron2SectionConfig(anneal_factor=factor)
    assert trainer.annealed_rate(cfg, epoch) == pytest.approx(expected)


def test_config_rejects_shapes_that_cannot_build():
    with pytest.raises(ValueError, match="symbols_embedding_dim"):
        Tacotron2SectionConfig(symbols_embedding_dim=32, encoder_embedding_dim=64)
    with pytest.raises(ValueError, match="global_batch_size"):
        Tacotron2SectionConfig(global_batch_size=10, batch_size=4)


# --------------------------------------------------------------------------------------------------
# durations from Tacotron 2
# --------------------------------------------------------------------------------------------------


def durations_argv(root: Path, model: Path, batch_size: int = 2) -> list[str]:
    corpus_root = root / "corpus"
    corpus_root.mkdir(exist_ok=True)
    write_json(root / "corpus.json", {"name": "tiny", "root": str(corpus_root)})
    payload = {
        "durations": {"source": "tacotron2", "textgrid_dir": None, "textgrid_tier": "phones"},
        "audio": {**AUDIO.model_dump(mode="json"), "n_mel_channels": N_MELS},
        "text.symbol_set": "english_basic",
    }
    return [
        "--section", json.dumps(payload),
        "--manifest-dir", str(root / "data"),
        "--features-dir", str(root / "features"),
        "--tacotron2", str(model),
        "--corpus-record", str(root / "corpus.json"),
        "--index", str(root / "features" / "durations.json"),
        "--batch-size", str(batch_size),
    ]  # fmt: skip


def tiny_model(root: Path, n_mels: int = N_MELS, **model: Any) -> Path:
    """A random tiny Tacotron 2 model file (``model``: constructor arguments to override)."""
    from dataclasses import replace

    from tts_pipeline.models.tacotron2 import Tacotron2

    cfg = trainer.model_config(Tacotron2SectionConfig(**TINY), len(get_symbols("english_basic")), n_mels)
    torch.manual_seed(0)
    path = root / "tacotron2.pt"
    text = {"symbols": "characters", "symbol_set": "english_basic", "symbol_table": get_symbols("english_basic")}
    save_tacotron2(path, Tacotron2(replace(cfg, **model)), step=0, epoch=0, extra=text)
    return path


def read_durations(root: Path) -> dict[str, np.ndarray]:
    layout = FeatureLayout(root / "features")
    return {path.stem: np.load(path) for path in sorted(layout.folder("durations").glob("*.npy"))}


def test_durations_stage_writes_counted_attention_durations_on_the_aligner_symbols(corpus):
    model = tiny_model(corpus)
    run_in_process(durations_stage, durations_argv(corpus, model, batch_size=3))
    layout = FeatureLayout(corpus / "features")
    index = json.loads(layout.durations_index.read_text())
    assert index["source"] == "tacotron2" and index["symbols_kind"] == "characters"
    assert index["symbols"] == get_symbols("english_basic")
    assert index["splits"]["train"]["n_utterances"] == 4
    for split in SPLIT_NAMES:
        for record in map(json.loads, (corpus / "data" / f"manifest.{split}.jsonl").read_text().splitlines()):
            durations = np.load(layout.durations(record["id"]))
            symbols = np.load(layout.symbols(record["id"]))
            n_frames = np.load(layout.mel(record["id"])).shape[1]
            assert durations.dtype == np.int32 and int(durations.sum()) == n_frames
            # the symbols FastPitch trains on are the aligner path's
            assert symbols.tolist() == encode(record["text"], "characters", "english_basic")
            assert np.load(layout.symbol_pitch(record["id"])).shape == durations.shape
    # the report's alignment figure: Tacotron 2's attention with the counted durations, for val utterances
    val_ids = [json.loads(line)["id"] for line in (corpus / "data" / "manifest.val.jsonl").read_text().splitlines()]
    assert (layout.plots / f"{val_ids[0]}_alignment.png").is_file()
    # the prenet's dropout (on in eval mode, as NVIDIA's) draws from a fixed seed: a rerun gives the same
    first = read_durations(corpus)
    run_in_process(durations_stage, durations_argv(corpus, model, batch_size=3))
    assert all(np.array_equal(durations, first[key]) for key, durations in read_durations(corpus).items())


def test_training_longer_after_its_durations_were_written_resumes(corpus):
    """The durations stage writes into the features folder Tacotron 2 trains on; the durations are its
    output, not its input, so they must not make a rerun with more steps start afresh."""
    run_stage(stage_argv(corpus, section(max_steps=2)))
    run_in_process(durations_stage, durations_argv(corpus, corpus / "tacotron2" / "model.pt", batch_size=3))
    assert (corpus / "features" / "durations.json").is_file()
    resumed = run_stage(stage_argv(corpus, section(max_steps=3)))
    assert resumed["resumed_from_step"] == 2 and resumed["step"] == 3
    assert not (corpus / "work" / "train_tacotron2" / "superseded").exists()


def test_two_frames_a_step_train_and_give_durations_in_whole_steps(corpus):
    metrics = run_stage(stage_argv(corpus, section(max_steps=2, n_frames_per_step=2)))
    assert metrics["step"] == 2 and math.isfinite(metrics["train_loss"])
    model, _ = load_tacotron2(corpus / "tacotron2" / "model.pt")
    assert model.cfg.n_frames_per_step == 2
    run_in_process(durations_stage, durations_argv(corpus, corpus / "tacotron2" / "model.pt", batch_size=3))
    layout = FeatureLayout(corpus / "features")
    for record in map(json.loads, (corpus / "data" / "manifest.train.jsonl").read_text().splitlines()):
        durations = np.load(layout.durations(record["id"]))
        n_frames = np.load(layout.mel(record["id"])).shape[1]
        assert int(durations.sum()) == n_frames
        # a step's two frames attend alike, so a symbol's frames start on a step: every boundary but
        # the utterance's end falls on an even frame
        boundaries = np.cumsum(durations)[:-1]
        assert (boundaries % 2 == 0).all(), (durations, n_frames)


def test_without_prenet_dropout_the_durations_do_not_depend_on_the_batch(corpus):
    model = tiny_model(corpus, p_prenet_dropout=0.0)
    run_in_process(durations_stage, durations_argv(corpus, model, batch_size=1))
    alone = read_durations(corpus)
    run_in_process(durations_stage, durations_argv(corpus, model, batch_size=4))
    batched = read_durations(corpus)
    assert alone.keys() == batched.keys() and len(alone) == 7
    assert all(np.array_equal(alone[key], batched[key]) for key in alone)


def test_a_hand_made_attention_gives_the_counted_durations():
    # frames (rows) over 4 symbols: symbol 2 never wins a frame, ties go to the first symbol
    attention = np.array(
        [
            [0.7, 0.2, 0.1, 0.0],
            [0.5, 0.4, 0.1, 0.0],
            [0.1, 0.6, 0.3, 0.0],
            [0.0, 0.3, 0.3, 0.4],
            [0.0, 0.1, 0.2, 0.7],
            [0.0, 0.5, 0.0, 0.5],
        ]
    )
    durations = durations_from_alignment(attention)
    assert durations.tolist() == [2, 2, 0, 2] and durations.dtype == np.int32
    assert int(durations.sum()) == attention.shape[0]
    with pytest.raises(ValueError, match="alignment"):
        durations_from_alignment(np.zeros((0, 3)))


def test_a_model_of_another_symbol_table_is_refused(corpus):
    from tts_pipeline.errors import UserError
    from tts_pipeline.models.tacotron2 import Tacotron2

    cfg = trainer.model_config(Tacotron2SectionConfig(**TINY), 40, N_MELS)
    path = corpus / "other.pt"
    save_tacotron2(path, Tacotron2(cfg), step=0, epoch=0)  # records no table: taken as text.symbol_set's
    with pytest.raises(UserError, match="40 symbols"):
        run_in_process(durations_stage, durations_argv(corpus, path))
    save_tacotron2(path, Tacotron2(cfg), step=0, epoch=0, extra={"symbol_set": "english_other"})
    with pytest.raises(UserError, match="symbol set 'english_other'"):
        run_in_process(durations_stage, durations_argv(corpus, path))


def test_alignment_error_compares_sources_side_by_side(tmp_path, capsys):
    """TextGrid durations and Tacotron 2's, each in its own features folder, against the same ground truth."""
    import shutil

    from tts_pipeline.commands import alignment_error

    from .test_durations_stage import N_MELS as TRUTH_MELS
    from .test_durations_stage import make_corpus as make_truth_corpus
    from .test_durations_stage import run_durations

    corpus = make_truth_corpus(tmp_path)
    run_durations(corpus, "textgrid")
    other = tmp_path / "tacotron2_features"
    for kind in ("mels", "pitch"):
        shutil.copytree(corpus.features_dir / kind, other / kind)
    model = tiny_model(tmp_path, n_mels=TRUTH_MELS)
    payload = {
        "durations": {"source": "tacotron2", "textgrid_dir": None, "textgrid_tier": "phones"},
        "audio": {"sampling_rate": 22050, "hop_length": 256, "n_mel_channels": TRUTH_MELS},
        "text.symbol_set": "english_basic",
    }
    run_in_process(durations_stage, [
        "--section", json.dumps(payload), "--manifest-dir", str(corpus.manifest_dir), "--features-dir", str(other),
        "--tacotron2", str(model), "--corpus-record", str(corpus.record), "--index", str(other / "durations.json"),
    ])  # fmt: skip
    capsys.readouterr()
    report = tmp_path / "report.json"
    run_in_process(alignment_error, [
        "--index", str(corpus.features_dir / "durations.json"), str(other / "durations.json"),
        "--manifest-dir", str(corpus.manifest_dir), "--corpus-record", str(corpus.record), "--split", "train",
        "--output", str(report),
    ])  # fmt: skip
    printed = capsys.readouterr().out
    rows = {line.split()[1]: line.split() for line in printed.splitlines()[-3:-1]}
    assert set(rows) == {"textgrid", "tacotron2"} and rows["tacotron2"][2] == "characters"
    assert rows["textgrid"][3] == "3/3" and float(rows["textgrid"][5]) == 0.0  # the truth's own phones
    # each row names its experiment: the folder above the features folder
    assert rows["textgrid"][0] == corpus.features_dir.parent.name and rows["tacotron2"][0] == tmp_path.name
    sources = json.loads(report.read_text())["sources"]
    assert [source["source"] for source in sources] == ["textgrid", "tacotron2"]
    # an untrained Tacotron 2 attends anywhere: its error is that of a guess, far above the truth's 0
    tacotron2 = sources[1]
    assert tacotron2["n_evaluated"] == 3 and tacotron2["boundary_error_ms"]["mean"] > 1.0


def test_nvidias_checkpoint_gives_the_durations_of_nvidias_own_attention():
    """On the NVIDIA fixture (tests/fixtures/nvidia_tacotron2), the extraction path's durations equal the
    counted argmax of NVIDIA's own alignments, without and with their eval-mode prenet dropout (same seed)."""
    from tts_pipeline.features.durations_from_tacotron2 import align_batch

    fixture = Path(__file__).parents[1] / "fixtures" / "nvidia_tacotron2"
    ref = torch.load(fixture / "reference_outputs.pt", weights_only=True)
    loaded, info = load_tacotron2(fixture / "checkpoint_Tacotron2_0.pt")
    assert info.extra["source_format"] and loaded.cfg.n_symbols == len(get_symbols("english_basic"))
    lengths = list(zip(ref["text_lengths"].tolist(), ref["mel_lengths"].tolist(), strict=True))
    texts = [ref["text"][row, :n_text].tolist() for row, (n_text, _) in enumerate(lengths)]
    mels = [ref["mels"][row, :, :n_mel].numpy() for row, (_, n_mel) in enumerate(lengths)]
    for prenet_dropout, key in ((0.0, "alignments"), (0.5, "dropout_alignments")):
        from tts_pipeline.models.tacotron2 import Tacotron2

        # NVIDIA's padding behaviour, so that the padded batch reproduces their outputs exactly
        model = Tacotron2.from_config(
            {**loaded.model_config(), "padding_invariant": False, "p_prenet_dropout": prenet_dropout}
        )
        model.load_state_dict(loaded.state_dict())
        torch.manual_seed(2024)
        ours = align_batch(model.eval(), texts, mels)
        for row, (n_text, n_mel) in enumerate(lengths):
            theirs = torch.histc(ref[key][row, :n_mel, :n_text].argmax(dim=1).float(), n_text, 0, n_text - 1)
            assert ours[row].tolist() == theirs.int().tolist(), (key, row)
            assert int(ours[row].sum()) == n_mel


def test_length_bucketing_trains_and_resumes_on_the_same_batches(corpus, monkeypatch):
    """Global batches of similar mel lengths; a run stopped mid-epoch resumes on the batches an
    uninterrupted run trains on."""
    seen: list[list[str]] = []
    real_step = trainer.loop.train_step

    def spy(state, runtime, micro_batches, **options):
        seen.append(sorted(utterance for batch in micro_batches for utterance in batch.ids))
        return real_step(state, runtime, micro_batches, **options)

    monkeypatch.setattr(trainer.loop, "train_step", spy)
    options = {"global_batch_size": 2, "batch_size": 2, "length_bucketing": True, "bucket_pool": 2}
    run_stage(stage_argv(corpus, section(max_steps=3, **options)))
    uninterrupted, seen[:] = list(seen), []
    shutil.rmtree(corpus / "work")
    run_stage(stage_argv(corpus, section(max_steps=1, **options)))
    metrics = run_stage(stage_argv(corpus, section(max_steps=3, **options)))
    assert metrics["resumed_from_step"] == 1 and seen == uninterrupted
    lengths = {f"train-{index}": 2 * len(TEXTS[index]) + index for index in range(4)}
    # a pool of 2 global batches sorted by length: the two shortest share a batch, the two longest too
    by_length = sorted(lengths, key=lengths.get)
    assert sorted(uninterrupted[:2]) == sorted([sorted(by_length[:2]), sorted(by_length[2:])])
