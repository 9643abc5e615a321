"""How much memory one item of a batch needs, estimated from the config alone (no torch, no model).

Each figure counts only the activations a job cannot avoid holding at once: the tensors autograd keeps
for the backward pass of the largest layers (training), or the widest layer's input and output
(inference). Optimiser state, the discriminators, allocator slack and the framework's own buffers are
left out, so the real figure is higher, several times higher for HiFi-GAN. That makes the estimates
lower bounds: a batch refused because of them cannot fit, and one that passes may still not.

Values are 4 bytes (float32), or 2 under ``amp`` (bf16 / fp16 activations), still a lower bound.
"""

from __future__ import annotations

import math
from typing import Any

# Speech runs at about 16 characters a second (NVIDIA's 128-character benchmark sentence is 8.05 s);
# it turns a phrase's length into the frames synthesis makes of it.
CHARACTERS_PER_SECOND = 16.0


def value_bytes(amp: str) -> int:
    """Bytes of one activation value: 2 under mixed precision, else 4."""
    return 2 if amp in ("fp16", "bf16") else 4


def frames_of(samples: int, hop_length: int) -> int:
    """Mel frames of ``samples`` audio samples."""
    return max(1, math.ceil(samples / hop_length))


def frames_of_text(characters: int, sampling_rate: int, hop_length: int) -> int:
    """Mel frames synthesis makes of a text of ``characters`` characters, at :data:`CHARACTERS_PER_SECOND`."""
    seconds = characters / CHARACTERS_PER_SECOND
    return frames_of(math.ceil(seconds * sampling_rate), hop_length)


def _generator_stages(hifigan: Any, frames: int) -> list[tuple[int, int]]:
    """``(channels, length)`` after each upsampling stage of the HiFi-GAN generator for ``frames`` frames."""
    stages, length = [], frames
    for index, rate in enumerate(hifigan.upsample_rates):
        length *= rate
        stages.append((hifigan.upsample_initial_channel // 2 ** (index + 1), length))
    return stages


def _convs_per_stage(hifigan: Any) -> int:
    """Convolutions in one stage's residual blocks (type 1 has two per dilation, type 2 one)."""
    per_dilation = 2 if hifigan.resblock == "1" else 1
    return sum(per_dilation * len(dilations) for dilations in hifigan.resblock_dilation_sizes)


def hifigan_training_item(hifigan: Any, segment_size: int, hop_length: int) -> int:
    """Bytes one training segment needs in the generator: one kept activation per convolution of
    every stage (the upsampling conv and each residual conv), at that stage's width and length."""
    frames = frames_of(segment_size, hop_length)
    convs = 1 + _convs_per_stage(hifigan)
    values = sum(channels * length * convs for channels, length in _generator_stages(hifigan, frames))
    return values * value_bytes(hifigan.amp)


def hifigan_inference_item(hifigan: Any, frames: int, amp: str = "off") -> int:
    """Bytes one utterance of ``frames`` frames needs in the generator at inference: the widest stage's
    input, output and residual sum alive at once."""
    widest = max(channels * length for channels, length in _generator_stages(hifigan, frames))
    return 3 * widest * value_bytes(amp)


def fastpitch_training_item(fastpitch: Any, frames: int) -> int:
    """Bytes one utterance of ``frames`` frames needs in FastPitch's decoder: per layer, the attention
    probabilities (heads x frames x frames), its input and output and the feed-forward hidden channels."""
    per_layer = fastpitch.out_fft_n_heads * frames * frames
    per_layer += frames * (2 * fastpitch.symbols_embedding_dim + fastpitch.out_fft_conv1d_filter_size)
    return fastpitch.out_fft_n_layers * per_layer * value_bytes(fastpitch.amp)


def fastpitch_inference_item(fastpitch: Any, frames: int, amp: str = "off") -> int:
    """Bytes one utterance needs in FastPitch's decoder at inference: one layer's attention and width."""
    values = fastpitch.out_fft_n_heads * frames * frames + frames * (
        2 * fastpitch.symbols_embedding_dim + fastpitch.out_fft_conv1d_filter_size
    )
    return values * value_bytes(amp)


def synthesis_item(fastpitch: Any, hifigan: Any, frames: int, hop_length: int, amp: str = "off") -> int:
    """Bytes one utterance of ``frames`` frames needs through synthesis: the larger of the two models'
    working sets, plus its float32 audio, which stays while the batch finishes."""
    models = max(fastpitch_inference_item(fastpitch, frames, amp), hifigan_inference_item(hifigan, frames, amp))
    return models + 4 * frames * hop_length


def tacotron2_training_item(tacotron2: Any, frames: int, characters: int) -> int:
    """Bytes one utterance needs in Tacotron 2's decoder: per frame the four gates of its two LSTMs and
    one row of attention weights over the characters, all kept for the backward pass."""
    per_frame = 4 * (tacotron2.attention_rnn_dim + tacotron2.decoder_rnn_dim) + characters
    return frames * per_frame * value_bytes(tacotron2.amp)


def waveglow_training_item(waveglow: Any, segment_size: int) -> int:
    """Bytes one training segment needs in WaveGlow: every flow's coupling network keeps, per layer,
    its ``wn_channels`` (gated: twice) over the segment's groups."""
    groups = segment_size // waveglow.n_group
    values = waveglow.n_flows * waveglow.wn_layers * 2 * waveglow.wn_channels * groups
    return values * value_bytes(waveglow.amp)


def aligner_training_item(aligner: Any, frames: int, characters: int, n_mels: int) -> int:
    """Bytes one utterance needs in the aligner: its mel, the queries and keys, and the attention
    (frames x characters) with its prior and soft and hard versions (four of them)."""
    values = frames * (n_mels + aligner.attention_dim) + characters * aligner.attention_dim
    values += 4 * frames * characters
    return values * value_bytes(aligner.amp)


def characters_of(frames: int, sampling_rate: int, hop_length: int) -> int:
    """Characters spoken in ``frames`` frames at :data:`CHARACTERS_PER_SECOND`."""
    return max(1, math.ceil(frames * hop_length / sampling_rate * CHARACTERS_PER_SECOND))
