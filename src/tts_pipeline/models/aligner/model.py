"""The alignment network of RAD-TTS / FastPitch 1.1 ("One TTS Alignment To Rule Them All").

Text symbols and mel frames are projected into a shared space; the attention of frame ``t`` on token
``j`` is a softmax over tokens of ``-temperature * ||q_t - k_j||^2``, optionally multiplied by a
beta-binomial prior. Trained alone with the forward-sum (CTC) and binarisation losses, its attention
becomes sharp and monotonic, and MAS on it gives per-symbol durations.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch
from torch import nn
from torch.nn import functional as F

# Added to the prior before its log so that zero prior (padding, far-off-diagonal) stays finite.
_PRIOR_EPS = 1e-8
# Log-probability of padded tokens in ``attn_logprob``: no probability, but finite (no NaN gradients).
_PADDED_LOGPROB = -1e4


@dataclass
class AlignerOutput:
    """What the aligner returns.

    Attributes:
        attn_soft: ``(B, 1, T_mel, T_text)`` attention of each frame over the tokens; each row sums to 1
            over the item's valid tokens and is 0 on padded tokens.
        attn_logprob: ``(B, 1, T_mel, T_text)`` log-scores, the input of the forward-sum loss. With a
            prior: log-softmax over the item's tokens plus the log prior, and -1e4 on padded tokens;
            without: the raw scores. Padded frames are not masked (the losses crop them).
    """

    attn_soft: torch.Tensor
    attn_logprob: torch.Tensor


def _conv(in_channels: int, out_channels: int, kernel_size: int, gain: str) -> nn.Conv1d:
    """A same-length Conv1d with Xavier-uniform weights scaled for the activation that follows."""
    conv = nn.Conv1d(in_channels, out_channels, kernel_size, padding=kernel_size // 2)
    nn.init.xavier_uniform_(conv.weight, gain=nn.init.calculate_gain(gain))
    return conv


class Aligner(nn.Module):
    """Symbol embedding plus key/query projections and distance attention.

    Args:
        n_symbols: Size of the symbol table (id 0 = padding).
        n_mels: Mel channels of the query input.
        embedding_dim: Symbol embedding size ``E`` (the reference uses 384).
        attention_dim: Channels ``A`` of the key/query space (the reference uses 80).
        temperature: Scale of the negative squared distance (the reference uses 0.0005).
    """

    def __init__(
        self, n_symbols: int, n_mels: int, embedding_dim: int, attention_dim: int, temperature: float
    ) -> None:
        super().__init__()
        self._config = {
            "n_symbols": int(n_symbols),
            "n_mels": int(n_mels),
            "embedding_dim": int(embedding_dim),
            "attention_dim": int(attention_dim),
            "temperature": float(temperature),
        }
        self.temperature = float(temperature)
        self.embedding = nn.Embedding(n_symbols, embedding_dim, padding_idx=0)
        self.key_proj = nn.Sequential(
            _conv(embedding_dim, 2 * embedding_dim, 3, "relu"),
            nn.ReLU(),
            _conv(2 * embedding_dim, attention_dim, 1, "linear"),
        )
        self.query_proj = nn.Sequential(
            _conv(n_mels, 2 * n_mels, 3, "relu"),
            nn.ReLU(),
            _conv(2 * n_mels, attention_dim, 1, "relu"),
            nn.ReLU(),
            _conv(attention_dim, attention_dim, 1, "linear"),
        )

    def model_config(self) -> dict[str, Any]:
        """The constructor arguments: ``Aligner(**model.model_config())`` rebuilds the network."""
        return dict(self._config)

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> Aligner:
        return cls(**config)

    def forward(
        self,
        text: torch.Tensor,
        text_lengths: torch.Tensor,
        mels: torch.Tensor,
        prior: torch.Tensor | None = None,
    ) -> AlignerOutput:
        """Attention of every mel frame over the text.

        Args:
            text: ``(B, T_text)`` symbol ids, 0-padded.
            text_lengths: ``(B,)`` valid tokens per item.
            mels: ``(B, n_mels, T_mel)`` log-mels (padding frames are not masked: the losses crop them).
            prior: ``(B, T_mel, T_text)`` alignment prior, or None.

        Returns:
            :class:`AlignerOutput`.
        """
        keys = self.key_proj(self.embedding(text).transpose(1, 2))  # (B, A, T_text)
        queries = self.query_proj(mels)  # (B, A, T_mel)
        # Distances in fp32 even under autocast: ||q||^2 + ||k||^2 - 2 q.k cancels badly in half
        # precision, and the expansion avoids a (B, A, T_mel, T_text) intermediate.
        with torch.autocast(device_type=mels.device.type, enabled=False):
            queries, keys = queries.float(), keys.float()
            distance = (
                queries.pow(2).sum(1).unsqueeze(2)
                + keys.pow(2).sum(1).unsqueeze(1)
                - 2.0 * torch.bmm(queries.transpose(1, 2), keys)
            ).clamp_min(0.0)  # (B, T_mel, T_text)
            scores = (-self.temperature * distance).unsqueeze(1)  # (B, 1, T_mel, T_text)
            padded = (torch.arange(text.shape[1], device=text.device)[None, :] >= text_lengths[:, None])[:, None, None]
            if prior is not None:
                # Normalised over the item's own tokens (the reference also counts padded ones, which
                # makes an item's loss depend on what it is batched with).
                log_attn = F.log_softmax(scores.masked_fill(padded, float("-inf")), dim=3)
                log_prior = torch.log(prior.float().unsqueeze(1) + _PRIOR_EPS)
                scores = log_attn.masked_fill(padded, _PADDED_LOGPROB) + log_prior
            attn_soft = F.softmax(scores.masked_fill(padded, float("-inf")), dim=3)
        return AlignerOutput(attn_soft=attn_soft, attn_logprob=scores)
