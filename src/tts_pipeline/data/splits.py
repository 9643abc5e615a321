"""Dividing valid utterances into train / val / test.

Two schemes (``data.split.scheme``):

- ``ljspeech``: NVIDIA's fixed "v3" split of LJSpeech-1.1 (100 val, 500 test, 4 discarded, the rest
  train). Every val and test id must be present and valid: the split is never shrunk silently,
  because results would no longer be comparable with NVIDIA's.
- ``random``: a seeded split of any corpus with ``val_size`` / ``test_size`` utterances. An id's
  place depends only on the seed and the id itself, so the split does not change when the input is
  reordered, and does not depend on the Python or NumPy version.

A multi-speaker corpus (``speakers``: the speaker of every id) is split per speaker: val and test hold
each speaker in proportion to its share of the corpus (:func:`speaker_quotas`, largest remainders, so
the sizes still add up to ``val_size`` / ``test_size``), and each speaker's ids are ranked by the same
hash. Under either scheme a speaker with no training utterance is an error naming it: a model cannot
learn a voice it never hears, nor normalise its pitch without its statistics.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from tts_pipeline.config import SplitConfig
from tts_pipeline.data.ljspeech_split import DISCARDED_IDS, TEST_IDS, VAL_IDS
from tts_pipeline.errors import UserError

SPLIT_NAMES: tuple[str, ...] = ("train", "val", "test")


class SplitError(UserError):
    """The valid utterances cannot be split as configured."""


@dataclass(frozen=True)
class SplitResult:
    """Ids per split (each list sorted) and the ids left out of every split on purpose."""

    splits: dict[str, list[str]]
    discarded: list[str] = field(default_factory=list)

    @property
    def sizes(self) -> dict[str, int]:
        return {name: len(self.splits[name]) for name in SPLIT_NAMES}


def split_ids(
    ids: Iterable[str],
    config: SplitConfig,
    *,
    rejected: Mapping[str, str] | None = None,
    speakers: Mapping[str, str] | None = None,
) -> SplitResult:
    """Split the valid ``ids`` by ``config.scheme``.

    ``rejected`` maps ids that failed validation to a short reason; it only makes error messages
    more precise (an id missing from the ljspeech split is "rejected: clipped" rather than absent).
    ``speakers`` maps every id to its speaker in a multi-speaker corpus (None: one speaker); the random
    split is then balanced per speaker, and a speaker missing from the train split is a SplitError.
    """
    if config.scheme == "ljspeech":
        result = ljspeech_split(ids, rejected=rejected)
    elif config.scheme == "random":
        size = {"val_size": config.val_size, "test_size": config.test_size, "seed": config.seed}
        result = speaker_split(ids, speakers, **size) if speakers else random_split(ids, **size)
    else:
        raise SplitError(f"data.split.scheme: expected 'ljspeech' or 'random', got {config.scheme!r}")
    if speakers:
        check_speakers_in_train(result, speakers, config.scheme)
    return result


def ljspeech_split(ids: Iterable[str], *, rejected: Mapping[str, str] | None = None) -> SplitResult:
    """NVIDIA's v3 split: val and test are fixed, train is every other id minus the discarded 4.

    Raises :class:`SplitError` when a val/test id is not among ``ids``, or when the corpus does
    not look like LJSpeech at all.
    """
    valid = set(ids)
    rejected = dict(rejected or {})
    known = VAL_IDS | TEST_IDS | DISCARDED_IDS
    if not (valid | set(rejected)) & known:
        raise SplitError(_not_ljspeech_message(valid | set(rejected)))
    missing = {name: sorted(fixed - valid) for name, fixed in (("val", VAL_IDS), ("test", TEST_IDS))}
    if missing["val"] or missing["test"]:
        raise SplitError(_missing_ids_message(missing, rejected))
    splits = {
        "train": sorted(valid - VAL_IDS - TEST_IDS - DISCARDED_IDS),
        "val": sorted(VAL_IDS),
        "test": sorted(TEST_IDS),
    }
    result = SplitResult(splits=splits, discarded=sorted(valid & DISCARDED_IDS))
    check_disjoint(result.splits)
    return result


def random_split(ids: Iterable[str], *, val_size: int, test_size: int, seed: int) -> SplitResult:
    """A seeded split: ``val_size`` val ids, ``test_size`` test ids, the rest train.

    Ids are ranked by a hash of (seed, id), so the outcome depends on nothing but the seed and the
    set of ids. Raises :class:`SplitError` when the sizes leave no training utterance.
    """
    unique = sorted(set(ids))
    if val_size + test_size >= len(unique):
        raise SplitError(
            f"data.split: val_size ({val_size}) + test_size ({test_size}) = {val_size + test_size} "
            f"leaves no training utterances out of {len(unique)} valid ones; lower the sizes "
            f"(they must sum to less than {len(unique)})"
        )
    ranked = sorted(unique, key=lambda utterance_id: _rank_key(seed, utterance_id))
    splits = {
        "val": sorted(ranked[:val_size]),
        "test": sorted(ranked[val_size : val_size + test_size]),
        "train": sorted(ranked[val_size + test_size :]),
    }
    splits = {name: splits[name] for name in SPLIT_NAMES}
    check_disjoint(splits)
    return SplitResult(splits=splits)


def speaker_quotas(counts: Mapping[str, int], size: int) -> dict[str, int]:
    """``size`` shared among speakers in proportion to ``counts`` (utterances per speaker): each gets the
    whole part of its share, and the units left over go to the largest remainders (ties: the name's order),
    so the quotas sum to ``size`` exactly. ``size`` must not exceed the total count."""
    total = sum(counts.values())
    shares = {name: size * count / total for name, count in counts.items()}
    quotas = {name: int(share) for name, share in shares.items()}
    left = size - sum(quotas.values())
    by_remainder = sorted(counts, key=lambda name: (-(shares[name] - quotas[name]), name))
    for name in by_remainder[:left]:
        quotas[name] += 1
    return quotas


def speaker_split(
    ids: Iterable[str], speakers: Mapping[str, str], *, val_size: int, test_size: int, seed: int
) -> SplitResult:
    """A seeded split balanced per speaker: ``val_size`` val and ``test_size`` test ids, shared among the
    speakers in proportion to their utterances (:func:`speaker_quotas`), each speaker's ids ranked by the
    hash of :func:`random_split`. Raises :class:`SplitError` when the sizes leave no training utterance,
    or leave a speaker none (naming it and its counts)."""
    unique = sorted(set(ids))
    if val_size + test_size >= len(unique):
        return random_split(unique, val_size=val_size, test_size=test_size, seed=seed)  # raises its error
    by_speaker: dict[str, list[str]] = {}
    for utterance_id in unique:
        by_speaker.setdefault(speakers[utterance_id], []).append(utterance_id)
    counts = {name: len(members) for name, members in sorted(by_speaker.items())}
    val_quotas, test_quotas = speaker_quotas(counts, val_size), speaker_quotas(counts, test_size)
    starved = [name for name, count in counts.items() if val_quotas[name] + test_quotas[name] >= count]
    if starved:
        described = "; ".join(
            f"{name}: {counts[name]} utterance(s), {val_quotas[name]} to val and {test_quotas[name]} to test"
            for name in starved
        )
        raise SplitError(
            f"data.split: val_size ({val_size}) and test_size ({test_size}), shared among the speakers in "
            f"proportion, leave no training utterance to speaker(s) {', '.join(starved)} ({described}); lower "
            "the sizes or give these speakers more utterances"
        )
    splits: dict[str, list[str]] = {name: [] for name in SPLIT_NAMES}
    for name, members in by_speaker.items():
        ranked = sorted(members, key=lambda utterance_id: _rank_key(seed, utterance_id))
        n_val, n_test = val_quotas[name], test_quotas[name]
        splits["val"] += ranked[:n_val]
        splits["test"] += ranked[n_val : n_val + n_test]
        splits["train"] += ranked[n_val + n_test :]
    splits = {name: sorted(splits[name]) for name in SPLIT_NAMES}
    check_disjoint(splits)
    return SplitResult(splits=splits)


def check_speakers_in_train(result: SplitResult, speakers: Mapping[str, str], scheme: str) -> None:
    """SplitError naming every speaker of the val or test split that has no training utterance."""
    in_train = {speakers[utterance_id] for utterance_id in result.splits["train"]}
    held_out = {speakers[utterance_id] for name in ("val", "test") for utterance_id in result.splits[name]}
    missing = sorted(held_out - in_train)
    if missing:
        raise SplitError(
            f"data.split (scheme {scheme!r}): speaker(s) {', '.join(missing)} have no utterance in the train "
            "split, only in val/test; every speaker must be trained on (its voice and its pitch statistics)"
        )


def speaker_sizes(result: SplitResult, speakers: Mapping[str, str]) -> dict[str, dict[str, int]]:
    """``{speaker: {split: utterances}}``, speakers sorted: what validation.json records of the split."""
    sizes: dict[str, dict[str, int]] = {
        name: dict.fromkeys(SPLIT_NAMES, 0) for name in sorted(set(speakers.values()))
    }
    for split, members in result.splits.items():
        for utterance_id in members:
            sizes[speakers[utterance_id]][split] += 1
    return sizes


def check_disjoint(splits: Mapping[str, list[str]]) -> None:
    """Raise AssertionError if an id is in two splits (a bug, never the user's input)."""
    seen: dict[str, str] = {}
    for name, split in splits.items():
        for utterance_id in split:
            if utterance_id in seen:
                raise AssertionError(f"{utterance_id} is in both the {seen[utterance_id]} and {name} splits")
            seen[utterance_id] = name


def _rank_key(seed: int, utterance_id: str) -> bytes:
    return hashlib.sha256(f"{seed}\x00{utterance_id}".encode()).digest()


def _not_ljspeech_message(corpus_ids: set[str]) -> str:
    examples = ", ".join(sorted(corpus_ids)[:3]) or "none"
    return (
        "data.split.scheme is 'ljspeech', which expects LJSpeech-1.1 ids such as LJ001-0001, "
        f"but none of the corpus's {len(corpus_ids)} ids (e.g. {examples}) is in NVIDIA's split; "
        "use data.split.scheme: random for any other corpus"
    )


def _missing_ids_message(missing: Mapping[str, list[str]], rejected: Mapping[str, str]) -> str:
    def describe(utterance_id: str) -> str:
        why = rejected.get(utterance_id)
        return f"{utterance_id} (rejected: {why})" if why else f"{utterance_id} (not in the corpus)"

    total = sum(len(ids) for ids in missing.values())
    lines = [
        f"data.split.scheme 'ljspeech' needs all {len(VAL_IDS)} val and {len(TEST_IDS)} test "
        f"utterances of NVIDIA's split, but {total} are not usable:"
    ]
    for name, ids in missing.items():
        if ids:
            lines.append(f"  {name} ({len(ids)}): " + ", ".join(describe(i) for i in ids))
    lines.append(
        "Restore or fix these clips (the split is not shrunk, so results stay comparable with "
        "NVIDIA's), or use data.split.scheme: random."
    )
    return "\n".join(lines)
