"""Time FastPitch + HiFi-GAN inference on this machine: FastPitch latency for the 128-character phrase
and HiFi-GAN times real time, at batch 1 on 2 CPU threads unless told otherwise.

Models. By default both are full size with random weights: FastPitch 1.1 as the recipe configures it
(``FastPitchConfig()`` defaults, the 148 ``english_basic`` symbols, 80 mel channels) and HiFi-GAN v1
(``HiFiGANConfig()`` defaults, weight norm folded as for inference). Random weights would predict
arbitrary durations, so FastPitch's duration predictor still runs but its output is replaced by fixed
durations that spread NVIDIA's mel length for this phrase (8.05 s, 693 frames) over its symbols; the
work per call is then what a trained model does on it. ``--fastpitch`` / ``--hifigan`` load model
files instead (their own durations).

Procedure. Each of ``--runs`` runs makes ``--warmup`` untimed calls and then ``--repeats`` timed ones
through the benchmark stage's own code (:func:`tts_pipeline.benchmark.inference.time_synthesis`: the
runner, device-synchronised timers, inference mode), one call being FastPitch then HiFi-GAN on a batch
of ``--batch-size`` copies of the phrase. Printed per run: FastPitch p50 latency (ms) and HiFi-GAN x
real time (seconds of audio per second of HiFi-GAN compute); then the medians over the runs.

Precision. ``--amp`` is the synthesizer's: ``auto`` (the pipeline's default) on a CPU times the ways to
run each model (plain fp32, HiFi-GAN's fused copy in fp32, and where the CPU advertises bf16 the fused
bf16 copy and FastPitch held in bf16) on a short probe and keeps the fastest whose output holds
(:mod:`tts_pipeline.inference.auto_precision`; cached per CPU model and torch version); the figures it
chose by are printed first. ``off`` is plain fp32; ``bf16`` / ``fp16`` as in :mod:`tts_pipeline.precision`.

Side by side. ``--onnxruntime`` and ``--nvidia-root PATH`` time each model alone on several engines
with the same weights (random or ``--fastpitch`` / ``--hifigan``), all in the same ``--runs``
interleaved rounds of ``--repeats`` calls per engine (:mod:`tts_pipeline.benchmark.inference_sides`):
ours in ``--amp``; ours in plain fp32 (the model as it is, the reference of every output); with
``--onnxruntime`` ONNX Runtime on the models exported by the project's export graphs into a temporary
folder (all graph optimisations, ``--threads`` threads, CPU only;
:mod:`tts_pipeline.commands.onnxruntime_engine`); with ``--nvidia-root`` (a DeepLearningExamples
checkout, or its ``PyTorch/SpeechSynthesis/FastPitch`` folder) NVIDIA's FastPitch and HiFi-GAN
generator imported from there, in fp32 as their ``inference.py`` runs on a CPU
(:mod:`tts_pipeline.benchmark.nvidia_inference`). FastPitch is timed on the phrase, HiFi-GAN on a
``--hifigan-frames``-frame mel (default 500). Printed per model: each engine's median latency (and x
real time), its time over ours, and its output's SNR and max abs difference against plain fp32 (a
float32 engine computing the same function differs by rounding only). For example::

    tts-pipeline bench-inference --onnxruntime --nvidia-root ~/DeepLearningExamples --runs 5 --repeats 10

Speed variants (not side by side). ``--tf32 on`` lets float32 matrix products and convolutions
run in TF32 (:func:`tts_pipeline.precision.allow_tf32`; ``off``, the default, forbids both, so ``--amp
off --tf32 on`` is NVIDIA's "TF32"). ``--cuda-graph`` (CUDA only) captures the HiFi-GAN generator in a
CUDA graph for the mel shape of the phrase (:class:`CudaGraphVocoder`) and replays it; FastPitch stays
eager, its output length depends on the durations it predicts. ``--compile`` runs the generator through
``torch.compile(mode="reduce-overhead")`` (CUDA graphs of compiled kernels on CUDA, compiled kernels on
a CPU) and FastPitch's ``infer`` through ``torch.compile(dynamic=True)``. Either way the synthesizer's
own code path runs (its vocoder and FastPitch runners are replaced), and the first call, which
compiles or captures, is timed apart before the runs.
"""

from __future__ import annotations

import argparse
import statistics
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import contextlib
    from collections.abc import Callable

    import torch

    from tts_pipeline.benchmark.nvidia_code import NvidiaCode
    from tts_pipeline.inference import Synthesizer
    from tts_pipeline.precision import Precision


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from tts_pipeline.config import BenchmarkConfig
    from tts_pipeline.precision import add_tf32_argument

    parser.add_argument("--fastpitch", type=Path, help="FastPitch model.pt (default: full-size random weights)")
    parser.add_argument("--hifigan", type=Path, help="HiFi-GAN model.pt (default: v1, random weights)")
    parser.add_argument(
        "--phrases", type=Path, default=Path(BenchmarkConfig().phrases), help="phrase file; its first phrase is timed"
    )
    parser.add_argument("--threads", type=int, default=2, help="torch intra-op threads (default 2)")
    parser.add_argument("--device", default="cpu", help="cpu (default) or cuda")
    parser.add_argument(
        "--amp",
        choices=("auto", "off", "fp16", "bf16"),
        default="auto",
        help="our precision (default auto: on a CPU the fastest way per model whose output holds, measured)",
    )
    parser.add_argument("--batch-size", type=int, default=1, help="copies of the phrase per call (default 1)")
    parser.add_argument("--warmup", type=int, default=2, help="untimed calls per run (default 2)")
    parser.add_argument("--repeats", type=int, default=10, help="timed calls per run (default 10)")
    parser.add_argument("--runs", type=int, default=3, help="runs; medians over them are printed (default 3)")
    parser.add_argument("--denoising-strength", type=float, default=0.0, help="denoiser strength (default 0: off)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the random weights")
    parser.add_argument("--json", type=Path, help="also write every run's figures here")
    parser.add_argument(
        "--nvidia-root", type=Path, help="DeepLearningExamples checkout: time NVIDIA's models beside ours"
    )
    parser.add_argument(
        "--onnxruntime", action="store_true", help="time ONNX Runtime on the same models exported, beside ours"
    )
    parser.add_argument(
        "--hifigan-frames",
        type=int,
        default=500,
        help="mel frames HiFi-GAN vocodes side by side (--onnxruntime, --nvidia-root; default 500)",
    )
    add_tf32_argument(parser)
    parser.add_argument("--cuda-graph", action="store_true", help="replay HiFi-GAN from a CUDA graph (CUDA only)")
    parser.add_argument(
        "--compile", action="store_true", help="torch.compile HiFi-GAN (reduce-overhead) and FastPitch (dynamic)"
    )


def build_synthesizer(args: argparse.Namespace, text: str, device: torch.device) -> Synthesizer:
    """The synthesizer of the command line: model files, or full-size random models (module docstring)."""
    from tts_pipeline.benchmark.nvidia import BENCHMARK_AUDIO_SECONDS
    from tts_pipeline.benchmark.random_models import RECIPE_SYMBOL_SET, random_fastpitch, random_hifigan
    from tts_pipeline.config import AudioConfig, TextConfig
    from tts_pipeline.errors import UserError
    from tts_pipeline.inference import SynthesisOptions, Synthesizer, TextEncoder
    from tts_pipeline.models.hifigan.model_file import load_generator

    options = SynthesisOptions(
        batch_size=args.batch_size, denoising_strength=args.denoising_strength, vocoder_batching="padded"
    )
    if args.fastpitch is not None:
        if args.hifigan is None:
            raise UserError("--fastpitch needs --hifigan (the models must agree on their audio settings)")
        # Without a config, a foreign checkpoint (NVIDIA's, jik876's) is read with the recipe's
        # LJSpeech settings, the ones those published files were trained with.
        return Synthesizer.load(
            args.fastpitch,
            args.hifigan,
            options,
            text=TextConfig(),
            foreign_audio=AudioConfig(),
            device=device,
            amp=args.amp,
        )
    audio = AudioConfig()
    if args.hifigan is not None:
        vocoder, info = load_generator(args.hifigan, remove_weight_norm=True, audio=audio)
        audio = info.audio
    else:
        vocoder = random_hifigan(audio, seed=args.seed)
    encoder = TextEncoder(cleaners="english_cleaners_v2", symbols="characters", symbol_set=RECIPE_SYMBOL_SET)
    n_frames = round(BENCHMARK_AUDIO_SECONDS * audio.sampling_rate / audio.hop_length)
    fastpitch = random_fastpitch(len(encoder.encode(text)), n_frames, seed=args.seed, n_mels=audio.n_mel_channels)
    return Synthesizer(
        vocoder, audio, options, acoustic_model=fastpitch, text_encoder=encoder, device=device, amp=args.amp
    )


def side_by_side(args: argparse.Namespace) -> str | None:
    """The option that asks for the side-by-side timing (``--nvidia-root``, ``--onnxruntime``), else None."""
    if args.nvidia_root is not None:
        return "--nvidia-root"
    return "--onnxruntime" if args.onnxruntime else None


def check_arguments(args: argparse.Namespace) -> None:
    """UserError naming the option for counts out of range, options the side-by-side timing ignores,
    ``--cuda-graph`` off CUDA or ``--onnxruntime`` on it."""
    import torch

    from tts_pipeline.errors import UserError

    if min(args.threads, args.batch_size, args.repeats, args.runs, args.hifigan_frames) < 1 or args.warmup < 0:
        raise UserError("--threads, --batch-size, --repeats, --runs and --hifigan-frames must be >= 1, --warmup >= 0")
    beside = side_by_side(args)
    if beside is not None and args.denoising_strength > 0:
        raise UserError(f"--denoising-strength: the side-by-side timing runs no denoiser; leave it at 0 with {beside}")
    for option, given in (("--cuda-graph", args.cuda_graph), ("--compile", args.compile)):
        if given and beside is not None:
            raise UserError(f"{option}: the comparison with {beside} times the models as they are; drop one")
    if args.onnxruntime and torch.device(args.device).type != "cpu":
        raise UserError(f"--onnxruntime: ONNX Runtime runs on the CPU here; use --device cpu, got {args.device}")
    if args.cuda_graph and args.compile:
        raise UserError("--cuda-graph and --compile: choose one (compile's reduce-overhead mode replays CUDA graphs)")
    if args.cuda_graph and torch.device(args.device).type != "cuda":
        raise UserError(f"--cuda-graph: CUDA graphs need --device cuda, got --device {args.device}")


class CudaGraphVocoder:
    """The vocoder replayed from a CUDA graph captured on its first call, for that call's mel shape.

    Called where the synthesizer calls its vocoder: ``(B, n_mels, T)`` mels -> ``(B, 1, T x hop)`` audio,
    inside inference mode and the precision's autocast. The first call warms the vocoder up on a side
    stream (cuDNN picks its algorithms and the caching allocator its blocks outside the capture), then
    captures one call reading a static mel buffer; every call copies its mels into that buffer and replays.
    Autocast runs with its weight cache off inside the graph: cached casts made outside it would be freed
    when the synthesizer's autocast region ends, under a graph that still reads them.
    """

    def __init__(self, vocoder: Callable[[torch.Tensor], torch.Tensor], precision: Precision, warmup: int = 3):
        self.vocoder = vocoder
        self.precision = precision
        self.warmup = warmup
        self.graph: torch.cuda.CUDAGraph | None = None
        self.static_mel: torch.Tensor | None = None
        self.static_audio: torch.Tensor | None = None

    def _autocast(self) -> contextlib.AbstractContextManager[object]:
        import torch

        enabled = self.precision.amp != "off"
        return torch.autocast("cuda", dtype=self.precision.dtype, enabled=enabled, cache_enabled=False)

    def _capture(self, mels: torch.Tensor) -> None:
        import torch

        self.static_mel = mels.clone()
        side = torch.cuda.Stream(mels.device)
        side.wait_stream(torch.cuda.current_stream(mels.device))
        with torch.cuda.stream(side), self._autocast():
            for _ in range(self.warmup):
                self.vocoder(self.static_mel)
        torch.cuda.current_stream(mels.device).wait_stream(side)
        self.graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(self.graph), self._autocast():
            self.static_audio = self.vocoder(self.static_mel)

    def __call__(self, mels: torch.Tensor) -> torch.Tensor:
        from tts_pipeline.errors import UserError

        if self.graph is None:
            self._capture(mels)
        assert self.graph is not None and self.static_mel is not None and self.static_audio is not None
        if mels.shape != self.static_mel.shape:
            raise UserError(
                f"--cuda-graph: the graph was captured for mels of shape {tuple(self.static_mel.shape)}, "
                f"got {tuple(mels.shape)}"
            )
        self.static_mel.copy_(mels)
        self.graph.replay()
        return self.static_audio.clone()  # the next replay overwrites the static output; callers keep theirs


def compile_models(synth: Synthesizer) -> None:
    """Replace the synthesizer's runners by compiled ones (module docstring); its code path stays its own."""
    import torch

    from tts_pipeline.inference.fastpitch_acoustic import FastPitchRunner

    vocoder = torch.compile(synth.vocoder_runner, mode="reduce-overhead")

    def run_vocoder(mels: torch.Tensor) -> torch.Tensor:
        # Each call a new step of the CUDA graph trees, whose output buffers the next replay reuses: a clone
        # is what the synthesizer keeps.
        torch.compiler.cudagraph_mark_step_begin()
        return vocoder(mels).clone()

    synth.vocoder_runner = run_vocoder  # type: ignore[assignment]
    runner = synth.acoustic_runner
    assert isinstance(runner, FastPitchRunner), "bench-inference runs FastPitch"
    # The runner calls the model's ``infer``, not ``forward``: an instance attribute shadows the method.
    runner.model.infer = torch.compile(runner.model.infer, dynamic=True)  # type: ignore[method-assign]


def run_side_by_side(args: argparse.Namespace, synth: Synthesizer, tokens: list[int], code: NvidiaCode | None) -> None:
    """Each model on every engine asked for (module docstring): a table per model, and ``--json``."""
    import tempfile

    from tts_pipeline.benchmark.inference_sides import OURS_FP32, compare_models, format_comparison, ours_engine

    engines = [ours_engine(synth)]
    if synth.precision.amp != "off" or synth.auto_choices:  # else ours is plain fp32 already
        engines.append(ours_engine(synth.with_options(synth.options, "off"), OURS_FP32))
    reference = engines[-1].name
    with tempfile.TemporaryDirectory(prefix="bench-inference-onnx-") as folder:
        if args.onnxruntime:
            from tts_pipeline.commands.onnxruntime_engine import onnxruntime_engine

            print("exporting both models to ONNX ...", flush=True)
            engines.append(onnxruntime_engine(synth, Path(folder), args.threads))
        if code is not None:
            from tts_pipeline.benchmark.nvidia_inference import nvidia_engine

            print(f"NVIDIA's code from {code.folder}; in fp32 under torch.no_grad(), as their inference.py", flush=True)
            engines.append(nvidia_engine(code, synth))
        rows = compare_models(
            engines,
            tokens,
            device=synth.device,
            hop_length=synth.audio.hop_length,
            sampling_rate=synth.audio.sampling_rate,
            reference=reference,
            batch_size=args.batch_size,
            hifigan_frames=args.hifigan_frames,
            rounds=args.runs,
            repeats=args.repeats,
            warmup=args.warmup,
            on_row=lambda row: print(format_comparison(row), flush=True),
        )
    if args.json is not None:
        from tts_pipeline.files import write_json

        payload = {
            "precision": synth.precision.label,
            "auto": [choice.as_dict() for choice in synth.auto_choices],
            "models": [row.as_dict() for row in rows],
        }
        write_json(args.json, payload)


def run(args: argparse.Namespace) -> None:
    from tts_pipeline.precision import tf32_allowed

    with tf32_allowed(args.tf32 == "on"):  # process-wide: restored for whatever runs next in this process
        _run(args)


def _run(args: argparse.Namespace) -> None:
    import torch

    from tts_pipeline.benchmark.environment import command_environment
    from tts_pipeline.benchmark.inference import time_synthesis
    from tts_pipeline.cpu import cpu_model_name
    from tts_pipeline.inference import read_phrases

    check_arguments(args)
    code = None
    if args.nvidia_root is not None:  # a wrong path fails before any model is built
        from tts_pipeline.benchmark.nvidia_code import load_nvidia_code

        code = load_nvidia_code(args.nvidia_root)
    torch.set_num_threads(args.threads)
    device = torch.device(args.device)
    phrase = read_phrases(args.phrases)[0]
    synth = build_synthesizer(args, phrase.text, device)
    tokens = synth.encode(phrase.text)
    source = "model files" if args.fastpitch is not None else "random weights, full size"
    print(
        f"{len(phrase.text)}-character phrase {phrase.name!r} ({len(tokens)} symbols), {source}, batch "
        f"{args.batch_size}, {synth.precision.label} ({synth.precision.reason}), on {device} with "
        f"{torch.get_num_threads()} threads; {args.runs} runs of {args.warmup} warm-up + {args.repeats} timed calls; "
        f"TF32 {args.tf32}, CUDA graph {'on' if args.cuda_graph else 'off'}, "
        f"torch.compile {'on' if args.compile else 'off'}"
    )
    for choice in synth.auto_choices:
        print(f"auto on {cpu_model_name()}, torch {torch.__version__}: {choice.describe()}")
    if side_by_side(args) is not None:
        run_side_by_side(args, synth, tokens, code)
        return
    first_call = None
    if args.cuda_graph or args.compile:
        if args.cuda_graph:
            synth.vocoder_runner = CudaGraphVocoder(synth.vocoder_runner, synth.precision)  # type: ignore[assignment]
        else:
            compile_models(synth)
        row = time_synthesis(synth, tokens, args.batch_size, warmup=0, repeats=1).summarize(synth.audio.sampling_rate)
        first_call = {"fastpitch_s": row["fastpitch_latency_p50_s"], "hifigan_s": row["vocoder_latency_p50_s"]}
        print(
            f"first call ({'capture' if args.cuda_graph else 'compilation'}): FastPitch "
            f"{first_call['fastpitch_s']:.1f} s, HiFi-GAN {first_call['hifigan_s']:.1f} s"
        )
    runs: list[dict[str, Any]] = []
    for number in range(1, args.runs + 1):
        row = time_synthesis(synth, tokens, args.batch_size, warmup=args.warmup, repeats=args.repeats).summarize(
            synth.audio.sampling_rate
        )
        # The row's vocoder_... figures are HiFi-GAN's: this command builds no other vocoder.
        figures = {
            "fastpitch_p50_ms": 1000.0 * row["fastpitch_latency_p50_s"],
            "fastpitch_mean_ms": 1000.0 * row["fastpitch_latency_mean_s"],
            "hifigan_p50_ms": 1000.0 * row["vocoder_latency_p50_s"],
            "total_p50_ms": 1000.0 * row["latency_p50_s"],  # per call, FastPitch + HiFi-GAN: NVIDIA's latency
            "hifigan_x_real_time": row["vocoder_x_real_time"],
            "total_x_real_time": row["x_real_time"],
            "audio_seconds_per_utterance": row["audio_seconds_per_utterance"],
        }
        runs.append(figures)
        print(
            f"run {number}: FastPitch p50 {figures['fastpitch_p50_ms']:.1f} ms "
            f"(mean {figures['fastpitch_mean_ms']:.1f}); HiFi-GAN p50 {figures['hifigan_p50_ms']:.0f} ms = "
            f"{figures['hifigan_x_real_time']:.2f}x real time; both {figures['total_x_real_time']:.2f}x real time "
            f"({figures['audio_seconds_per_utterance']:.2f} s of audio)"
        )
    medians = {key: statistics.median(run[key] for run in runs) for key in runs[0]}
    print(
        f"median of {args.runs} runs: FastPitch {medians['fastpitch_p50_ms']:.1f} ms (p50), "
        f"HiFi-GAN {medians['hifigan_x_real_time']:.2f}x real time, FastPitch + HiFi-GAN "
        f"{medians['total_x_real_time']:.2f}x real time"
    )
    if args.json is not None:
        from tts_pipeline.files import write_json

        payload = {
            **command_environment(device, synth.precision.label, args.tf32),
            "cuda_graph": args.cuda_graph,
            "compile": args.compile,
            "auto": [choice.as_dict() for choice in synth.auto_choices],
            "source": source,
            "phrase": phrase.text,
            "symbols": len(tokens),
            "batch_size": args.batch_size,
            "first_call": first_call,
            "runs": runs,
            "medians": medians,
        }
        write_json(args.json, payload)
