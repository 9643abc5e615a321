"""The voice as files a server runs without this package's models: ONNX and TorchScript exports of the
acoustic model and the vocoder, a voice card (``voice.json``: text front end, symbols, audio settings,
pitch statistics, controls, where it came from) and their check against the eager models.

Modules, one job each: ``graphs`` (what an exported graph is: a module, its inputs and outputs), one
module per exportable kind (``fastpitch_graph``, ``hifigan_graph``; a kind's row in
:mod:`tts_pipeline.config.model_kinds` names it), ``onnx_file`` and ``torchscript`` (write a graph),
``cases`` (the inputs the check feeds), ``compare`` (eager against exported, per input), ``verify``
(the figures and their limits), ``voice_card`` (``voice.json``), ``runtime`` (an exported voice run
with ONNX Runtime alone) and ``voice`` (the ``export_voice`` stage's work, in that order).

``runtime``, ``voice_card``, ``verify`` and ``cases`` import neither torch nor the models, so a server
can use them with ONNX Runtime and numpy only; this file imports nothing for the same reason.
"""
