# One-command set-up: `make lab` opens the course, `make test` checks all of it.
# Learners: `make lab` installs the learners' set (requirements/learners.txt) into .venv.
# Instructors and CI: `make test`, `make grade`, `make site`... add the instructors' set
# (requirements/instructors.txt) and their package, instructors/teaching. Both locks are universal
# (Linux, macOS, Windows; Python 3.11-3.13), resolved from the public index by `make lock`.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
PORT   ?= 8888
LEARNERS    := $(VENV)/.learners-installed
INSTRUCTORS := $(VENV)/.instructors-installed
HUB_PROXY   := requirements/node_modules/.installed

.PHONY: install install-instructors lab test lint serial all-in-one unit notebooks exercises-run check assign grade dist hosted-links \
	release lock clean site answer-keys slides

install: $(LEARNERS)

$(LEARNERS): requirements/learners.txt requirements/install.py pyproject.toml
	@$(PYTHON) -c 'import sys; assert sys.version_info >= (3, 11), "Python 3.11+ is needed, found " + sys.version.split()[0]'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python requirements/install.py requirements/learners.txt
	$(BIN)/python -m pip install --quiet --no-deps -e .
	touch $@

install-instructors: $(INSTRUCTORS) $(HUB_PROXY)

$(INSTRUCTORS): $(LEARNERS) requirements/instructors.txt instructors/pyproject.toml
	$(BIN)/python requirements/install.py requirements/instructors.txt
	$(BIN)/python -m pip install --quiet --no-deps -e instructors
	touch $@

# JupyterHub's proxy for the hub test (tests/project/test_hub_class.py), from npm's registry at the
# version requirements/package-lock.json pins, into requirements/node_modules/. Without npm the
# hub test is skipped (and fails in CI, whose .ci/run installs Node.js and npm).
$(HUB_PROXY): requirements/package.json requirements/package-lock.json
	@if command -v npm >/dev/null 2>&1; then \
	    cd requirements && npm ci --no-audit --no-fund --loglevel=error && touch $(CURDIR)/$@; \
	else echo "npm not found: JupyterHub's proxy is not installed, so the hub test will not run"; fi

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
test: install-instructors lint serial all-in-one

# Everything written in Python, the lessons, solutions and exercise sets among it, is the formatter's.
FORMATTED := course instructors/teaching tests requirements notebooks solutions exercises
lint: install-instructors
	$(BIN)/ruff check $(FORMATTED)
	$(BIN)/ruff format --check $(FORMATTED)
	$(BIN)/lint-imports --no-cache

# Tests run on both cores (pytest-xdist workers); `make test PYTEST_WORKERS=0` runs them in one
# process. Tests marked `serial` (they time themselves or need the whole machine) run first, alone;
# tests/conftest.py keeps each file, and all the grading sandbox's files, on one worker.
PYTEST_WORKERS ?= 2
XDIST = -n $(PYTEST_WORKERS) --dist loadfile --no-loadscope-reorder
SERIAL_FILES = $(shell grep -rl --include='test_*.py' 'pytest.mark.serial' tests)
NBVAL = --nbval --nbval-current-env --nbval-cell-timeout=300

serial: install-instructors
	$(if $(SERIAL_FILES),$(BIN)/python -m pytest $(SERIAL_FILES) -m serial)

# Everything else in one run on both cores, so neither core waits at the end of a stage: the unit
# tests, nbval over the lessons and solutions (their committed outputs must come out again) and over
# the exercises (committed unexecuted, so nbval only runs them: it compares no unrun cell's output,
# as --nbval-lax would). The thirty slowest tests are printed (where the suite's time goes).
all-in-one: install-instructors
	$(BIN)/python -m pytest tests notebooks solutions exercises -m "not serial" $(NBVAL) $(XDIST) \
	    --durations=30

# The same pieces one at a time.
unit: serial
	$(BIN)/python -m pytest tests -m "not serial" $(XDIST) --durations=10

notebooks: install-instructors
	$(BIN)/python -m pytest $(NBVAL) $(XDIST) notebooks solutions

exercises-run: install-instructors
	$(BIN)/python -m pytest --nbval-lax --nbval-current-env --nbval-cell-timeout=300 $(XDIST) \
	    exercises

## The learners' package as a wheel in dist/ (course/ and its data, with the ranges of pyproject.toml;
## never the instructors' teaching/): what a hosted notebook installs, `pip install dist/*.whl`.
dist: install
	rm -rf dist build/lib
	$(BIN)/python -m pip wheel --quiet --no-deps --wheel-dir dist .

## Instructors: the hosted-notebook links (Colab, Kaggle) in the README and in each lesson's first
## Markdown cell, and the install cell that opens every notebook, from [project.urls] Repository.
hosted-links: install-instructors
	$(BIN)/python -m teaching hosted-links

## Instructors: regenerate exercises/ (student notebooks and their public checks) from solutions/.
assign: install-instructors
	$(BIN)/python -m teaching assign

## Instructors: grade a folder of submissions in sandboxes, e.g.
## `make grade SUBMISSIONS=subs/ OUT=grades.csv ASSIGNMENT=04_model_memory JOBS=2 TIMEOUT=300`;
## for an LMS: `ROSTER=roster.csv PATTERN=canvas EXPORT=canvas` (instructors/grading.md, section 7);
## hand-set scores and late penalties that every later run keeps: `OVERRIDES=overrides.csv
## LATE_PENALTY=0.1`; `REPLACE=1` starts the gradebook afresh (default: a regrade merges into it).
JOBS    ?= 2
TIMEOUT ?= 300
grade: install-instructors
	$(BIN)/python -m teaching grade $(SUBMISSIONS) --out $(or $(OUT),grades.csv) \
	    --jobs $(JOBS) --timeout $(TIMEOUT) $(if $(ASSIGNMENT),--assignment $(ASSIGNMENT)) \
	    $(if $(ROSTER),--roster $(ROSTER)) $(if $(PATTERN),--pattern '$(PATTERN)') \
	    $(if $(EXPORT),--export $(EXPORT)) $(if $(OVERRIDES),--overrides $(OVERRIDES)) \
	    $(if $(LATE_PENALTY),--late-penalty $(LATE_PENALTY)) $(if $(REPLACE),--replace)

## Instructors: what students receive (no solutions, no answer keys), built from the committed files,
## e.g. `make release OUT=dist/course`; `make release GRADED=1` for a graded class (coarse checks only).
release: install-instructors
	$(BIN)/python -m teaching release $(or $(OUT),dist/course) $(if $(GRADED),--graded)

## Instructors: one answer-key page per exercise set, generated from solutions/ (never publish them
## to a graded class), e.g. `make answer-keys OUT=build/answer-keys`.
answer-keys: install-instructors
	$(BIN)/python -m teaching answer-keys $(or $(OUT),build/answer-keys)

## The course as a static website in build/site/ (Sphinx + myst-nb, from the committed outputs).
## `make site ANSWER_KEYS=1` builds the instructors' copy, with the answer keys, into its own folder
## build/site-answer-keys/ (never publish it to a class); neither build writes into the other's folder.
## (tests/teaching/test_site.py builds it too, so `make test` fails on a broken link or a missing lesson.)
site: install-instructors
	$(BIN)/python -m teaching site $(if $(ANSWER_KEYS),build/site-answer-keys --answer-keys,build/site)

## Reveal.js decks of every lesson in build/slides/ (nbconvert's slides exporter, from the cells'
## slideshow tags), with what they load in build/slides/_static (they work offline; their links lead
## to build/site). `make slides TAG=1` first re-tags the lessons by the rule in instructors/teaching/slides.py.
slides: install-instructors
	$(BIN)/python -m teaching slides build/slides $(if $(TAG),--tag)

## Maintainers: re-resolve both locks from requirements/*.in against the public index (PyPI), for
## every platform and Python the course supports (uv's universal resolution, in seconds). The
## learners' lock is constrained by the instructors', so the versions they share are equal. The
## hub test's proxy is locked from requirements/package.json (npm's registry).
UV ?= $(shell command -v uv 2>/dev/null || echo $(BIN)/uv)
LOCK := --universal --python-version 3.11 --custom-compile-command "make lock" --quiet \
	--annotation-style line
lock:
	$(UV) pip compile $(LOCK) requirements/instructors.in -o requirements/instructors.txt
	$(UV) pip compile $(LOCK) requirements/learners.in -c requirements/instructors.txt \
	    -o requirements/learners.txt
	cd requirements && npm install --package-lock-only --no-audit --no-fund --loglevel=error

clean:
	rm -rf $(VENV) build dist *.egg-info instructors/*.egg-info .pytest_cache requirements/node_modules  # never work/: it holds the learner's work
