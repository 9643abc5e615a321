"""Networks and their losses: ``aligner`` (and, later, ``fastpitch`` and ``hifigan``)."""
