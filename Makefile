# One-command set-up: `make lab` opens the course, `make test` checks all of it.
# Everything installs into .venv from the pins in requirements.txt (PyPI only).

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
PORT   ?= 8888

.PHONY: install lab test lint unit notebooks exercises-run check assign grade release lock clean site answer-keys slides

install: $(STAMP)

$(STAMP): requirements.txt pyproject.toml
	@$(PYTHON) -c 'import sys; assert sys.version_info >= (3, 11), "Python 3.11+ is needed, found " + sys.version.split()[0]'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet -r requirements.txt
	$(BIN)/python -m pip install --quiet --no-deps --no-build-isolation -e .
	touch $(STAMP)

# Learners work on copies in work/ (git ignores it): the tracked lessons stay clean, so `git pull`
# never conflicts with a learner's edits or saved outputs. Copies are made once and never overwritten.
# --allow-root only where make runs as root (containers, CI); JupyterLab refuses root otherwise.
WORK := work
lab: install
	@mkdir -p $(WORK) && cp -Rn notebooks exercises $(WORK)/ 2>/dev/null || true
	@echo "Your copies of the lessons and exercises are in $(WORK)/ (the originals stay untouched)."
	@echo "After a git pull, delete a lesson's copy in $(WORK)/ to get its new version; close the"
	@echo "kernels of lessons you have finished (Kernel > Shut Down Kernel): each holds memory."
	$(BIN)/jupyter lab --ServerApp.ip=127.0.0.1 --ServerApp.port=$(PORT) \
	    --ServerApp.root_dir=. --LabApp.default_url=/lab/tree/$(WORK)/notebooks/00_setup.ipynb \
	    $(if $(filter 0,$(shell id -u)),--allow-root)

check: install
	$(BIN)/python -m course check

## The whole suite, as CI runs it (see README "Tests").
test: install lint unit notebooks exercises-run

lint: install
	$(BIN)/ruff check course tests
	$(BIN)/ruff format --check course tests
	$(BIN)/lint-imports --no-cache

# Tests run on both cores (pytest-xdist workers); `make test PYTEST_WORKERS=0` runs them in one
# process, as before. Tests marked `serial` (they time themselves or need the whole machine) run
# first, alone; tests/conftest.py keeps each file, and all the grading sandbox's files, on one worker.
PYTEST_WORKERS ?= 2
XDIST = -n $(PYTEST_WORKERS)
SERIAL_FILES = $(shell grep -rl --include='test_*.py' 'pytest.mark.serial' tests)

unit: install
	$(if $(SERIAL_FILES),$(BIN)/python -m pytest $(SERIAL_FILES) -m serial)
	$(BIN)/python -m pytest tests -m "not serial" $(XDIST) --dist loadfile --no-loadscope-reorder \
	    --durations=10

notebooks: install
	$(BIN)/python -m pytest --nbval --nbval-current-env --nbval-cell-timeout=300 \
	    $(XDIST) --dist loadfile notebooks solutions

exercises-run: install
	$(BIN)/python -m pytest --nbval-lax --nbval-current-env --nbval-cell-timeout=300 \
	    $(XDIST) --dist loadfile exercises

## Instructors: regenerate exercises/ (student notebooks and their public checks) from solutions/.
assign: install
	$(BIN)/python -m course assign

## Instructors: grade a folder of submissions in sandboxes, e.g.
## `make grade SUBMISSIONS=subs/ OUT=grades.csv ASSIGNMENT=04_model_memory JOBS=2 TIMEOUT=300`.
JOBS    ?= 2
TIMEOUT ?= 300
grade: install
	$(BIN)/python -m course grade $(SUBMISSIONS) --out $(or $(OUT),grades.csv) \
	    --jobs $(JOBS) --timeout $(TIMEOUT) $(if $(ASSIGNMENT),--assignment $(ASSIGNMENT))

## Instructors: what students receive (no solutions, no answer keys), built from the committed files,
## e.g. `make release OUT=dist/course`; `make release GRADED=1` for a graded class (coarse checks only).
release: install
	$(BIN)/python -m course release $(or $(OUT),dist/course) $(if $(GRADED),--graded)

## Instructors: one answer-key page per exercise set, generated from solutions/ (never publish them
## to a graded class), e.g. `make answer-keys OUT=build/answer-keys`.
answer-keys: install
	$(BIN)/python -m course answer-keys $(or $(OUT),build/answer-keys)

## The course as a static website in build/site/ (Sphinx + myst-nb, from the committed outputs).
## `make site ANSWER_KEYS=1` builds the instructors' copy, with the answer keys, into its own folder
## build/site-answer-keys/ (never publish it to a class); neither build writes into the other's folder.
## (tests/publishing/test_site.py builds it too, so `make test` fails on a broken link or a missing lesson.)
site: install
	$(BIN)/python -m course site $(if $(ANSWER_KEYS),build/site-answer-keys --answer-keys,build/site)

## Reveal.js decks of every lesson in build/slides/ (nbconvert's slides exporter, from the cells'
## slideshow tags), with what they load in build/slides/_static (they work offline; their links lead
## to build/site). `make slides TAG=1` first re-tags the lessons by the rule in course/publishing/slides.py.
slides: install
	$(BIN)/python -m course slides build/slides $(if $(TAG),--tag)

## Maintainers: re-resolve requirements.in into requirements.txt.
lock:
	rm -rf .lock-venv && $(PYTHON) -m venv .lock-venv
	.lock-venv/bin/pip install --quiet -r requirements.in
	{ echo "# Pinned, complete environment (generated from requirements.in by \`make lock\`)."; \
	  .lock-venv/bin/pip freeze --all | grep -v -E '^(pip|-e )' | sed 's/+cpu//'; } > requirements.txt
	rm -rf .lock-venv

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache  # never work/: it holds the learner's work

## Maintainers: rewrite environment.yml from requirements.txt (a test checks they agree).
environment.yml: requirements.txt
	{ sed -n '1,4p' environment.yml; printf 'name: gpu-course\nchannels:\n  - conda-forge\n'; \
	  printf 'dependencies:\n  - python=3.11\n  - pip\n  - pip:\n'; \
	  grep -v -e '^#' -e '^$$' requirements.txt | sed 's/^/      - /'; echo '      - -e .'; } > $@.tmp
	mv $@.tmp $@
