# The compendium's build graph. `make help` lists the targets.
# Everything runs from a local .venv built from the pins in environment.yml with the machine's python3.

PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
JOBS   ?= 2
export MPLBACKEND := Agg
export PYTHONHASHSEED := 0

.PHONY: help venv paper test data notebooks claims report sync clean distclean bench site lab live test-live check-portable
.PHONY: bench-live live-logprobs live-core live-gemma

help:  ## list the targets
	@grep -hE '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed 's/:.*## /\t/; s/\$$(JOBS)/$(JOBS)/g' | expand -t 12

$(STAMP): environment.yml constraints.txt pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -c "import re; print('\n'.join(l.split('- ',1)[1].strip() for l in open('environment.yml') if re.match(r'\s+- [A-Za-z0-9_.-]+==', l)))" > $(VENV)/requirements.txt
	$(PY) -m pip install --quiet -r $(VENV)/requirements.txt -c constraints.txt
	$(PY) -m pip install --quiet --no-deps -e . > $(VENV)/editable-install.log 2>&1 || { cat $(VENV)/editable-install.log; exit 1; }
	touch $(STAMP)

venv: $(STAMP)  ## build .venv from the pins

data: $(STAMP)  ## fetch and verify every input by name and SHA-256
	$(PY) -m analysis data --quiet

sync: $(STAMP)  ## sync the jupytext pairs (notebooks/NN_name.py <-> .ipynb)
	$(PY) -m analysis.build --sync-only

notebooks: data  ## execute notebooks 01-08 with papermill (started in order, $(JOBS) at a time)
	$(PY) -m analysis.build --jobs $(JOBS)

claims: data  ## recompute every claim -> data/derived/claims_check.csv
	$(PY) -m analysis claims

report: claims  ## render the HTML claims report -> data/derived/claims_report.html
	$(PY) -m analysis report

paper: $(STAMP)  ## regenerate what changed: notebooks, figures, tables, claims, report (FORCE=1: everything)
	$(PY) -m analysis.build --jobs $(JOBS) --claims --report $(if $(FORCE),--force)
	@echo "done: figures/, data/derived/ and data/derived/claims_report.html"

test: data  ## unit tests, doctests and nbval over every notebook
	$(PY) -m pytest -q -p no:cacheprovider tests analysis
	$(PY) -m pytest -q -p no:cacheprovider --nbval-lax --nbval-sanitize-with tests/nbval_sanitize.cfg notebooks/*.ipynb

live: data  ## smoke audit of a real local model (llama-cpp-python + SmolLM2-135M) -> audit_out/smollm2, audit_out/example
	PY=$(PY) scripts/live.sh

test-live: data  ## live tests against that local server (builds it once; skipped with a reason if it cannot be built)
	PY=$(PY) scripts/live_test.sh

check-portable: data  ## the whole pipeline under another BLAS kernel (OPENBLAS_CORETYPE=Prescott) and two BLAS threads: outputs must equal the committed ones
	PY=$(PY) JOBS=$(JOBS) scripts/check_portable.sh

live-logprobs: data  ## the smoke card with choice probabilities (--answer-format logprobs) -> audit_out/example/logprobs
	LIVE_FORMAT=logprobs PY=$(PY) scripts/live.sh

live-gemma: data  ## Gemma 3 270M (base model) scored on a completion prompt (--answer-format completion), 6 pairs -> audit_out/example/gemma3-270m-completion
	LIVE_MODEL=gemma3-270m LIVE_FORMAT=completion LIVE_PAIRS=$${LIVE_PAIRS:-6} PY=$(PY) scripts/live.sh

live-core: data  ## the core battery against the local model (6,732 calls, hours; resumable) -> audit_out/smollm2-core
	LIVE_BATTERY=core LIVE_OUT=$${LIVE_OUT:-audit_out/smollm2-core} PY=$(PY) scripts/live.sh

bench-live: data  ## seconds a call and prompt tokens/s: the local server beside raw llama_cpp.Llama, with the load average
	PY=$(PY) scripts/live_build.sh > /dev/null
	$(PY) benchmarks/bench_live.py

bench: data  ## benchmarks (not timed tests): notebook 03, make paper full and no-change (whole-process medians), bootstrap, collection, UCI
	@for b in benchmarks/bench_*.py; do [ $$b = benchmarks/bench_live.py ] && continue; echo "== $$b"; $(PY) $$b || exit 1; done

clean:  ## remove caches of Python and pytest (keeps .venv, downloads, figures and derived results)
	find . -name __pycache__ -prune -exec rm -rf {} +
	rm -rf .pytest_cache

distclean: clean  ## also remove .venv and the download cache
	rm -rf $(VENV) .cache

site: $(STAMP)  ## static HTML of every notebook, the claims report and a Supplementary-Note index -> _site/
	$(PY) -m analysis.site --out _site

lab: $(STAMP)  ## JupyterLab on notebooks/ (the package is installed in .venv, so `import analysis` works)
	$(VENV)/bin/jupyter lab --notebook-dir=notebooks
