"""Model files (the format every stage's ``model.pt`` uses): round trip, errors naming the file."""

from __future__ import annotations

import pytest
import torch

from tts_pipeline.errors import UserError
from tts_pipeline.models.model_file import ModelFile, load_model_file, read_model_file_or_foreign, save_model_file

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


def test_two_saves_of_one_model_are_the_same_bytes(tmp_path):
    """A model file's SHA-256 (FastPitch's mels record it) says whether the model changed, not when it
    was written: the archive inside is not named after the temporary file."""
    model, _ = trained_pair()
    save_model_file(tmp_path / "a" / "model.pt", model, {"sizes": [4]}, 1)
    save_model_file(tmp_path / "b" / "model.pt", model, {"sizes": [4]}, 1)
    assert (tmp_path / "a" / "model.pt").read_bytes() == (tmp_path / "b" / "model.pt").read_bytes()


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


def test_a_model_file_is_read_as_it_is_and_any_other_payload_through_the_converter(tmp_path):
    model, _ = trained_pair()
    save_model_file(tmp_path / "ours.pt", model, {"sizes": [4]}, 7, {"kind": "waveglow"})
    torch.save({"their_weights": torch.zeros(2)}, tmp_path / "theirs.pt")
    converted = ModelFile(state_dict={}, model_config={}, step=0, extra={"kind": "waveglow"})

    def convert(payload):
        if "their_weights" not in payload:
            raise UserError("not theirs either")
        return converted

    ours = read_model_file_or_foreign(tmp_path / "ours.pt", convert, kind="waveglow", what="WaveGlow")
    assert ours.step == 7 and ours.model_config == {"sizes": [4]}
    assert read_model_file_or_foreign(tmp_path / "theirs.pt", convert, kind="waveglow", what="WaveGlow") is converted
    torch.save({"unknown": 1}, tmp_path / "unknown.pt")
    with pytest.raises(UserError, match="not theirs either"):
        read_model_file_or_foreign(tmp_path / "unknown.pt", convert)


def test_a_model_file_of_another_kind_is_refused_by_name(tmp_path):
    model, _ = trained_pair()
    save_model_file(tmp_path / "aligner.pt", model, {}, 1, {"kind": "aligner"})
    save_model_file(tmp_path / "unnamed.pt", model, {}, 1, {})
    with pytest.raises(UserError, match=r"aligner\.pt: a model file of another model \(aligner\), not WaveGlow"):
        read_model_file_or_foreign(tmp_path / "aligner.pt", lambda payload: None, kind="waveglow", what="WaveGlow")
    with pytest.raises(UserError, match=r"another model \(unnamed\)"):
        read_model_file_or_foreign(tmp_path / "unnamed.pt", lambda payload: None, kind="waveglow", what="WaveGlow")
    # without a kind, any model file of this format is taken (its loader checks the extras it needs)
    assert read_model_file_or_foreign(tmp_path / "unnamed.pt", lambda payload: None).step == 1
