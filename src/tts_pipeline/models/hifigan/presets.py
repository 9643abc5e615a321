"""jik876's generator sizes v1 / v2 / v3 as ``hifigan`` config overrides.

``HiFiGANConfig(**{**section, **V2})`` gives the v2 generator; the discriminators and the schedule
are unaffected. NVIDIA's recipe is v1 with ``resblock_kernel_sizes`` [11, 7, 3] (the config's
default): the same network with the parallel blocks in the other order, which only moves weights
between state-dict indices (the blocks' outputs are averaged).

Parameter counts after weight-norm removal (reference table 2.4): v1 13,926,017, v2 925,985,
v3 1,462,273.
"""

from __future__ import annotations

import copy
from typing import Any

V1: dict[str, Any] = {
    "resblock": "1",
    "upsample_rates": [8, 8, 2, 2],
    "upsample_kernel_sizes": [16, 16, 4, 4],
    "upsample_initial_channel": 512,
    "resblock_kernel_sizes": [3, 7, 11],
    "resblock_dilation_sizes": [[1, 3, 5], [1, 3, 5], [1, 3, 5]],
}

V2: dict[str, Any] = {**V1, "upsample_initial_channel": 128}

V3: dict[str, Any] = {
    "resblock": "2",
    "upsample_rates": [8, 8, 4],
    "upsample_kernel_sizes": [16, 16, 8],
    "upsample_initial_channel": 256,
    "resblock_kernel_sizes": [3, 5, 7],
    "resblock_dilation_sizes": [[1, 2], [2, 6], [3, 12]],
}

PRESETS: dict[str, dict[str, Any]] = {"v1": V1, "v2": V2, "v3": V3}


def preset(name: str) -> dict[str, Any]:
    """A fresh copy of preset ``name`` (``v1``, ``v2`` or ``v3``)."""
    try:
        chosen = PRESETS[name]
    except KeyError:
        raise ValueError(f"unknown HiFi-GAN preset {name!r}; expected one of {sorted(PRESETS)}") from None
    return copy.deepcopy(chosen)
