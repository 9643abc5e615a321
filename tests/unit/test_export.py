"""The exports of tiny random models: ONNX Runtime and TorchScript against the eager models at batch 1
and 2 and two lengths, the pace and pitch inputs, a perturbed file caught naming the model and the
input, the eager models untouched, and the pieces a server reads without torch."""

from __future__ import annotations

import json
import subprocess
import sys
import warnings

import numpy as np
import onnx
import pytest
import torch
from onnx import numpy_helper

from tts_pipeline.config.model_kinds import acoustic_model_kind, vocoder_kind
from tts_pipeline.errors import UserError
from tts_pipeline.export.cases import Controls, build_cases
from tts_pipeline.export.compare import check_acoustic, check_vocoder, eager_acoustic, eager_vocoder, vocoder_inputs
from tts_pipeline.export.graphs import export_graph, names
from tts_pipeline.export.onnx_file import write_onnx
from tts_pipeline.export.runtime import OnnxModel, OnnxVoice
from tts_pipeline.export.torchscript import TorchScriptModel, write_torchscript
from tts_pipeline.export.verify import ExportMismatch, Limits, require_passed
from tts_pipeline.export.voice_card import build_card, read_card
from tts_pipeline.models.fastpitch import PitchTransform, length_regulate
from tts_pipeline.snr import snr_db

from ..inference_models import tiny_models

# symbol ids of two lengths (english_basic ids 1..): one short, one long
SHORT = tuple(range(10, 17))
LONG = tuple(int(i) for i in np.random.default_rng(0).integers(1, 60, 45))


@pytest.fixture(autouse=True)
def one_thread():
    torch.set_num_threads(1)


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """The tiny models, their graphs, and their ONNX and TorchScript files."""
    torch.set_num_threads(1)
    folder = tmp_path_factory.mktemp("export")
    fastpitch, generator = tiny_models()
    graphs = {
        "fastpitch": export_graph(acoustic_model_kind("fastpitch"), fastpitch),
        "hifigan": export_graph(vocoder_kind("hifigan"), generator),
    }
    for name, graph in graphs.items():
        write_onnx(graph, folder / f"{name}.onnx")
        write_torchscript(graph, folder / f"{name}.ts")
    return folder, fastpitch, generator, graphs


def runners(folder, name):
    return {
        "onnx": OnnxModel(folder / f"{name}.onnx", threads=1),
        "torchscript": TorchScriptModel(folder / f"{name}.ts"),
    }


def cases():
    return build_cases([("short", SHORT), ("long", LONG)], batch_size=2)


@pytest.mark.parametrize("fmt", ["onnx", "torchscript"])
def test_fastpitch_exports_match_eager_at_batch_1_and_2_and_two_lengths(exported, fmt):
    folder, fastpitch, _, graphs = exported
    runner = runners(folder, "fastpitch")[fmt]
    for symbols in ([SHORT], [LONG], [LONG, SHORT]):  # batch 1 at two lengths, then a padded batch
        tokens = torch.zeros(len(symbols), max(map(len, symbols)), dtype=torch.int64)
        for row, items in enumerate(symbols):
            tokens[row, : len(items)] = torch.tensor(items)
        lengths = torch.tensor([len(items) for items in symbols])
        want = fastpitch.infer(tokens, lengths)
        mel, mel_lengths, durations = runner(tokens.numpy(), lengths.numpy(), *Controls().arrays(len(symbols)))
        assert np.array_equal(durations, want.durations.numpy()) and np.array_equal(mel_lengths, want.mel_lengths)
        assert np.abs(mel - want.mel.numpy()).max() <= 1e-4
    assert graphs["fastpitch"].module.training is False and fastpitch.training is False


def test_pace_and_pitch_inputs_do_what_the_eager_transform_does(exported):
    folder, fastpitch, _, _ = exported
    runner = runners(folder, "fastpitch")["onnx"]
    tokens, lengths = torch.tensor([LONG]), torch.tensor([len(LONG)])
    controls = Controls(pace=0.7, pitch_shift_hz=30.0, pitch_scale=-1.5)  # slower, higher, inverted and wider
    want = fastpitch.infer(tokens, lengths, pace=0.7, pitch_transform=PitchTransform(amplify=-1.5, shift_hz=30.0))
    mel, _, durations = runner(tokens.numpy(), lengths.numpy(), *controls.arrays(1))
    assert np.array_equal(durations, want.durations.numpy())
    assert np.abs(mel - want.mel.numpy()).max() <= 1e-4
    # each item of a batch its own pace: the second item at half speed has about twice the frames
    both = np.array([LONG, LONG])
    _, mel_lengths, _ = runner(both, np.array([45, 45]), np.array([1.0, 0.5], np.float32), *Controls().arrays(2)[1:])
    assert abs(mel_lengths[1] / mel_lengths[0] - 2.0) < 0.1


@pytest.mark.parametrize("fmt", ["onnx", "torchscript"])
def test_vocoder_exports_reach_60_db_against_eager(exported, fmt):
    folder, _, generator, _ = exported
    runner = runners(folder, "hifigan")[fmt]
    mel = torch.randn(2, 80, 37, generator=torch.Generator().manual_seed(1)) - 5.0
    for batch in (mel[:1, :, :20], mel):
        with torch.inference_mode():
            want = generator(batch).numpy()
        (audio,) = runner(batch.numpy())
        assert audio.shape == want.shape == (batch.shape[0], 1, batch.shape[2] * 256)
        assert snr_db(want, audio) >= 60.0


def test_the_check_passes_the_exports_and_batches_the_vocoder_as_the_cases(exported):
    folder, fastpitch, generator, graphs = exported
    outputs = names(graphs["fastpitch"].outputs)
    all_cases = cases()
    assert [(case.name, case.batch) for case in all_cases] == [
        ("short", 1), ("long", 1), ("batch of 2: long..short", 2), ("batch of 2: long..short, other controls", 2),
    ]  # fmt: skip
    checks, mels = check_acoustic(
        "fastpitch", eager_acoustic(fastpitch, outputs), runners(folder, "fastpitch"), all_cases, Limits(), outputs
    )
    batches = vocoder_inputs(all_cases, mels)
    assert [case.name for case, _ in batches] == ["short", "long", "batch of 2: long..short"]
    padded = batches[2][1]
    lengths = mels["batch of 2: long..short"][1]
    assert padded.shape[2] == lengths.max() and np.all(padded[1, :, lengths[1] :] == np.float32(np.log(1e-5)))
    checks += check_vocoder("hifigan", eager_vocoder(generator), runners(folder, "hifigan"), batches, Limits())
    assert len(checks) == 2 * 4 + 2 * 3 and all(check.passed for check in checks)
    require_passed(checks)


def test_a_perturbed_weight_in_an_exported_file_fails_naming_the_model_and_the_input(exported, tmp_path):
    folder, fastpitch, _, graphs = exported
    model = onnx.load(str(folder / "fastpitch.onnx"))
    weight = max(model.graph.initializer, key=lambda tensor: np.prod(tensor.dims))  # the largest tensor
    values = numpy_helper.to_array(weight) + np.float32(0.01)
    weight.CopyFrom(numpy_helper.from_array(values, weight.name))
    onnx.save(model, str(tmp_path / "fastpitch.onnx"))
    outputs = names(graphs["fastpitch"].outputs)
    broken = {"onnx": OnnxModel(tmp_path / "fastpitch.onnx", threads=1)}
    checks, _ = check_acoustic("fastpitch", eager_acoustic(fastpitch, outputs), broken, cases(), Limits(), outputs)
    with pytest.raises(ExportMismatch) as error:
        require_passed(checks)
    assert "fastpitch onnx, input 'short': mel_max_abs_diff" in str(error.value)


def test_different_durations_fail_even_within_the_mel_tolerance(exported):
    folder, fastpitch, _, graphs = exported
    outputs = names(graphs["fastpitch"].outputs)
    exported_runner = runners(folder, "fastpitch")["onnx"]

    def one_frame_more(*inputs):
        mel, mel_lengths, durations = exported_runner(*inputs)
        return mel, mel_lengths, durations + (durations > 0)

    checks, _ = check_acoustic("fastpitch", eager_acoustic(fastpitch, outputs), {"onnx": one_frame_more}, cases()[:1],
                               Limits(mel_max_abs_diff=1.0), outputs)  # fmt: skip
    assert not checks[0].passed and "durations: 7 of 7 values differ from eager" in checks[0].describe()


def test_the_traced_length_regulator_gives_the_eager_frames_for_other_durations():
    encoded = torch.randn(2, 5, 3, generator=torch.Generator().manual_seed(0))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", torch.jit.TracerWarning)
        warnings.simplefilter("ignore", DeprecationWarning)  # torch.jit.trace is deprecated in recent PyTorch
        traced = torch.jit.trace(length_regulate, (encoded, torch.tensor([[0, 2, 0, 3, 1], [1, 0, 0, 0, 0]])))
    for durations in ([[4, 0, 1, 0, 0], [0, 0, 0, 2, 9]], [[0] * 5, [0] * 5], [[1] * 5, [0, 0, 0, 0, 1]]):
        want, got = length_regulate(encoded, torch.tensor(durations)), traced(encoded, torch.tensor(durations))
        assert torch.equal(got[0], want[0]) and torch.equal(got[1], want[1]), durations


def test_exporting_leaves_the_eager_model_as_it_was(tmp_path):
    fastpitch, _ = tiny_models()
    tokens, lengths = torch.tensor([LONG]), torch.tensor([len(LONG)])
    before = fastpitch.infer(tokens, lengths).mel
    write_onnx(export_graph(acoustic_model_kind("fastpitch"), fastpitch), tmp_path / "f.onnx")
    assert not fastpitch.training and torch.equal(fastpitch.infer(tokens, lengths).mel, before)


def test_the_vocoder_is_exported_in_the_1d_layout_and_the_callers_generator_keeps_its_rows(tmp_path):
    _, generator = tiny_models()
    assert generator.cpu_rows
    graph = export_graph(vocoder_kind("hifigan"), generator)
    assert graph.module.cpu_rows is False and generator.cpu_rows  # a copy was switched, not the caller's
    write_onnx(graph, tmp_path / "h.onnx")
    ops = {node.op_type for node in onnx.load(str(tmp_path / "h.onnx")).graph.node}
    assert "Conv" in ops and "Unsqueeze" not in ops  # no (B, C, 1, L) rows in the file


def test_a_vocoder_without_an_export_module_is_refused_by_name():
    with pytest.raises(UserError, match="WaveGlow cannot be exported yet.*exportable kinds: hifigan, fastpitch"):
        export_graph(vocoder_kind("waveglow"), torch.nn.Identity())


def test_controls_follow_the_inference_sections_pitch_transforms():
    assert Controls.from_inference({"pace": 1.2, "pitch_amplify": 2.0, "pitch_invert": True}) == Controls(
        1.2, 0.0, -2.0
    )
    assert Controls.from_inference({"pitch_flatten": True, "pitch_shift_hz": 10.0}) == Controls(1.0, 10.0, 0.0)


def test_one_text_is_still_checked_in_a_padded_batch():
    built = build_cases([("only", SHORT)], batch_size=4)
    assert [(case.name, case.batch) for case in built][1] == ("batch of 2: only..only[:4]", 2)
    assert built[1].tokens()[1].tolist() == [7, 4]


def test_snr_of_identical_and_of_mismatched_audio():
    audio = np.sin(np.arange(1000) / 10.0).astype(np.float32)
    assert snr_db(audio, audio) == 200.0
    assert snr_db(audio, audio * 1.001) == pytest.approx(60.0, abs=0.01)
    assert snr_db(audio, audio[:-1]) == -np.inf


def test_a_voice_card_with_a_missing_key_is_refused_naming_it(tmp_path):
    with pytest.raises(UserError, match="no voice card here"):
        read_card(tmp_path)
    (tmp_path / "voice.json").write_text(json.dumps({"format": "tts-pipeline-voice", "version": 1}))
    with pytest.raises(UserError, match=r"voice.json: acoustic_model: missing"):
        read_card(tmp_path)


def test_a_voice_exported_without_onnx_is_refused_by_the_onnx_runtime_runner(tmp_path):
    model = {"kind": "k", "files": {"torchscript": "k.ts"}, "inputs": [], "outputs": []}
    card = build_card(
        name="v", models={"acoustic_model": model, "vocoder": model}, source={"git_commit": "abc"}, export={},
        text={"cleaners": "c", "symbols_kind": "characters", "symbol_set": "s", "symbols": ["_"]},
        audio={"sampling_rate": 22050, "hop_length": 256, "n_mel_channels": 80}, controls=Controls().__dict__,
        synthesis={},
    )  # fmt: skip
    (tmp_path / "voice.json").write_text(json.dumps(card))
    assert read_card(tmp_path)["name"] == "v"
    with pytest.raises(UserError, match=r"voice.json: acoustic_model.files.onnx: no ONNX file \(not exported\)"):
        OnnxVoice.load(tmp_path)


def test_the_runtime_a_server_uses_imports_no_torch():
    code = (
        "import sys; import tts_pipeline.export.runtime, tts_pipeline.export.verify, tts_pipeline.export.cases; "
        "sys.exit('torch' in sys.modules)"
    )
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0


@pytest.mark.parametrize("injection", ["strided", "band_limited"])
@pytest.mark.parametrize("fmt", ["onnx", "torchscript"])
def test_a_vocoder_with_a_harmonic_source_exports_for_any_length(tmp_path, fmt, injection):
    """The source's ops (F0 bins, phase accumulation, the noise table, the band-limited sines at each
    stage's rate) in both formats, voiced throughout."""
    from tts_pipeline.config import HiFiGANConfig
    from tts_pipeline.models.hifigan import Generator

    cfg = HiFiGANConfig(
        resblock="2",
        upsample_rates=[8, 8, 4],
        upsample_kernel_sizes=[8, 8, 4],
        upsample_initial_channel=32,
        resblock_kernel_sizes=[3],
        resblock_dilation_sizes=[[1, 2]],
        upsampling="interpolate",
        source="harmonic",
        source_harmonics=8,
        source_injection=injection,
    )
    torch.manual_seed(0)
    generator = Generator(cfg, 80, 22050)
    generator.remove_weight_norm()
    with torch.no_grad():
        generator.pitch_head.layers[-1].bias[0] = 5.0  # every frame voiced
    graph = export_graph(vocoder_kind("hifigan"), generator.eval())
    path = tmp_path / ("hifigan.onnx" if fmt == "onnx" else "hifigan.ts")
    (write_onnx if fmt == "onnx" else write_torchscript)(graph, path)
    runner = OnnxModel(path, threads=1) if fmt == "onnx" else TorchScriptModel(path)
    mel = torch.randn(2, 80, 300, generator=torch.Generator().manual_seed(1)) - 5.0
    for batch in (mel[:1, :, :20], mel):  # 300 frames: longer than the noise table
        with torch.inference_mode():
            want = generator(batch).numpy()
            assert (generator.pitch_head.f0_of(generator.pitch_head(batch)) > 0).all()
        (audio,) = runner(batch.numpy())
        assert audio.shape == want.shape
        assert snr_db(want, audio) >= 60.0
