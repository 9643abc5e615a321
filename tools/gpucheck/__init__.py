"""`make gpu-check`: the project's whole GPU run in one command, and its rehearsal on a CPU.

The plan (:mod:`gpucheck.plan`) says what runs; :mod:`gpucheck.steps` runs it; :mod:`gpucheck.record`
writes the Markdown + JSON record after every step. Standard library only (PyYAML for the demo's
folder): it starts before the kit that brings the project's dependencies is installed.
"""
