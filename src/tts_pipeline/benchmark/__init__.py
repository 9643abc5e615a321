"""Inference benchmark and objective quality: device-synchronised timers, the repeat runner,
empirical latency percentiles and real-time factors, MCD-DTW / F0 / voicing metrics, and tables in
the layout of NVIDIA's published results.

Modules: ``timing`` (Timer, LatencySamples), ``runner`` (benchmark, CallResult, BenchmarkRun),
``stats`` (latency_stats, summarize, real-time factors), ``quality`` (SpeechQuality, mel_l1),
``report`` (Markdown tables, JSON-ready values), ``nvidia`` (NVIDIA's settings and published figures).
"""
