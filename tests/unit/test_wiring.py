"""What the Snakefile receives: per-stage config slices, code hashes, paths."""

from __future__ import annotations

import json
import re
import sys

import pytest
import yaml

from tts_pipeline import stage_table
from tts_pipeline.config import parse_config
from tts_pipeline.workflow import Pipeline, code_hash
from tts_pipeline.workflow.paths import Paths

from ..conftest import REPO


@pytest.fixture
def demo() -> dict:
    return yaml.safe_load((REPO / "config/demo.yaml").read_text())


def _params(raw: dict) -> dict[str, str]:
    config = parse_config(raw)
    return {stage: stage_table.stage_params(config, stage) for stage in stage_table.BY_RULE}


def test_each_stage_sees_only_its_own_config(demo):
    before = _params(demo)
    demo["data"]["split"]["val_size"] = 20
    after = _params(demo)
    assert before["manifest"] != after["manifest"]
    assert before["corpus"] == after["corpus"]

    demo["audio"]["hop_length"] = 512
    demo["audio"]["filter_length"] = 2048
    demo["audio"]["win_length"] = 2048
    demo["hifigan"]["upsample_rates"] = [8, 8, 8]  # product = the new hop
    assert _params(demo)["manifest"] == after["manifest"], "the manifest reads only audio.sampling_rate"

    demo["corpus"]["demo"]["seed"] = 7
    assert _params(demo)["corpus"] != after["corpus"]


def test_params_are_json_of_the_named_sections(demo):
    payload = json.loads(_params(demo)["manifest"])
    assert set(payload) == {"data", "text", "audio.sampling_rate"}
    assert payload["audio.sampling_rate"] == 22050
    assert payload["data"]["split"]["val_size"] == demo["data"]["split"]["val_size"]


def test_every_row_names_a_module_and_config_that_exist(demo):
    config = parse_config(demo)
    for row in stage_table.STAGES:
        assert code_hash._module_file(row.module) is not None, row
        for dotted in (*row.reads, *row.excludes, *([row.gpus] if row.gpus else [])):
            stage_table.lookup(config, dotted)  # AttributeError names a key the config lacks
        assert all(any(key.startswith(read + ".") for read in row.reads) for key in row.excludes), row


def test_a_row_runs_the_stage_module_named_after_its_rule_unless_it_names_another():
    assert stage_table.stage("features").module == "tts_pipeline.stages.features"
    finetune = stage_table.stage("finetune_hifigan")
    assert finetune.module == stage_table.stage("train_hifigan").module == "tts_pipeline.stages.train_hifigan"
    assert finetune.command == "train-hifigan"


def _rule_blocks() -> dict[str, str]:
    """Rule name -> its text, with Python's implicit string concatenation undone (one shell line)."""
    blocks: dict[str, str] = {}
    for path in sorted((REPO / "workflow/rules").glob("*.smk")):
        for block in re.split(r"(?m)^(?=rule )", path.read_text()):
            match = re.match(r"rule (\w+):", block)
            if match:
                blocks[match.group(1)] = re.sub(r'"\s*\n\s*"', "", block)
    return blocks


def test_rules_and_the_stage_table_agree():
    blocks = _rule_blocks()
    assert set(blocks) == set(stage_table.BY_RULE), "one row per rule, one rule per row"
    for rule, block in blocks.items():
        row = stage_table.BY_RULE[rule]
        assert f'code=pipeline.code("{rule}")' in block, rule
        if row.reads:
            assert f'section=pipeline.params("{rule}")' in block, rule
            assert "--section {params.section:q}" in block, rule
        runs = re.findall(r"tts-pipeline ([a-z][a-z0-9-]*)|--stage -- ([a-z][a-z0-9-]*)", block)
        commands = [a or b for a, b in runs if (a or b) != "lease-gpus"]
        assert commands == [row.command], f"rule {rule} runs {commands}, its row says {row.command}"
        asks_gpus = f'gpu=pipeline.gpus("{rule}")' in block
        assert asks_gpus == (row.gpus is not None), f"rule {rule}: resources gpu vs the row's GPU key"
        assert "$(dirname" not in block, f"rule {rule}: pass folders as params from workflow.paths.Paths"


def test_gpu_requests_follow_the_rows_keys(demo):
    demo["hifigan"]["gpus"] = 3
    pipeline = Pipeline(demo)
    assert pipeline.gpus("train_hifigan") == pipeline.gpus("finetune_hifigan") == 3
    assert pipeline.gpus("features") == 0


def test_old_underscored_command_names_still_work(capsys):
    from tts_pipeline import cli

    with pytest.raises(SystemExit) as exit_:
        cli.main(["train_hifigan", "--help"])
    assert exit_.value.code == 0
    assert "--init-from" in capsys.readouterr().out
    assert cli.ALIASES["report_pages"] == "report-pages"


def test_source_closure_follows_package_imports():
    closure = code_hash.source_files("tts_pipeline.stages.manifest")
    files = {path.relative_to(REPO / "src").as_posix() for path in closure}
    for expected in (
        "tts_pipeline/stages/manifest.py",
        "tts_pipeline/stages/common.py",
        "tts_pipeline/config/rules.py",
        "tts_pipeline/data/manifest.py",
        "tts_pipeline/__init__.py",
    ):
        assert expected in files
    assert not any(name.startswith("tts_pipeline/workflow/") for name in files)
    assert "tts_pipeline/stage_table.py" not in files, "a new row must not rerun every stage"


def test_code_hash_changes_with_an_imported_module(tmp_path, monkeypatch):
    package = tmp_path / "tts_pipeline"
    (package / "stages").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "stages" / "__init__.py").write_text("")
    (package / "helper.py").write_text("VALUE = 1\n")
    (package / "unrelated.py").write_text("VALUE = 1\n")
    (package / "stages" / "fake.py").write_text("def run():\n    from tts_pipeline.helper import VALUE\n")
    monkeypatch.setattr(sys, "path", [str(tmp_path), *sys.path])
    for name in [m for m in sys.modules if m == "tts_pipeline" or m.startswith("tts_pipeline.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(stage_table.BY_RULE, "fake", stage_table.Stage("fake", ()))

    def fresh_hash() -> str:
        code_hash.source_files.cache_clear()
        return code_hash.code_hash("fake")

    first = fresh_hash()
    (package / "unrelated.py").write_text("VALUE = 2\n")
    assert fresh_hash() == first
    (package / "helper.py").write_text("VALUE = 2\n")
    assert fresh_hash() != first
    code_hash.source_files.cache_clear()


def test_paths_follow_the_contract(demo):
    paths = Paths(parse_config(demo))
    assert paths.manifest("train") == "results/demo/data/manifest.train.jsonl"
    assert paths.validation == "results/demo/data/validation.json"
    assert paths.corpus_record == "resources/demo/corpus.json"
    assert paths.log("manifest") == "results/demo/logs/manifest.log"
    assert paths.fastpitch_model == "results/demo/fastpitch/model.pt"
    assert paths.fastpitch_mels_index == "results/demo/fastpitch_mels/index.json"
    assert paths.hifigan_finetuned_model == "results/demo/hifigan_finetuned/model.pt"


def test_fine_tuning_settings_do_not_reach_base_vocoder_training(demo):
    before = _params(demo)
    demo["hifigan"]["fine_tune_epochs"] = 99
    demo["hifigan"]["fine_tune_lr_factor"] = 2.0
    after = _params(demo)
    assert before["train_hifigan"] == after["train_hifigan"]
    assert before["finetune_hifigan"] != after["finetune_hifigan"]
    assert "fine_tune_epochs" not in json.loads(after["train_hifigan"])["hifigan"]


def test_fastpitch_settings_reach_fastpitch_stages_and_not_the_vocoder(demo):
    before = _params(demo)
    demo["fastpitch"]["learning_rate"] = 0.123
    after = _params(demo)
    changed = {stage for stage in before if before[stage] != after[stage]}
    assert changed == {"train_fastpitch"}, "extraction reruns through its input, the new model file"
    demo["fastpitch"]["extract_batch_size"] = 3
    final = _params(demo)
    assert final["train_fastpitch"] == after["train_fastpitch"], "training ignores the extraction batch"
    assert final["extract_fastpitch_mels"] != after["extract_fastpitch_mels"]


def test_pretrained_checkpoints_replace_the_training_outputs(demo):
    pipeline = Pipeline(demo)
    trained = pipeline.all_targets()
    assert pipeline.fastpitch_model() == pipeline.paths.fastpitch_model
    assert pipeline.hifigan_init() == {"init": pipeline.paths.hifigan_state}
    assert pipeline.paths.fastpitch_metrics in trained and pipeline.paths.hifigan_metrics in trained

    demo["fastpitch"]["checkpoint"] = "pretrained/fastpitch.pt"
    demo["hifigan"]["checkpoint"] = "pretrained/hifigan.pt"
    pipeline = Pipeline(demo)
    assert pipeline.fastpitch_model() == "pretrained/fastpitch.pt"
    assert pipeline.hifigan_model() == pipeline.hifigan_init()["init"] == "pretrained/hifigan.pt"
    targets = pipeline.all_targets()
    assert pipeline.paths.fastpitch_metrics not in targets and pipeline.paths.hifigan_metrics not in targets
    assert pipeline.paths.report_page("audio") in targets
    assert set(pipeline.training_metrics()) == {"train_aligner", "finetune_hifigan"}


def test_shipped_files_are_found_from_any_working_directory(demo, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    pipeline = Pipeline(demo, repository=REPO)
    assert pipeline.inference_phrases() == str(REPO / "config/phrases/demo.txt")
    (tmp_path / "config/phrases").mkdir(parents=True)
    (tmp_path / "config/phrases/demo.txt").write_text("a|A sentence.\n")
    assert pipeline.inference_phrases() == "config/phrases/demo.txt", "a local file wins"
    demo["inference"]["phrases"] = None
    assert Pipeline(demo).inference_phrases() == "results/demo/data/manifest.val.jsonl"


def test_check_config_prints_a_stage_section(capsys):
    from tts_pipeline import cli

    cli.main(["check-config", str(REPO / "config/demo.yaml"), "--section", "synthesize"])
    payload = json.loads(capsys.readouterr().out)
    assert set(payload) == {"inference", "audio", "text"}
    with pytest.raises(SystemExit):
        cli.main(["check-config", str(REPO / "config/demo.yaml"), "--section", "no_such_stage"])


def test_published_discriminators_reach_fine_tuning_only(demo):
    before = _params(demo)
    demo["hifigan"]["checkpoint"] = "pretrained/g_02500000"
    demo["hifigan"]["discriminator_checkpoint"] = "pretrained/do_02500000"
    pipeline = Pipeline(demo)
    assert pipeline.hifigan_init() == {"init": "pretrained/g_02500000", "discriminators": "pretrained/do_02500000"}
    after = _params(demo)
    assert after["train_hifigan"] == before["train_hifigan"], "base training does not read them"
    assert after["finetune_hifigan"] != before["finetune_hifigan"]

    del demo["hifigan"]["checkpoint"]
    with pytest.raises(ValueError, match="discriminator_checkpoint: needs hifigan.checkpoint"):
        Pipeline(demo)


def test_params_functions_read_the_rules_declared_files(demo):
    class Files(dict):
        def keys(self):  # what Snakemake's named lists answer
            return list(super().keys())

    pipeline = Pipeline(demo)
    given = Files(aligner="R/aligner/model.pt", train="R/data/manifest.train.jsonl")
    assert pipeline.optional_input_option("--aligner", "aligner")(None, given) == ["--aligner", "R/aligner/model.pt"]
    assert pipeline.optional_input_option("--init-discriminators", "discriminators")(None, given) == []
    assert pipeline.input_folder("train")(None, given) == "R/data"
    metrics = Files({name: f"{name}.json" for name in pipeline.training_metrics()})
    assert pipeline.metrics_arguments()(None, metrics) == [f"{name}={name}.json" for name in metrics]


def test_a_stage_run_by_hand_reads_its_slice_from_a_config_file(demo, capsys):
    """``--config YAML`` gives a stage exactly the slice the workflow passes with ``--section``."""
    import argparse

    from tts_pipeline.stages import common
    from tts_pipeline.stages import features as features_stage

    parser = argparse.ArgumentParser(prog="tts-pipeline features")
    features_stage.add_arguments(parser)
    paths = ["--manifest-dir", "m", "--out-dir", "f", "--pitch-stats", "p.json", "--index", "i.jsonl"]
    by_hand = parser.parse_args(["--config", str(REPO / "config/demo.yaml"), *paths])
    from_rule = parser.parse_args(["--section", stage_table.stage_params(parse_config(demo), "features"), *paths])
    assert common.load_stage_section(by_hand, "features") == common.load_stage_section(from_rule, "features")
    for argv in (paths, ["--config", "c.yaml", "--section", "{}", *paths]):
        with pytest.raises(SystemExit):
            parser.parse_args(argv)
    assert "--section JSON | --config YAML" in capsys.readouterr().err


def test_every_path_a_rule_hands_its_shell_is_quoted():
    """``{x:q}`` for every placeholder of every ``shell:`` but the integers Snakemake fills in itself
    (``threads``, and ``resources.gpu``, which the typed config keeps an integer). The workflow tests
    run the tiny DAG in a folder named like a shell injection; this covers rules outside that DAG too."""
    unquoted_integers = {"threads", "resources.gpu"}
    for rule, block in _rule_blocks().items():
        shell = block.split("\n    shell:\n", 1)[1]
        literals = re.findall(r'^\s*"((?:[^"\\]|\\.)*)"', shell, re.M)
        assert literals, f"rule {rule}: no shell command found"
        placeholders = [name for literal in literals for name in re.findall(r"\{([^{}]+)\}", literal)]
        assert placeholders, rule
        loose = [name for name in placeholders if not name.endswith(":q") and name not in unquoted_integers]
        assert not loose, f"rule {rule}: quote {loose} with :q"
