#!/usr/bin/env bash
# A hosted-like run (issue 32): the course installed the way a notebook's first cell installs it on
# a hosted platform, in a fresh virtual environment that holds that platform's own packages, then
# every lesson and every exercise set executed top to bottom with nbconvert; the environment's
# torch, triton, numpy and ipywidgets must be the same afterwards.
#
# Two platform sets, from their published sources:
# - colab (default): Colab's GPU runtime in googlecolab/backend-info (pip-freeze.gpu.txt and
#   os-info-gpu.txt at commit a72407924822, 2026-08-19): Python 3.13, torch 2.11.0+cu128, triton
#   3.6.0, numpy 2.1.3, ipywidgets 7.7.1, ipython 7.34.0, ipykernel 6.17.1, matplotlib 3.10.0,
#   pandas 2.2.3, torchao 0.10.0, notebook 6.5.7, no JupyterLab.
# - kaggle: Kaggle/docker-python (Dockerfile.tmpl and kaggle_requirements.txt at commit
#   78aaa43f8cc8, 2026-08-12), built FROM Colab's runtime image of 2026-05-14: Python 3.12, torch
#   2.10.0+cu128 and numpy 2.0.2 (Colab's list of that week), ipywidgets 8.1.5 (Kaggle's pin); the
#   other packages as Colab's. Detected by KAGGLE_KERNEL_RUN_TYPE, as on Kaggle.
# torch comes from the index pip is configured with (PyPI's: a CUDA build, about 3 GB with NVIDIA's
# runtime wheels; it runs on the CPU here). Not part of `make test`: it downloads torch and runs
# 28 notebooks (see instructors/guide.md for the time it took).
#
#   bash benchmarks/hosted_like.sh                     # Colab: python3.13, VENV=/tmp/hosted-like
#   PLATFORM_SET=kaggle bash benchmarks/hosted_like.sh # Kaggle: python3.12
#   PIP_CONFIG_FILE=/dev/null bash benchmarks/hosted_like.sh   # the public index, not a local one
#
# Exit status 0 only if every notebook ran and the platform's packages are unchanged.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
PLATFORM_SET=${PLATFORM_SET:-colab}
COMMON=(
    "ipython==7.34.0" "ipykernel==6.17.1" "matplotlib==3.10.0" "pandas==2.2.3" "psutil==5.9.5"
    "threadpoolctl==3.6.0" "tqdm==4.67.3" "packaging==26.3" "torchao==0.10.0" "notebook==6.5.7"
    "nbconvert" "setuptools"
)
case $PLATFORM_SET in
    colab)
        WANT=3.13
        PLATFORM=("torch==${TORCH:-2.11.0}" "numpy==2.1.3" "ipywidgets==7.7.1" "${COMMON[@]}")
        DETECTED=(COLAB_RELEASE_TAG=hosted-like) ;;
    kaggle)
        WANT=3.12
        PLATFORM=("torch==${TORCH:-2.10.0}" "numpy==2.0.2" "ipywidgets==8.1.5" "${COMMON[@]}")
        DETECTED=(KAGGLE_KERNEL_RUN_TYPE=Interactive) ;;
    *) echo "PLATFORM_SET is colab or kaggle, not $PLATFORM_SET" >&2; exit 2 ;;
esac
# A Python of the platform's version: $PYTHON, else python3.X on PATH, else one pyenv installed
# (its shim answers only for the global version), else one uv finds (`uv python find`), else a
# message naming the version and how to get it.
find_python() {
    local candidate pyenv_root
    pyenv_root=$(pyenv root 2>/dev/null || echo "${PYENV_ROOT:-$HOME/.pyenv}")
    for candidate in ${PYTHON:-} "python$WANT" "$pyenv_root"/versions/"$WANT".*/bin/"python$WANT" \
        "$ROOT/.venv/bin/uv" uv; do
        case $candidate in
            */uv|uv) command -v "$candidate" >/dev/null 2>&1 \
                && candidate=$("$candidate" python find "$WANT" 2>/dev/null) || continue ;;
        esac
        if command -v "$candidate" >/dev/null 2>&1 && [[ $("$candidate" -c \
            'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null) == "$WANT" ]]; then
            echo "$candidate"; return 0
        fi
        if [[ -n ${PYTHON:-} && $candidate == "$PYTHON" ]]; then
            echo "PYTHON=$PYTHON is not Python $WANT, $PLATFORM_SET's version" >&2; return 1
        fi
    done
    echo "no Python $WANT ($PLATFORM_SET's version) here: install one (uv python install $WANT," \
        "or your system's python$WANT package, e.g. apt-get install python$WANT where it is" \
        "packaged), or name one with PYTHON=/path/to/python$WANT" >&2
    return 1
}
PYTHON=$(find_python) || exit 2
echo "== Python $WANT for $PLATFORM_SET: $PYTHON"
VENV=${VENV:-/tmp/hosted-like-$PLATFORM_SET}
PROTECTED='^(torch|triton|numpy|ipywidgets)=='
start=$(date +%s)

rm -rf "$VENV" && "$PYTHON" -m venv "$VENV"
PY="$VENV/bin/python"
echo "== the platform: $PLATFORM_SET's packages ($("$PY" --version))"
"$PY" -m pip install -q "${PLATFORM[@]}"
"$PY" -m pip freeze | grep -E "$PROTECTED" | tee "$VENV/before.txt"
if "$PY" -c "import jupyterlab" 2>/dev/null; then echo "JupyterLab is installed: not $PLATFORM_SET"; exit 1; fi
installed=$(date +%s)

echo "== the course as a wheel (make dist), installed by the notebooks' first cell"
"$PY" -m pip wheel -q --no-deps --wheel-dir "$VENV/dist" "$ROOT"
WHEEL=$(ls "$VENV"/dist/gpu_course-*.whl)
mkdir -p "$VENV/run/notebooks" "$VENV/run/exercises/checks"
cp "$ROOT"/notebooks/*.ipynb "$ROOT"/notebooks/glossary.md "$VENV/run/notebooks/"
cp "$ROOT"/exercises/*.ipynb "$VENV/run/exercises/"
# on Colab the checker fetches these from the release tag (course.selfcheck.hosted.fetch_checks)
cp "$ROOT"/exercises/checks/*.json "$VENV/run/exercises/checks/"

# nbconvert fails on a cell that raises, not on a display that does (a widget's repr, say): an
# error output anywhere is a failure too.
no_error_output() {
    "$PY" - "$1" <<'PYTHON'
import json, sys
cells = json.load(open(sys.argv[1]))["cells"]
bad = [(i, o["ename"], o["evalue"][:80]) for i, c in enumerate(cells)
       for o in c.get("outputs", []) if o.get("output_type") == "error"]
print(*bad, sep="\n") if bad else None
sys.exit(1 if bad else 0)
PYTHON
}

failed=()
for nb in "$VENV"/run/notebooks/[0-9]*.ipynb "$VENV"/run/exercises/[0-9]*.ipynb; do
    t0=$(date +%s)
    if (cd "$(dirname "$nb")" && env "${DETECTED[@]}" COURSE_SOURCE="$WHEEL" \
        "$PY" -m nbconvert --to notebook --execute --inplace \
        --ExecutePreprocessor.timeout=900 "$nb" >"$nb.log" 2>&1) && no_error_output "$nb"; then
        status=ok
    else
        status=FAILED
        failed+=("$nb")
        tail -20 "$nb.log"
    fi
    echo "$status $(basename "$(dirname "$nb")")/$(basename "$nb") $(($(date +%s) - t0)) s" \
        "(load $(cut -d' ' -f1-3 /proc/loadavg))"
done

echo "== the platform's packages afterwards"
"$PY" -m pip freeze | grep -E "$PROTECTED" | tee "$VENV/after.txt"
unchanged=yes
diff "$VENV/before.txt" "$VENV/after.txt" || unchanged=no
echo "== course check there"
(cd "$VENV/run" && env "${DETECTED[@]}" "$PY" -m course check) || true  # the wheel's

end=$(date +%s)
echo "platform install $((installed - start)) s, notebooks $((end - installed)) s," \
    "total $((end - start)) s; ${#failed[@]} notebook(s) failed; platform packages unchanged:" \
    "$unchanged"
[[ ${#failed[@]} -eq 0 && $unchanged == yes ]]
