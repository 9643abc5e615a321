"""Load-test the speech server: latency, time to first audio, throughput and memory under concurrent clients.

Starts ``tts-pipeline serve VOICE`` on a free local port (its own process group, output in a log file)
unless ``--url`` names a running server of the same voice, waits for ``/healthz``, and measures:

1. Levels. For each ``--concurrency`` (default 1,4,16), closed-loop clients send ``--requests``
   requests (default 12.5 x concurrency within 50..200) of the held-out sentences and the
   128-character benchmark phrase, in turn, until done or ``--time-limit`` seconds passed. Per level:
   p50/p95/p99 latency (sending to the last audio byte), p50/p95 time to first audio (sending to
   the first audio bytes), successful requests per second, x real time (seconds of audio delivered
   per wall-clock second), and failures by status (:mod:`tts_pipeline.serving.load_test`).
2. The 128-character phrase through the server against in-process synthesis with the same engine and
   threads (``Speaker.speak``), in ``--rounds`` interleaved rounds of ``--repeats`` calls; the ratio of
   medians, server / in-process, is accepted up to 1.3.
3. Time to first audio of a ``--paragraph-chars`` (1,000) character paragraph of the held-out
   sentences, alone on the server, median of ``--paragraph-requests``; accepted up to 250 ms.
4. Memory. The server's resident memory (its process and children) before and after
   ``--memory-requests`` (1,000) short requests at ``--memory-concurrency``, after the phases above
   have warmed it up; the growth in percent shows a leak.

Then the server is stopped with SIGTERM; an unclean exit fails the command once the figures are out.
Prints a table and, with ``--json``, writes every figure with the CPU model, thread settings, engine
and voice. The client runs on the same machine and takes some of its CPU, as the output says. For
example::

    tts-pipeline bench-serve results/demo/export --engine onnx --threads 2 --json bench-serve.json
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tts_pipeline.serving.load_test import RequestResult

HELD_OUT = "config/phrases/demo.txt"
SHORT_CHARS = 64  # the memory phase's requests: held-out sentences up to this long


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from tts_pipeline.config import BenchmarkConfig

    parser.add_argument("voice", help="export folder (or models:/ URI): the server's voice, also loaded in-process")
    parser.add_argument("--url", help="a running server of this voice (default: start one)")
    parser.add_argument("--server-pid", type=int, help="with --url: the server's process id, for its memory")
    parser.add_argument("--engine", choices=("onnx", "torch", "auto"), default="onnx", help="server engine")
    parser.add_argument("--threads", type=int, help="intra-op threads per engine call (default: the engine's)")
    parser.add_argument("--workers", type=int, default=1, help="server synthesis workers (default 1)")
    parser.add_argument("--queue", type=int, help="server queue (default: enough for the highest concurrency)")
    parser.add_argument("--concurrency", default="1,4,16", help="comma-separated levels (default 1,4,16)")
    parser.add_argument("--requests", help="requests per level: one number or one per level (default 12.5 x c)")
    parser.add_argument("--time-limit", type=float, default=300.0, help="seconds per level (default 300)")
    parser.add_argument("--request-timeout", type=float, default=120.0, help="seconds per request (default 120)")
    parser.add_argument("--format", choices=("wav", "pcm", "flac"), default="wav", help="audio asked for")
    parser.add_argument("--phrases", type=Path, default=Path(HELD_OUT), help=f"held-out sentences ({HELD_OUT})")
    parser.add_argument(
        "--benchmark-phrase", type=Path, default=Path(BenchmarkConfig().phrases), help="the 128-character phrase file"
    )
    parser.add_argument("--warmup", type=int, default=4, help="requests before the first level (default 4)")
    parser.add_argument("--rounds", type=int, default=7, help="interleaved rounds against in-process (default 7)")
    parser.add_argument("--repeats", type=int, default=3, help="calls per side and round (default 3)")
    parser.add_argument("--paragraph-chars", type=int, default=1000, help="long paragraph length (default 1000)")
    parser.add_argument("--paragraph-requests", type=int, default=5, help="long paragraph requests (default 5)")
    parser.add_argument("--memory-requests", type=int, default=1000, help="short requests between RSS readings")
    parser.add_argument("--memory-concurrency", type=int, default=4, help="clients of the memory phase (default 4)")
    parser.add_argument("--ready-timeout", type=float, default=180.0, help="seconds to wait for /healthz")
    parser.add_argument("--server-log", type=Path, help="the started server's output (default: a temporary file)")
    parser.add_argument("--json", type=Path, help="write every figure here")


def levels(args: argparse.Namespace) -> list[tuple[int, int]]:
    """``(concurrency, requests)`` per level; UserError naming the option for a bad list."""
    from tts_pipeline.errors import UserError

    try:
        concurrency = [int(part) for part in args.concurrency.split(",")]
        requests = [int(part) for part in args.requests.split(",")] if args.requests else []
    except ValueError:
        raise UserError(f"--concurrency / --requests: expected comma-separated whole numbers, got "
                        f"{args.concurrency!r} / {args.requests!r}") from None  # fmt: skip
    if not requests:
        requests = [min(200, max(50, round(12.5 * level))) for level in concurrency]
    elif len(requests) == 1:
        requests *= len(concurrency)
    if len(requests) != len(concurrency):
        raise UserError(f"--requests: one number or one per level ({len(concurrency)}), got {args.requests!r}")
    if min(concurrency + requests) < 1:
        raise UserError("--concurrency and --requests: expected numbers >= 1")
    return list(zip(concurrency, requests, strict=True))


def check_arguments(args: argparse.Namespace) -> None:
    from tts_pipeline.errors import UserError

    counts = ("rounds", "repeats", "paragraph_chars", "paragraph_requests", "memory_concurrency", "workers")
    for name in counts:
        if getattr(args, name) < 1:
            raise UserError(f"--{name.replace('_', '-')}: expected >= 1, got {getattr(args, name)}")
    if args.warmup < 0 or args.memory_requests < 0:
        raise UserError("--warmup and --memory-requests: expected >= 0")
    if min(args.time_limit, args.request_timeout, args.ready_timeout) <= 0:
        raise UserError("--time-limit, --request-timeout and --ready-timeout: expected seconds > 0")
    if args.url is None and args.server_pid is not None:
        raise UserError("--server-pid: only with --url (a started server's process is known)")


def server_options(args: argparse.Namespace, queue: int) -> list[str]:
    """The options the started server gets beyond its voice, host and port."""
    options = ["--engine", args.engine, "--workers", str(args.workers), "--queue", str(queue)]
    return options + (["--threads", str(args.threads)] if args.threads is not None else [])


def thread_settings(args: argparse.Namespace, queue: int | None) -> dict[str, Any]:
    """What decides how many cores the server and the in-process side use."""
    variables = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")
    return {
        "engine_threads": args.threads,  # None: the engine's own default
        "workers": args.workers,
        "queue": queue,
        "cpu_count": os.cpu_count(),
        "usable_cpus": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count(),
        "environment": {name: os.environ.get(name) for name in variables},
    }


def run(args: argparse.Namespace) -> None:
    import contextlib
    import logging
    import tempfile

    from tts_pipeline.errors import UserError
    from tts_pipeline.serving.server_process import ServerProcess, wait_healthy

    check_arguments(args)
    plan = levels(args)
    logging.getLogger("httpx").setLevel(logging.WARNING)  # it logs every request at INFO: thousands of lines
    queue = args.queue if args.queue is not None else max(16, *(level for level, _ in plan))
    with contextlib.ExitStack() as stack:
        if args.url is None:
            log = args.server_log or Path(stack.enter_context(tempfile.TemporaryDirectory())) / "server.log"
            server = stack.enter_context(ServerProcess.start(Path(args.voice), server_options(args, queue), log))
            print(f"started tts-pipeline serve on {server.url} (pid {server.pid}, log {log})", flush=True)
            health = server.wait_ready(args.ready_timeout)
            url, pid = server.url, server.pid
        else:
            server, url, pid = None, args.url.rstrip("/"), args.server_pid
            health = wait_healthy(url, args.ready_timeout)
            queue = health.get("queue_limit")
        record = measure(args, plan, url, pid, health)
        record["threads"] = thread_settings(args, queue)
        record["server"] = {"url": url, "started": server is not None, "health": health}
        if server is not None:
            stopped = server.stop()
            record["server"]["stop"] = {"exit_code": stopped.exit_code, "seconds": stopped.seconds,
                                        "killed": stopped.killed, "clean": stopped.clean}  # fmt: skip
            print(f"server stopped with SIGTERM in {stopped.seconds:.1f} s, exit code {stopped.exit_code}"
                  + (" (killed: it outlived the grace period)" if stopped.killed else ""), flush=True)  # fmt: skip
    if args.json is not None:
        import json

        from tts_pipeline.files import write_json

        write_json(args.json, record)
        print(json.dumps({"json": str(args.json)}))
    if server is not None and not server.stopped.clean:
        raise UserError(f"the server did not exit cleanly after SIGTERM (exit code {server.stopped.exit_code})")


def measure(args: argparse.Namespace, plan: list[tuple[int, int]], url: str, pid: int | None,
            health: dict[str, Any]) -> dict[str, Any]:  # fmt: skip
    """Every phase of the module docstring against the server at ``url``; the JSON record."""
    import asyncio

    from tts_pipeline.benchmark.environment import cpu_name
    from tts_pipeline.inference.phrases import read_phrases
    from tts_pipeline.serving import load_report
    from tts_pipeline.serving.load_test import paragraph, run_level
    from tts_pipeline.serving.server_process import rss_bytes

    held_out = [phrase.text for phrase in read_phrases(args.phrases)]
    phrase = read_phrases(args.benchmark_phrase)[0].text
    texts = [*held_out, phrase]
    engine = str(health.get("engine") or args.engine)
    print(f"voice {health.get('voice')!r}, {engine} engine, {health.get('sampling_rate')} Hz; {cpu_name()}, "
          f"{os.cpu_count()} CPUs shared by the server and this client", flush=True)  # fmt: skip

    def level(concurrency: int, requests: int, pool: list[str] = texts) -> Any:
        return asyncio.run(run_level(url, pool, concurrency=concurrency, requests=requests, fmt=args.format,
                                     time_limit_s=args.time_limit, timeout_s=args.request_timeout))  # fmt: skip

    rss_ready = rss_bytes(pid) if pid else None
    warmup = load_report.summarize_level(level(1, args.warmup)) if args.warmup else None
    rows = []
    for concurrency, requests in plan:
        rows.append(load_report.summarize_level(level(concurrency, requests)))
        table = load_report.format_levels(rows[-1:]).splitlines()
        print("\n".join(table if len(rows) == 1 else table[1:]), flush=True)  # the header once, then a row each
    comparison = compare_in_process(args, url, phrase, engine, str(health.get("voice")))
    long_text = paragraph(held_out, args.paragraph_chars)
    long_results = send_one_at_a_time(url, [long_text] * args.paragraph_requests, args)
    long = {"chars": len(long_text), **load_report.summarize_requests(long_results)}
    memory = None
    if pid and args.memory_requests:
        short = [text for text in held_out if len(text) <= SHORT_CHARS] or [min(held_out, key=len)]
        before = rss_bytes(pid)
        short_run = level(args.memory_concurrency, args.memory_requests, short)
        errors = sum(not result.ok for result in short_run.results)
        memory = load_report.memory_figures(before, rss_bytes(pid), len(short_run.results), errors)
        memory["rss_at_ready_mib"] = rss_ready / 2**20 if rss_ready else None
        memory["time_limited"] = short_run.time_limited
    checks = load_report.acceptance(comparison["ratio"], long["first_audio_median_ms"])
    print_report(rows, comparison, long, memory, checks)
    return {
        "voice": health.get("voice"),
        "engine": engine,
        "cpu": cpu_name(),
        "format": args.format,
        "texts": {"phrases": len(held_out), "benchmark_phrase": phrase},
        "warmup": warmup,
        "levels": rows,
        "in_process_comparison": comparison,
        "paragraph": long,
        "memory": memory,
        "acceptance": checks,
    }


def send_one_at_a_time(url: str, texts: list[str], args: argparse.Namespace) -> list[RequestResult]:
    """Each text sent alone, one after the other, over one connection."""
    from tts_pipeline.serving.load_test import blocking_sender

    with blocking_sender(url, args.request_timeout, args.format) as send:
        return [send(text) for text in texts]


def compare_in_process(args: argparse.Namespace, url: str, phrase: str, engine: str, served: str) -> dict[str, Any]:
    """The phrase through the server (whole answer) against ``Speaker.speak`` here, same engine and
    threads, interleaved (:mod:`tts_pipeline.benchmark.side_by_side`). ``served``: the server's voice."""
    from tts_pipeline.benchmark.side_by_side import interleaved
    from tts_pipeline.errors import UserError
    from tts_pipeline.serving.load_report import error_counts
    from tts_pipeline.serving.load_test import blocking_sender
    from tts_pipeline.serving.speaker import Speaker
    from tts_pipeline.serving.voice_source import resolve_voice

    speaker = Speaker.load(resolve_voice(args.voice), engine=engine, threads=args.threads)
    if speaker.name != served:  # a --url server of another voice: the ratio would compare two voices
        raise UserError(f"{args.voice}: voice {speaker.name!r}, but the server at {url} speaks {served!r}")
    results: list[RequestResult] = []
    with blocking_sender(url, args.request_timeout, "wav") as send:
        calls = {"server": lambda: results.append(send(phrase)), "in_process": lambda: speaker.speak(phrase)}
        timed = interleaved(calls, rounds=args.rounds, repeats=args.repeats, warmup=2)
    errors = error_counts(results)
    server_s, local_s = timed.median("server"), timed.median("in_process")
    return {
        "chars": len(phrase),
        "rounds": args.rounds,
        "repeats": args.repeats,
        "server_median_ms": 1000.0 * server_s,
        "in_process_median_ms": 1000.0 * local_s,
        "server_round_medians_ms": [1000.0 * s for s in timed.round_medians("server")],
        "in_process_round_medians_ms": [1000.0 * s for s in timed.round_medians("in_process")],
        "errors_by_kind": errors,
        # a failed request is fast: with any, the ratio would flatter the server
        "ratio": None if errors else server_s / local_s,
    }


def print_report(rows: list[dict[str, Any]], comparison: dict[str, Any], long: dict[str, Any],
                 memory: dict[str, Any] | None, checks: dict[str, Any]) -> None:  # fmt: skip
    """The table and the lines under it."""
    from tts_pipeline.serving.load_report import figure, format_checks, format_levels

    print("\ntimes in ms; '1st' = time to first audio; x RT = seconds of audio per wall-clock second")
    print(format_levels(rows))
    print(f"{comparison['chars']}-character phrase: server {figure(comparison['server_median_ms'])} ms, "
          f"in-process {figure(comparison['in_process_median_ms'])} ms (medians), "
          f"ratio {figure(comparison['ratio'], 2)}")  # fmt: skip
    print(f"paragraph of {long['chars']} characters: first audio {figure(long['first_audio_median_ms'])} ms, "
          f"whole answer {figure(long['latency_median_ms'])} ms (medians of {long['sent']})")  # fmt: skip
    if memory is not None:
        print(f"server memory: {memory['rss_before_mib']:.0f} MiB before {memory['requests']} short requests, "
              f"{memory['rss_after_mib']:.0f} MiB after ({memory['growth_percent']:+.1f} %), "
              f"{memory['errors']} errors")  # fmt: skip
    else:
        print("server memory: not measured (--url without --server-pid, or --memory-requests 0)")
    for line in format_checks(checks):
        print(line)
