#!/usr/bin/env bash
# A fresh install measured as a learner makes it, from the public index only.
#
#   bash benchmarks/fresh_install.sh [REPOSITORY] [--keep] [--no-lessons]
#
# Clones REPOSITORY (default: this checkout's committed HEAD) into a new folder whose path has a
# space in it, clears pip's local configuration (config files, find-links, constraints, extra
# indexes) and its cache, so that every package comes from PyPI as on a learner's machine, runs
# `make install` (the learners' set), and prints the time, what was downloaded and the size of
# .venv. Then `python -m course check`, and nbval over every lesson in that environment (nbval and
# pytest are added at the instructors' pins for this, after the figures are taken; --no-lessons skips
# it). Exits non-zero
# if any step fails. Needs git, make, Python 3.11+ and the network; several GB of disk on Linux.
set -euo pipefail

repo="$(git -C "$(dirname "$0")/.." rev-parse --show-toplevel)"
keep=0
lessons=1
for arg in "$@"; do
    case "$arg" in
        --keep) keep=1 ;;
        --no-lessons) lessons=0 ;;
        *) repo="$arg" ;;
    esac
done

work="$(mktemp -d "${TMPDIR:-/tmp}/fresh install.XXXXXX")"
if [ "$keep" = 0 ]; then trap 'rm -rf "$work"' EXIT; fi
echo "fresh clone in: $work/course"
git clone --quiet "$repo" "$work/course"
cd "$work/course"

# Only the public index: no config file (PIP_CONFIG_FILE=/dev/null loads none), no local wheel folder,
# no constraints, no extra index, no cache (so every package is downloaded, and counted).
unset PIP_FIND_LINKS PIP_INDEX_URL PIP_EXTRA_INDEX_URL PIP_CONSTRAINT PIP_NO_INDEX TORCH_INDEX
export PIP_CONFIG_FILE=/dev/null PIP_NO_CACHE_DIR=1

received() {  # bytes received on every interface but loopback (Linux), or nothing
    awk -F'[: ]+' '/:/ && $2 != "lo" {sum += $3} END {printf "%.0f\n", sum}' /proc/net/dev 2>/dev/null
}
rx=$(received)
start=$(date +%s)
make install
seconds=$(( $(date +%s) - start ))

echo
echo "== fresh install on $(uname -sm), $(python3 --version 2>&1), $(nproc) cores, load $(cut -d' ' -f1 /proc/loadavg 2>/dev/null || echo '?')"
echo "time:       $((seconds / 60)) min $((seconds % 60)) s (make install)"
if [ -n "$rx" ]; then
    echo "downloaded: $(( ($(received) - rx) / 1000000 )) MB (received by this machine meanwhile)"
fi
echo "disk:       $(du -sh .venv | cut -f1) (.venv)"
echo "torch:      $(.venv/bin/python -c 'import torch; print(torch.__version__, "CUDA", torch.version.cuda)')"
echo

.venv/bin/python -m course check
[ "$lessons" = 1 ] || exit 0
.venv/bin/python -m pip install --quiet -c requirements/instructors.txt nbval pytest
nb_start=$(date +%s)
.venv/bin/python -m pytest -q -p no:cacheprovider --nbval --nbval-current-env \
    --nbval-cell-timeout=300 notebooks
echo "nbval over every lesson: $(( $(date +%s) - nb_start )) s"
