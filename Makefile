# Two commands do everything (each creates .venv first if it is missing or stale):
#   make demo   run the whole workflow on the embedded demo corpus (CPU, no download)
#   make test   run the test suite
#   make test-browser   open the demo's HTML report in headless Chromium (installs Debian's chromium
#                       with apt-get and the browser extra when missing; minutes)
#   make test-faults    run the tiny DAG into a full disk (a tmpfs, as root) and a user stop (about 2 min)
#   make test-slurm     run the demo DAG through the Slurm profile on a local single-node Slurm
#                       (tools/slurm-local installs Debian's Slurm as root; about 10-15 min)
#   make gpu-kit        download the wheels the GPU machine lacks into .gpu-kit/ (tools/gpu-kit/download;
#                       tools/gpu-kit/lock regenerates their lists) and print what would travel
#   make gpu-rehearsal-env   install the GPU image's torch and packages plus the cp311 kit into
#                       .gpu-rehearsal/ and check the project imports and runs there (tools/gpu-kit/rehearsal-env)
#   make gpu-check      ON THE GPU MACHINE: the whole GPU run in one command, at most 8 minutes (tools/gpu-check;
#                       the record and the demo's audio go to $OUT, else .gpu-check/out). See README, "On a GPU"
#   make gpu-rehearsal  the same script end to end on this CPU, tiny sizes, in the rehearsal environment
# On a CUDA machine, the same commands install PyPI's CUDA build of torch (see README.md).

SHELL := /bin/bash
PYTHON ?= python3
VENV ?= .venv
TORCH_VERSION ?= 2.13.0
# auto: CUDA build where nvidia-smi works, else the CPU build. Or an index URL, e.g.
# https://download.pytorch.org/whl/cu128
TORCH_INDEX ?= auto
CONFIG ?= config/demo.yaml
CORES ?= all
SNAKEMAKE_ARGS ?=
PYTEST_ARGS ?=

BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
export PATH := $(abspath $(BIN)):$(PATH)

.PHONY: setup demo unlock test test-browser test-faults test-slurm lint schema mlflow-ui clean-demo gpu-kit gpu-rehearsal-env \
	gpu-check gpu-rehearsal

setup: $(STAMP)

$(STAMP): pyproject.toml tools/install-torch tools/install-packages
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	TORCH_VERSION=$(TORCH_VERSION) TORCH_INDEX=$(TORCH_INDEX) tools/install-torch $(BIN)/python
	tools/install-packages $(BIN)/python -e '.[test,serve]'
	touch $(STAMP)

demo: $(STAMP)
	@snakemake --configfile $(CONFIG) --cores $(CORES) --quiet reason $(SNAKEMAKE_ARGS) || { \
	  echo "make demo: Snakemake stopped. If it says 'Directory cannot be locked' (a run was killed hard)," \
	       "run 'make unlock' once, then 'make demo' again: trainings resume from their checkpoints."; exit 1; }
	snakemake --configfile $(CONFIG) --report "$$($(BIN)/python -m tts_pipeline where --config $(CONFIG) --report-path)"
	@$(BIN)/python -m tts_pipeline where --config $(CONFIG)

unlock: $(STAMP)
	snakemake --configfile $(CONFIG) --unlock

test: $(STAMP)
	$(BIN)/pytest $(PYTEST_ARGS)

test-browser: $(STAMP)
	tools/install-chromium
	$(BIN)/python -c "import playwright" 2>/dev/null || tools/install-packages $(BIN)/python -e '.[test,serve,browser]'
	$(BIN)/pytest -m browser tests/browser $(PYTEST_ARGS)

# The tests skip (with the reason) where tools/slurm-local cannot start Slurm.
test-faults: $(STAMP)
	$(BIN)/pytest -m faults tests/workflow $(PYTEST_ARGS)

test-slurm: $(STAMP)
	$(BIN)/python -c "import snakemake_executor_plugin_slurm" 2>/dev/null || tools/install-packages $(BIN)/python -e '.[test,slurm]'
	$(BIN)/pytest -m slurm tests/slurm $(PYTEST_ARGS)

lint: $(STAMP)
	$(BIN)/ruff check src tests
	snakemake --lint --configfile config/demo.yaml
	$(BIN)/tts-pipeline schema --check

schema: $(STAMP)
	$(BIN)/tts-pipeline schema

mlflow-ui: $(STAMP)
	$(BIN)/mlflow ui --backend-store-uri sqlite:///results/mlflow.db --port 5000

# Wheels for a GPU machine without network (see tools/gpu-kit/lock): they need PyPI, not the venv.
gpu-kit:
	tools/gpu-kit/download

gpu-rehearsal-env: gpu-kit
	tools/gpu-kit/rehearsal-env

# Runs with the machine's python3 (the GPU image's torch), never the project's venv: nothing to set up
# there but the kit, which travels in .gpu-kit/cp312.
gpu-check:
	python3 tools/gpu-check --kit .gpu-kit/cp312

gpu-rehearsal: gpu-rehearsal-env
	.gpu-rehearsal/venv/bin/python tools/gpu-check --rehearsal --kit .gpu-kit/cp311 --out .gpu-rehearsal/out
