"""The durations stage (TextGrid and aligner sources) and the alignment-error command, on tiny corpora.

The aligner source runs against a fake aligner module whose attention is read from the mels, so the
true durations are known and MAS must recover them exactly.
"""

from __future__ import annotations

import argparse
import json
import sys
import types
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
import torch

from tts_pipeline.commands import alignment_error
from tts_pipeline.data.textgrid import Interval, write_textgrid
from tts_pipeline.errors import UserError
from tts_pipeline.features.alignment_eval import word_spans_from_symbols
from tts_pipeline.files import save_npy, write_json, write_jsonl
from tts_pipeline.stages import durations
from tts_pipeline.text import encode, get_symbols

HOP, SR, N_MELS = 256, 22050, 4
FRAME = HOP / SR
SYMBOLS = get_symbols("english_basic")

TEXTS = {
    "train": {"t1": "a cat sat.", "t2": "the dog ran, fast.", "t3": "cats nap."},
    "val": {"v1": "a dog sat.", "v2": "the cat ran."},
    "test": {"s1": "dogs nap."},
}


@dataclass
class Corpus:
    root: Path
    record: Path
    manifest_dir: Path
    features_dir: Path
    truth: dict[str, np.ndarray]  # id -> true character durations (L,)


def _tiles(spans, bounds, labels, n_frames):
    """Intervals for ``spans`` of symbols (labelled), silence elsewhere, tiling [0, T * FRAME]."""
    tier, cursor = [], 0
    for (first, stop), label in zip(spans, labels, strict=True):
        if bounds[first] > cursor:
            tier.append(Interval(cursor * FRAME, bounds[first] * FRAME, ""))
        tier.append(Interval(bounds[first] * FRAME, bounds[stop] * FRAME, label))
        cursor = bounds[stop]
    if cursor < n_frames:
        tier.append(Interval(cursor * FRAME, n_frames * FRAME, ""))
    return tier


def make_corpus(tmp_path: Path, symbols: str = "characters", phone_override: dict[str, str] | None = None) -> Corpus:
    """Utterances whose true per-symbol durations are known; words and phones tiers agree with them.

    The mel's channel 0 holds, for every frame, the index of its true symbol (the fake aligner
    reads it); pitch is 100 Hz + 10 * symbol index, unvoiced on every third frame.
    """
    root = tmp_path / "corpus"
    manifest_dir = tmp_path / "data"
    features_dir = tmp_path / "features"
    truth = {}
    for split, texts in TEXTS.items():
        records = []
        for index, (utterance_id, text) in enumerate(texts.items()):
            ids = encode(text, symbols, "english_basic")
            rng = np.random.default_rng(index + 10 * len(split))
            true = rng.integers(2, 7, size=len(ids)).astype(np.int32)
            bounds = np.concatenate(([0], np.cumsum(true)))
            n_frames = int(bounds[-1])
            truth[utterance_id] = true
            token = np.repeat(np.arange(len(ids)), true)
            mel = np.zeros((N_MELS, n_frames), dtype=np.float32)
            mel[0] = token
            pitch = (100.0 + 10 * token).astype(np.float32)
            pitch[::3] = 0
            save_npy(features_dir / "mels" / f"{utterance_id}.npy", mel)
            save_npy(features_dir / "pitch" / f"{utterance_id}.npy", pitch)
            # ground truth: words from the text; phones = one per letter (the characters' spans)
            char_ids = encode(text, "characters", "english_basic")
            char_spans = word_spans_from_symbols([SYMBOLS[i] for i in char_ids])
            words = [text[a:b] for a, b in char_spans]
            word_tier = _tiles(char_spans, bounds, words, n_frames) if symbols == "characters" else None
            letters = [(i, i + 1) for i, c in enumerate(text) if c.isalpha()]
            phones = [text[a] for a, _ in letters]
            if phone_override and utterance_id in phone_override:
                phones[0] = phone_override[utterance_id]
            if symbols == "characters":
                phone_tier = _tiles(letters, bounds, phones, n_frames)
                write_textgrid(root / "alignments" / f"{utterance_id}.TextGrid",
                               {"words": word_tier, "phones": phone_tier}, 0.0, n_frames * FRAME)  # fmt: skip
            else:
                spans = word_spans_from_symbols([SYMBOLS[i] for i in ids])
                write_textgrid(root / "alignments" / f"{utterance_id}.TextGrid",
                               {"words": _tiles(spans, bounds, words, n_frames)}, 0.0, n_frames * FRAME)  # fmt: skip
            # no clip is written: the duration figures then leave out the waveform
            wav = str(root / "wavs" / f"{utterance_id}.wav")
            n_samples = n_frames * HOP
            records.append({"id": utterance_id, "wav": wav, "text": text, "n_samples": n_samples, "sample_rate": SR})
        write_jsonl(manifest_dir / f"manifest.{split}.jsonl", records)
    record = root / "corpus.json"
    write_json(record, {"name": "tiny", "root": str(root)})
    return Corpus(root, record, manifest_dir, features_dir, truth)


def section(source: str) -> str:
    return json.dumps(
        {
            "durations": {"source": source, "textgrid_dir": None, "textgrid_tier": "phones"},
            "audio": {"sampling_rate": SR, "hop_length": HOP},
            "text.symbol_set": "english_basic",
        }
    )


def run_module(module, *argv: str) -> None:
    parser = argparse.ArgumentParser()
    module.add_arguments(parser)
    module.run(parser.parse_args(list(argv)))


def run_durations(corpus: Corpus, source: str, aligner: str = "") -> dict:
    index = corpus.features_dir / "durations.json"
    run_module(
        durations,
        "--section", section(source),
        "--manifest-dir", str(corpus.manifest_dir),
        "--features-dir", str(corpus.features_dir),
        "--corpus-record", str(corpus.record),
        "--aligner", aligner,
        "--index", str(index),
        "--batch-size", "2",
    )  # fmt: skip
    return json.loads(index.read_text())


def loop_symbol_pitch(pitch, lengths):
    out, start = [], 0
    for d in lengths:
        voiced = pitch[start : start + d][pitch[start : start + d] > 0]
        out.append(voiced.mean() if voiced.size else 0.0)
        start += d
    return np.array(out)


def check_outputs(corpus: Corpus, utterance_id: str) -> tuple[np.ndarray, np.ndarray]:
    features = corpus.features_dir
    d = np.load(features / "durations" / f"{utterance_id}.npy")
    s = np.load(features / "symbols" / f"{utterance_id}.npy")
    p = np.load(features / "symbol_pitch" / f"{utterance_id}.npy")
    n_frames = np.load(features / "mels" / f"{utterance_id}.npy").shape[1]
    assert d.dtype == np.int32 and s.dtype == np.int32 and p.dtype == np.float32
    assert d.shape == s.shape == p.shape and d.sum() == n_frames
    pitch = np.load(features / "pitch" / f"{utterance_id}.npy")
    np.testing.assert_allclose(p, loop_symbol_pitch(pitch, d), rtol=1e-5)
    return d, s


# --------------------------------------------------------------------------------------------------
# TextGrid source
# --------------------------------------------------------------------------------------------------


def test_textgrid_source(tmp_path, capsys):
    corpus = make_corpus(tmp_path)
    index = run_durations(corpus, "textgrid")
    table = index["symbols"]
    assert table[:3] == ["_", "sil", "<unk>"] and table[3:] == sorted(table[3:])
    assert set(table[3:]) == {c for text in TEXTS["train"].values() for c in text if c.isalpha()}
    assert index["source"] == "textgrid" and index["hop_length"] == HOP
    assert {split: c["n_utterances"] for split, c in index["splits"].items()} == {"train": 3, "val": 2, "test": 1}
    for utterance_id, text in {**TEXTS["train"], **TEXTS["val"]}.items():
        d, s = check_outputs(corpus, utterance_id)
        labels = [table[i] for i in s]
        assert [x for x in labels if x != "sil"] == [c for c in text if c.isalpha()]
    # boundaries sit on whole frames: no error at all
    quality = index["alignment_quality"]
    assert quality["split"] == "val" and quality["n_evaluated"] == 2 and quality["n_skipped"] == 0
    assert quality["boundary_error_ms"]["max"] == pytest.approx(0.0, abs=1e-3)

    run_module(
        alignment_error,
        "--index", str(corpus.features_dir / "durations.json"),
        "--features-dir", str(corpus.features_dir),
        "--manifest-dir", str(corpus.manifest_dir),
        "--corpus-record", str(corpus.record),
        "--split", "train",
    )  # fmt: skip
    printed = capsys.readouterr().out
    assert "alignment error on train: 3 of 3 utterances" in printed
    assert "median word-boundary error: 0.00 ms" in printed


def test_textgrid_phone_unseen_in_train_maps_to_unknown(tmp_path):
    corpus = make_corpus(tmp_path, phone_override={"v1": "q"})
    index = run_durations(corpus, "textgrid")
    assert "q" not in index["symbols"]
    assert index["splits"]["val"]["n_unknown_symbols"] == 1
    assert index["splits"]["val"]["unknown_labels"] == {"q": 1}
    _, s = check_outputs(corpus, "v1")
    assert (s == index["symbols"].index("<unk>")).sum() == 1


def test_textgrid_of_another_length_is_rejected(tmp_path):
    corpus = make_corpus(tmp_path)
    mel = np.zeros((N_MELS, 400), dtype=np.float32)  # the audio is much longer than its TextGrid
    save_npy(corpus.features_dir / "mels" / "t2.npy", mel)
    with pytest.raises(UserError, match="t2: .* is it the TextGrid of this recording"):
        run_durations(corpus, "textgrid")


# --------------------------------------------------------------------------------------------------
# aligner source, with a fake aligner
# --------------------------------------------------------------------------------------------------


@dataclass
class FakeOutput:
    attn_soft: torch.Tensor
    attn_logprob: torch.Tensor


class FakeAligner(torch.nn.Module):
    """Attention peaked on the symbol index written in mel channel 0."""

    def __init__(self):
        super().__init__()
        self.calls: list[tuple] = []

    def forward(self, text, text_lengths, mels, prior=None):
        self.calls.append((tuple(text.shape), None if prior is None else tuple(prior.shape)))
        assert prior is not None and prior.shape == (text.shape[0], mels.shape[2], text.shape[1])
        positions = torch.arange(text.shape[1], dtype=torch.float32)
        scores = -((mels[:, 0, :, None] - positions[None, None, :]) ** 2) * 4.0  # (B, T, L)
        scores = scores.masked_fill(positions[None, None, :] >= text_lengths[:, None, None], float("-inf"))
        log_probs = torch.log_softmax(scores, dim=2)[:, None]
        return FakeOutput(attn_soft=log_probs.exp(), attn_logprob=log_probs)


@pytest.fixture
def fake_aligner(monkeypatch):
    """Install fake ``tts_pipeline.models.aligner`` (+ ``.prior``) modules; yields the info to return."""
    info = types.SimpleNamespace(
        symbols="characters", symbol_set="english_basic", symbol_table=SYMBOLS, prior_scaling=1.0, extra={}
    )
    model = FakeAligner()
    loaded: list[str] = []

    def load_aligner(path, device="cpu"):
        loaded.append(str(path))
        return model, info

    aligner_module = types.ModuleType("tts_pipeline.models.aligner")
    aligner_module.load_aligner = load_aligner
    prior_module = types.ModuleType("tts_pipeline.models.aligner.prior")
    prior_module.beta_binomial_prior = lambda n_frames, n_tokens, scaling=1.0: np.full(
        (n_frames, n_tokens), 1.0 / n_tokens, dtype=np.float32
    )
    monkeypatch.setitem(sys.modules, "tts_pipeline.models.aligner", aligner_module)
    monkeypatch.setitem(sys.modules, "tts_pipeline.models.aligner.prior", prior_module)
    return types.SimpleNamespace(info=info, model=model, loaded=loaded)


@pytest.mark.parametrize("symbols", ["characters", "arpabet"])
def test_aligner_source_recovers_true_durations(tmp_path, fake_aligner, symbols):
    fake_aligner.info.symbols = symbols
    corpus = make_corpus(tmp_path, symbols=symbols)
    index = run_durations(corpus, "aligner", aligner="model.pt")
    assert set(fake_aligner.loaded) == {"model.pt"}  # the durations, then the figures
    assert index["source"] == "aligner" and index["symbols_kind"] == symbols
    assert index["symbols"] == SYMBOLS
    assert sum(c["n_utterances"] for c in index["splits"].values()) == 6
    assert max(shape[0] for shape, _ in fake_aligner.model.calls) == 2  # batched
    for split_texts in TEXTS.values():
        for utterance_id, text in split_texts.items():
            d, s = check_outputs(corpus, utterance_id)
            np.testing.assert_array_equal(s, encode(text, symbols, "english_basic"))
            np.testing.assert_array_equal(d, corpus.truth[utterance_id])
    quality = index["alignment_quality"]
    assert quality["n_evaluated"] == 2 and quality["boundary_error_ms"]["max"] == pytest.approx(0.0, abs=1e-3)


def test_aligner_source_names_an_utterance_with_too_few_frames(tmp_path, fake_aligner):
    corpus = make_corpus(tmp_path)
    save_npy(corpus.features_dir / "mels" / "v2.npy", np.zeros((N_MELS, 3), dtype=np.float32))
    with pytest.raises(UserError, match=r"v2: 12 symbols for 3 mel frames"):
        run_durations(corpus, "aligner", aligner="model.pt")


def test_aligner_source_needs_a_model(tmp_path):
    corpus = make_corpus(tmp_path)
    with pytest.raises(UserError, match="no --aligner"):
        run_durations(corpus, "aligner")


def test_aligner_trained_on_another_symbol_set_is_rejected(tmp_path, fake_aligner):
    fake_aligner.info.symbol_set = "other_set"
    corpus = make_corpus(tmp_path)
    with pytest.raises(UserError, match="trained on symbol set 'other_set'"):
        run_durations(corpus, "aligner", aligner="model.pt")


def test_aligner_with_another_symbol_table_is_rejected(tmp_path, fake_aligner):
    fake_aligner.info.symbol_table = SYMBOLS[:-1]
    corpus = make_corpus(tmp_path)
    with pytest.raises(UserError, match="symbol table .* differs"):
        run_durations(corpus, "aligner", aligner="model.pt")
