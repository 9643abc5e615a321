"""Inference benchmark and objective quality: device-synchronised timers, the repeat runner,
empirical latency percentiles and real-time factors, MCD-DTW / F0 / voicing metrics, and tables in
the layout of NVIDIA's published results.

Modules: ``timing`` (Timer, LatencySamples), ``runner`` (benchmark, CallResult, BenchmarkRun),
``stats`` (latency_stats, summarize, real-time factors), ``quality`` (SpeechQuality, mel_l1),
``report`` (Markdown tables, JSON-ready values), ``nvidia`` (NVIDIA's settings and published figures).

What the ``benchmark`` stage and ``bench-inference`` build on them: ``inference`` (precision plan, timing
a synthesizer, the speed sweep), ``vocoder`` (vocoders' mel L1 against ground-truth mels),
``reference`` (eSpeak NG or recorded references for synthesised sentences), ``training`` (training
throughput from ``metrics.json``), ``listening`` (the intelligibility table) with ``pauses`` (how quiet
each row's pauses are, and the synthesised WAVs' noise floor), ``document`` (``report.md`` from the
report's dict) and ``random_models`` (full-size random-weight models for speed alone).
"""
