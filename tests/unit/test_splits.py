"""Train / val / test splits: NVIDIA's fixed LJSpeech split and the seeded random split."""

from __future__ import annotations

import random

import pytest

from tts_pipeline.config import SplitConfig
from tts_pipeline.data.ljspeech_split import (
    DISCARDED_IDS,
    TEST_IDS,
    TRANSCRIPT_CONTINUATIONS,
    VAL_IDS,
    expand_ids,
    fix_transcript,
    id_set_sha256,
)
from tts_pipeline.data.splits import SplitError, check_disjoint, ljspeech_split, random_split, split_ids

# Published in the reference (section 7.1): SHA-256 of the sorted ids joined by "\n".
VAL_SHA256 = "db6d2331f6933b6cec173a65aa002baf0483749dfc65c1f633af1fd53826dd3a"
TEST_SHA256 = "ee02699f7ecb483d4683d76ccb6661c62362094fca29a6cb17dc4299536df153"

OTHER_LJ_IDS = [f"LJ050-{n:04d}" for n in range(240, 260)]  # none of them is in val/test/discarded


def test_ljspeech_ids_match_published_checksums() -> None:
    assert len(VAL_IDS) == 100
    assert len(TEST_IDS) == 500
    assert id_set_sha256(VAL_IDS) == VAL_SHA256
    assert id_set_sha256(TEST_IDS) == TEST_SHA256
    assert DISCARDED_IDS == {"LJ011-0058", "LJ012-0205", "LJ016-0257", "LJ018-0396"}
    assert not (VAL_IDS & TEST_IDS) and not (DISCARDED_IDS & (VAL_IDS | TEST_IDS))


def test_expand_ids_merges_chapter_lines() -> None:
    assert expand_ids("001: 0001 0002\n001: 0003\n010: 0100") == {
        "LJ001-0001", "LJ001-0002", "LJ001-0003", "LJ010-0100"
    }


def test_transcript_fixes_append_the_missing_words_once() -> None:
    assert set(TRANSCRIPT_CONTINUATIONS) == {"LJ031-0175", "LJ034-0138"}
    fixed = fix_transcript("LJ034-0138", "they saw what he had seen.")
    assert fixed == "they saw what he had seen. Norman stated, quote,"
    assert fix_transcript("LJ034-0138", fixed) == fixed
    assert fix_transcript("LJ031-0175", "but she refused.").endswith(
        "but she refused. She said that she intended to stay with her husband."
    )
    assert fix_transcript("LJ001-0001", "unchanged") == "unchanged"


def test_ljspeech_split_sizes_and_discards() -> None:
    ids = sorted(VAL_IDS | TEST_IDS | DISCARDED_IDS) + OTHER_LJ_IDS
    random.Random(0).shuffle(ids)
    result = ljspeech_split(ids)
    assert result.sizes == {"train": 20, "val": 100, "test": 500}
    assert result.splits["train"] == sorted(OTHER_LJ_IDS)
    assert result.discarded == sorted(DISCARDED_IDS)
    assert set(result.splits["val"]) == VAL_IDS and set(result.splits["test"]) == TEST_IDS


def test_ljspeech_split_refuses_to_shrink_and_names_missing_ids() -> None:
    ids = set(VAL_IDS | TEST_IDS) | set(OTHER_LJ_IDS)
    gone_val, gone_test = sorted(VAL_IDS)[3], sorted(TEST_IDS)[7]
    ids -= {gone_val, gone_test}
    with pytest.raises(SplitError) as caught:
        ljspeech_split(ids, rejected={gone_val: "clipped"})
    message = str(caught.value)
    assert f"{gone_val} (rejected: clipped)" in message
    assert f"{gone_test} (not in the corpus)" in message
    assert "val (1)" in message and "test (1)" in message


def test_ljspeech_split_on_another_corpus_says_it_expects_ljspeech_ids() -> None:
    with pytest.raises(SplitError, match="expects LJSpeech-1.1 ids"):
        ljspeech_split([f"utt{n:03d}" for n in range(50)])


def test_random_split_is_seeded_sized_disjoint_and_order_free() -> None:
    ids = [f"utt{n:03d}" for n in range(60)]
    first = random_split(ids, val_size=5, test_size=7, seed=3)
    shuffled = list(reversed(ids))
    again = random_split(shuffled, val_size=5, test_size=7, seed=3)
    other_seed = random_split(ids, val_size=5, test_size=7, seed=4)
    assert first.splits == again.splits
    assert first.splits["val"] != other_seed.splits["val"]
    assert first.sizes == {"train": 48, "val": 5, "test": 7}
    members = [i for split in first.splits.values() for i in split]
    assert sorted(members) == ids  # disjoint and complete
    assert all(split == sorted(split) for split in first.splits.values())


def test_random_split_without_training_data_is_an_error() -> None:
    with pytest.raises(SplitError, match=r"val_size \(6\) \+ test_size \(4\)"):
        random_split([f"u{n}" for n in range(10)], val_size=6, test_size=4, seed=0)


def test_split_ids_dispatches_on_scheme() -> None:
    ids = [f"u{n:02d}" for n in range(20)]
    result = split_ids(ids, SplitConfig(scheme="random", val_size=2, test_size=3, seed=1))
    assert result.sizes == {"train": 15, "val": 2, "test": 3}
    with pytest.raises(SplitError, match="expects LJSpeech"):
        split_ids(ids, SplitConfig(scheme="ljspeech"))


def test_check_disjoint_catches_overlap() -> None:
    with pytest.raises(AssertionError, match="u1 is in both the train and test splits"):
        check_disjoint({"train": ["u1", "u2"], "val": ["u3"], "test": ["u1"]})
