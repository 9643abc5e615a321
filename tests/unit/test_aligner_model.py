"""The aligner: network shapes and masking, prior, losses, batches, and learning a known alignment."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from scipy.stats import betabinom
from torch.nn import functional as F

from tts_pipeline.alignment import mas_durations
from tts_pipeline.data.manifest_record import ManifestRecord
from tts_pipeline.errors import UserError
from tts_pipeline.models.aligner import Aligner, AlignerOutput
from tts_pipeline.models.aligner.data import AlignerCollate, AlignerDataset, LengthBucketBatchSampler
from tts_pipeline.models.aligner.loss import (
    binarization_loss,
    binarization_weight,
    forward_sum_loss,
    hard_alignment,
)
from tts_pipeline.models.aligner.prior import batch_prior, beta_binomial_prior


def small_model(n_symbols: int = 20, n_mels: int = 8, temperature: float = 0.0005) -> Aligner:
    torch.manual_seed(0)
    return Aligner(n_symbols=n_symbols, n_mels=n_mels, embedding_dim=16, attention_dim=8, temperature=temperature)


def random_batch(text_lengths: list[int], mel_lengths: list[int], n_symbols: int = 20, n_mels: int = 8):
    generator = torch.Generator().manual_seed(1)
    text = torch.zeros(len(text_lengths), max(text_lengths), dtype=torch.long)
    mels = torch.zeros(len(mel_lengths), n_mels, max(mel_lengths))
    for i, (n_text, n_mel) in enumerate(zip(text_lengths, mel_lengths, strict=True)):
        text[i, :n_text] = torch.randint(1, n_symbols, (n_text,), generator=generator)
        mels[i, :, :n_mel] = torch.randn(n_mels, n_mel, generator=generator)
    return text, torch.tensor(text_lengths), mels, torch.tensor(mel_lengths)


# --------------------------------------------------------------------------------------------------
# network
# --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("with_prior", [True, False])
def test_attention_shapes_rows_and_padding(with_prior):
    model = small_model()
    text, text_lengths, mels, mel_lengths = random_batch([5, 3, 7], [20, 9, 16])
    prior = batch_prior(mel_lengths, text_lengths) if with_prior else None
    output = model(text, text_lengths, mels, prior)
    assert isinstance(output, AlignerOutput)
    assert output.attn_soft.shape == output.attn_logprob.shape == (3, 1, 20, 7)
    assert torch.isfinite(output.attn_logprob).all()
    if with_prior:  # log-probabilities normalised over each item's own tokens
        valid = output.attn_logprob[1, 0, :, :3] - torch.log(prior[1, :, :3] + 1e-8)
        assert torch.allclose(valid.logsumexp(dim=1), torch.zeros(20), atol=1e-5)
    for i, n_text in enumerate(text_lengths.tolist()):
        rows = output.attn_soft[i, 0]
        assert torch.allclose(rows[:, :n_text].sum(dim=1), torch.ones(20), atol=1e-5)
        assert (rows[:, n_text:] == 0).all()


def test_prior_steers_attention_along_the_diagonal():
    # An untrained model's attention is nearly flat; the prior alone makes it diagonal.
    model = small_model()
    text, text_lengths, mels, mel_lengths = random_batch([6], [30])
    output = model(text, text_lengths, mels, batch_prior(mel_lengths, text_lengths))
    peaks = output.attn_soft[0, 0].argmax(dim=1)
    assert peaks[0] == 0 and peaks[-1] == 5
    assert (peaks.diff() >= 0).all()


def test_model_config_rebuilds_the_network():
    model = small_model()
    rebuilt = Aligner(**model.model_config())
    rebuilt.load_state_dict(model.state_dict())
    text, text_lengths, mels, _ = random_batch([4], [10])
    assert torch.equal(model(text, text_lengths, mels).attn_soft, rebuilt(text, text_lengths, mels).attn_soft)


def test_scores_are_negative_scaled_squared_distances():
    model = small_model(temperature=0.25)
    text, text_lengths, mels, _ = random_batch([4], [6])
    keys = model.key_proj(model.embedding(text).transpose(1, 2))[0]  # (A, L)
    queries = model.query_proj(mels)[0]  # (A, T)
    expected = -0.25 * ((queries[:, :, None] - keys[:, None, :]) ** 2).sum(0)
    output = model(text, text_lengths, mels)
    assert torch.allclose(output.attn_logprob[0, 0], expected, atol=1e-4)
    assert torch.allclose(output.attn_soft[0, 0], torch.softmax(expected, dim=1), atol=1e-5)


# --------------------------------------------------------------------------------------------------
# prior
# --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("frames", "tokens", "scaling"), [(40, 9, 1.0), (7, 7, 1.0), (25, 1, 1.0), (60, 12, 0.5)])
def test_prior_is_the_renormalised_beta_binomial(frames, tokens, scaling):
    prior = beta_binomial_prior(frames, tokens, scaling)
    assert prior.shape == (frames, tokens) and prior.dtype == np.float32
    frame = np.arange(1, frames + 1)[:, None]
    expected = betabinom.pmf(np.arange(tokens)[None, :], tokens, scaling * frame, scaling * (frames + 1 - frame))
    expected /= expected.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(prior, expected, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(prior.sum(axis=1), 1.0, atol=1e-5)


def test_prior_peaks_along_the_diagonal():
    frames, tokens = 100, 10
    peaks = beta_binomial_prior(frames, tokens).argmax(axis=1)
    assert peaks[0] == 0 and peaks[-1] == tokens - 1
    assert (np.diff(peaks) >= 0).all()
    diagonal = (np.arange(frames) + 0.5) * tokens / frames
    assert np.abs(peaks + 0.5 - diagonal).max() <= 1.5


def test_batch_prior_is_zero_on_padding():
    prior = batch_prior([12, 5], [4, 2], 1.0)
    assert prior.shape == (2, 12, 4)
    np.testing.assert_allclose(prior[1, :5, :2].numpy(), beta_binomial_prior(5, 2))
    assert (prior[1, 5:] == 0).all() and (prior[1, :, 2:] == 0).all()
    with pytest.raises(ValueError, match="frames and tokens"):
        beta_binomial_prior(0, 3)


# --------------------------------------------------------------------------------------------------
# losses
# --------------------------------------------------------------------------------------------------


def per_item_ctc(attn_logprob, text_lengths, mel_lengths):
    """The forward-sum loss written the slow way: crop each item, prepend the blank, CTC, average."""
    total = torch.zeros(())
    for i, (n_text, n_mel) in enumerate(zip(text_lengths.tolist(), mel_lengths.tolist(), strict=True)):
        logprob = F.pad(attn_logprob[i, 0, :n_mel, :n_text], (1, 0), value=-1.0).log_softmax(dim=1)
        loss = F.ctc_loss(
            logprob[:, None], torch.arange(1, n_text + 1)[None], [n_mel], [n_text], reduction="sum", zero_infinity=True
        )
        total = total + loss / n_text
    return total / len(text_lengths)


def test_forward_sum_loss_matches_the_per_item_definition_with_finite_gradients():
    torch.manual_seed(0)
    logprob = torch.randn(3, 1, 15, 6).log_softmax(dim=3).requires_grad_()
    text_lengths, mel_lengths = torch.tensor([6, 2, 4]), torch.tensor([15, 7, 11])
    loss = forward_sum_loss(logprob, text_lengths, mel_lengths)
    assert torch.isclose(loss, per_item_ctc(logprob, text_lengths, mel_lengths), atol=1e-5)
    loss.backward()
    assert torch.isfinite(logprob.grad).all()
    # padded frames and tokens get no gradient
    assert (logprob.grad[1, 0, 7:] == 0).all() and (logprob.grad[1, 0, :, 2:] == 0).all()


def test_forward_sum_loss_zeroes_impossible_items():
    logprob = torch.zeros(1, 1, 3, 5)  # 5 tokens cannot fit in 3 frames
    assert forward_sum_loss(logprob, torch.tensor([5]), torch.tensor([3])).item() == 0.0


def test_binarization_loss_reads_the_soft_attention_on_the_hard_path():
    soft = torch.tensor([[0.9, 0.1], [0.5, 0.5], [0.0, 1.0]])[None, None]
    hard = torch.tensor([[1.0, 0.0], [0.0, 1.0], [0.0, 1.0]])[None, None]
    expected = -(np.log(0.9) + np.log(0.5) + np.log(1.0)) / 3
    assert binarization_loss(hard, soft).item() == pytest.approx(expected, rel=1e-6)
    off_path = torch.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 0.0]])[None, None]  # hits a zero: clamped, finite
    assert binarization_loss(off_path, soft).item() == pytest.approx(-(np.log(0.9) + np.log(0.5) + np.log(1e-12)) / 3)


def test_binarization_weight_ramp():
    assert binarization_weight(1, 0, 100) == pytest.approx(0.01)
    assert binarization_weight(50, 0, 100) == pytest.approx(0.5)
    assert binarization_weight(100, 0, 100) == 1.0 and binarization_weight(400, 0, 100) == 1.0
    assert binarization_weight(10, 250, 100) == 0.0
    assert binarization_weight(260, 250, 100) == pytest.approx(0.1)


def test_hard_alignment_is_monotonic_one_token_per_valid_frame():
    model = small_model()
    text, text_lengths, mels, mel_lengths = random_batch([5, 3], [12, 8])
    output = model(text, text_lengths, mels, batch_prior(mel_lengths, text_lengths))
    hard = hard_alignment(output.attn_soft, text_lengths, mel_lengths)
    assert hard.shape == output.attn_soft.shape
    for i, (n_text, n_mel) in enumerate(zip(text_lengths.tolist(), mel_lengths.tolist(), strict=True)):
        path = hard[i, 0]
        assert (path[:n_mel].sum(dim=1) == 1).all() and path[n_mel:].sum() == 0 and path[:, n_text:].sum() == 0
        tokens = path[:n_mel].argmax(dim=1)
        assert tokens[0] == 0 and tokens[-1] == n_text - 1 and set(tokens.diff().tolist()) <= {0, 1}


# --------------------------------------------------------------------------------------------------
# learning a known alignment
# --------------------------------------------------------------------------------------------------


def synthetic_corpus(n_items: int, n_symbols: int = 8, n_mels: int = 12, seed: int = 0):
    """Each symbol has its own mel frame pattern; an utterance repeats each symbol's pattern for its
    (known) duration, plus a little noise. No symbol follows itself, so every boundary is audible."""
    rng = np.random.default_rng(seed)
    patterns = rng.normal(0, 1.5, size=(n_symbols, n_mels)).astype(np.float32)
    items = []
    for _ in range(n_items):
        symbols = [int(rng.integers(1, n_symbols))]
        while len(symbols) < rng.integers(4, 8):
            candidate = int(rng.integers(1, n_symbols))
            if candidate != symbols[-1]:
                symbols.append(candidate)
        symbols = np.array(symbols)
        durations = rng.integers(2, 7, size=symbols.size)
        frames = np.repeat(patterns[symbols], durations, axis=0).T
        mel = frames + rng.normal(0, 0.1, size=frames.shape)
        items.append((symbols, durations, mel.astype(np.float32)))
    return items


def collate_synthetic(items):
    text_lengths = [len(s) for s, _, _ in items]
    mel_lengths = [m.shape[1] for _, _, m in items]
    text = torch.zeros(len(items), max(text_lengths), dtype=torch.long)
    mels = torch.zeros(len(items), items[0][2].shape[0], max(mel_lengths))
    for i, (symbols, _, mel) in enumerate(items):
        text[i, : len(symbols)] = torch.from_numpy(symbols)
        mels[i, :, : mel.shape[1]] = torch.from_numpy(mel)
    text_lengths, mel_lengths = torch.tensor(text_lengths), torch.tensor(mel_lengths)
    return text, text_lengths, mels, mel_lengths, batch_prior(mel_lengths, text_lengths)


def test_training_recovers_known_durations():
    items = synthetic_corpus(16)
    text, text_lengths, mels, mel_lengths, prior = collate_synthetic(items)
    torch.manual_seed(0)
    model = Aligner(n_symbols=8, n_mels=12, embedding_dim=32, attention_dim=16, temperature=0.05)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)

    def duration_error() -> float:
        """Mean |MAS duration - true duration| per symbol, in frames."""
        with torch.no_grad():
            soft = model(text, text_lengths, mels, prior).attn_soft
        errors = []
        for i, (_, durations, _) in enumerate(items):
            log_attn = soft[i, 0, : mel_lengths[i], : text_lengths[i]].clamp_min(1e-30).log().numpy()
            errors.append(np.abs(mas_durations(log_attn) - durations).mean())
        return float(np.mean(errors))

    before = duration_error()
    losses = []
    for _ in range(30):
        output = model(text, text_lengths, mels, prior)
        hard = hard_alignment(output.attn_soft, text_lengths, mel_lengths)
        ctc = forward_sum_loss(output.attn_logprob, text_lengths, mel_lengths)
        loss = ctc + 0.1 * binarization_loss(hard, output.attn_soft)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(ctc.item())
    after = duration_error()
    assert all(np.isfinite(losses))
    assert np.mean(losses[-5:]) < 0.6 * np.mean(losses[:5])
    assert after < 0.5 * before and after < 0.75, (before, after)


# --------------------------------------------------------------------------------------------------
# data
# --------------------------------------------------------------------------------------------------


def write_mels(folder, lengths: dict[str, int], n_mels: int = 8):
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(0)
    for utterance_id, frames in lengths.items():
        np.save(folder / f"{utterance_id}.npy", rng.normal(size=(n_mels, frames)).astype(np.float32))


def records(texts: dict[str, str]) -> list[ManifestRecord]:
    """Manifest records of ``{id: text}`` (the dataset reads id and text; the rest is a placeholder)."""
    return [ManifestRecord(id=i, wav=f"{i}.wav", text=text, n_samples=0) for i, text in texts.items()]


def test_dataset_and_collate_pad_and_carry_the_prior(tmp_path):
    write_mels(tmp_path / "mels", {"a": 30, "b": 12})
    listed = records({"a": "hello there.", "b": "hi."})
    dataset = AlignerDataset(listed, tmp_path / "mels", 8, "characters", "english_basic")
    assert len(dataset) == 2 and dataset.mel_lengths == [30, 12]
    batch = AlignerCollate(1.0)([dataset[0], dataset[1]])
    assert batch.ids == ["a", "b"]
    assert batch.text.shape == (2, 12) and batch.text_lengths.tolist() == [12, 3]
    assert (batch.text[1, 3:] == 0).all() and (batch.text[1, :3] > 0).all()
    assert batch.mels.shape == (2, 8, 30) and (batch.mels[1, :, 12:] == 0).all()
    assert batch.prior.shape == (2, 30, 12) and (batch.prior[1, 12:] == 0).all()
    assert AlignerCollate(0.0)([dataset[1]]).prior is None


def test_dataset_reports_every_unusable_utterance(tmp_path):
    write_mels(tmp_path / "mels", {"short": 2, "ok": 20})
    np.save(tmp_path / "mels" / "wide.npy", np.zeros((5, 20), dtype=np.float32))
    listed = records(
        {"ok": "fine.", "short": "far too long for two frames.", "wide": "wrong channels.", "missing": "no mel."}
    )
    with pytest.raises(UserError) as error:
        AlignerDataset(listed, tmp_path / "mels", 8, "characters", "english_basic")
    message = str(error.value)
    assert "3 unusable" in message
    assert "short: 2 mel frames" in message and "wide:" in message and "missing:" in message


def test_length_buckets_are_reproducible_per_epoch_and_cover_everything():
    lengths = np.random.default_rng(0).integers(10, 500, size=103).tolist()
    sampler = LengthBucketBatchSampler(lengths, batch_size=8, seed=7, bucket_batches=4)
    first, again, other = sampler.batches(1), sampler.batches(1), sampler.batches(2)
    assert first == again and first != other
    assert len(first) == len(sampler) == 13
    assert sorted(i for batch in first for i in batch) == list(range(103))
    # inside a bucket the lengths are sorted, so a batch spans a small part of the range
    spans = [np.ptp([lengths[i] for i in batch]) for batch in first if len(batch) == 8]
    assert np.median(spans) < 0.5 * np.ptp(lengths)
    sampler.set_epoch(2, skip=5)
    assert list(sampler) == other[5:]
    plain = LengthBucketBatchSampler(lengths, batch_size=8, shuffle=False).batches(3)
    assert [i for batch in plain for i in batch] == np.argsort(lengths, kind="stable").tolist()
