"""Model files (the format every stage's ``model.pt`` uses): round trip, errors naming the file."""

from __future__ import annotations

import pytest
import torch

from tts_pipeline.errors import UserError
from tts_pipeline.models.model_file import load_model_file, save_model_file

from .test_checkpoint import trained_pair


def test_model_file_round_trip(tmp_path):
    model, _ = trained_pair()
    path = tmp_path / "out" / "model.pt"
    save_model_file(path, model, {"sizes": [4, 8, 2]}, 123, {"symbols": "characters", "table": ["_", "a"]})
    loaded = load_model_file(path)
    assert loaded.step == 123 and loaded.model_config == {"sizes": [4, 8, 2]}
    assert loaded.extra == {"symbols": "characters", "table": ["_", "a"]}
    for name, tensor in model.state_dict().items():
        assert torch.equal(loaded.state_dict[name], tensor)
    assert [p.name for p in path.parent.iterdir()] == ["model.pt"]  # no temporary file left behind


def test_model_file_errors_name_the_file(tmp_path):
    with pytest.raises(UserError, match="model file not found"):
        load_model_file(tmp_path / "missing.pt")
    (tmp_path / "bad.pt").write_bytes(b"garbage")
    with pytest.raises(UserError, match="bad.pt"):
        load_model_file(tmp_path / "bad.pt")
    torch.save({"something": 1}, tmp_path / "other.pt")
    with pytest.raises(UserError, match="not a model file"):
        load_model_file(tmp_path / "other.pt")
    (tmp_path / "empty.pt").write_bytes(b"")
    with pytest.raises(UserError, match=r"empty.pt is empty \(0 bytes\)"):
        load_model_file(tmp_path / "empty.pt")
