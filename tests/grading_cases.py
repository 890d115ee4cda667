"""Submissions for the grading tests, all graded in ONE ``grade_folder`` run (``--jobs 2``).

``tests/teaching/test_grading.py`` (ordinary mistakes and breakage) and
``tests/teaching/test_grading_attacks.py`` (a learner who wants marks without the answers) share
the run through :func:`graded`: the sandbox start-up and the solution run are paid once. Submissions
are made from the solution and exercise notebooks, so they follow any change to the questions.
"""

from __future__ import annotations

import atexit
import csv
import functools
import hashlib
import json
import random
import shutil
import tempfile
import time
from pathlib import Path

import nbformat
from teaching.grading import authoring, gradebook, sandbox, spec

SET = "00_units_and_memory"
OTHER_SET = "03_data_types"  # one submission of another set: the folder mixes sets
SOLUTION = authoring.SOLUTIONS_DIR / f"{SET}.ipynb"
EXERCISE = authoring.EXERCISES_DIR / f"{SET}.ipynb"
TIMEOUT_S = 15  # per submission; only the submission that defeats the per-cell limit uses it
CELL_TIMEOUT_S = 4  # an honest cell of set 00 takes well under a second
POSSIBLE = sum(q.points for q in spec.read(SOLUTION).questions)  # the set's points, from its source
MARKER = "DAEMON WAS HERE"
# Attacks on files outside the sandbox run only where the sandbox can contain them (PID namespace
# and hidden files); elsewhere they would really damage the machine running the tests.
CONTAINED = not {"pid-namespace", "hidden-files"} & set(sandbox.protections_off())


def answer_cells(nb) -> list[int]:
    return [i for i, c in enumerate(nb.cells) if c.metadata.get("course", {}).get("answer")]


def filled_in() -> nbformat.NotebookNode:
    """The exercise notebook as a learner who gets everything right hands it in."""
    nb = nbformat.read(EXERCISE, as_version=4)
    answers = iter(c["source"] for c in spec.read(SOLUTION).run_cells if c["answer"])
    for i in answer_cells(nb):
        nb.cells[i].source = next(answers)
    assert next(answers, None) is None, "more solution cells than answer cells"
    return nb


def blank() -> nbformat.NotebookNode:
    return nbformat.read(EXERCISE, as_version=4)


def with_cell(code: str, *, before_answer: int, nb=None) -> nbformat.NotebookNode:
    """The right answers (or ``nb``), with one extra code cell just before an answer cell."""
    nb = nb if nb is not None else filled_in()
    nb.cells.insert(answer_cells(nb)[before_answer], nbformat.v4.new_code_cell(code))
    return nb


def with_answer(n: int, code: str, nb=None) -> nbformat.NotebookNode:
    nb = nb if nb is not None else filled_in()
    nb.cells[answer_cells(nb)[n]].source = code
    return nb


def _hashes(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def build(subs: Path, out_dir: Path) -> None:
    """Write every submission."""
    out_csv = out_dir / "grades.csv"

    def put(suffix: str, nb) -> None:
        nbformat.write(nb, subs / f"{SET}-{suffix}.ipynb")

    # -- ordinary mistakes and breakage (tests/teaching/test_grading.py) --
    put("solved", filled_in())
    put("blank", blank())
    raises = with_answer(1, "raise ValueError('no idea')")
    raises.metadata["kernelspec"] = {
        "name": "julia-1.10",
        "display_name": "Julia",
        "language": "julia",
    }
    put("raises", raises)
    put("loops-in-answer", with_answer(1, "bytes_per_param = {}\nwhile True:\n    pass"))
    put("loops-before", with_cell("import time\ntime.sleep(3600)", before_answer=2))
    prints = "import os\nfor _ in range(8):\n    print('x' * 2**20)\n"
    prints += "os.write(1, b'y' * 2**24)  # 16 MB straight to the grader's stdout"
    put("prints", with_cell(prints, before_answer=0))
    exits = with_cell("import sys\nsys.exit(3)", before_answer=0)
    exits.metadata.pop("course", None)
    put("sys-exit", exits)
    put("os-exit", with_cell("import os\nos._exit(1)", before_answer=3))
    deletes = "import os, shutil\nshutil.rmtree(os.path.dirname(os.getcwd()), ignore_errors=True)\n"
    deletes += "shutil.rmtree(os.path.expanduser('~'), ignore_errors=True)"
    if CONTAINED:  # without hidden files this would delete the grader's own /tmp
        put("deletes", with_cell(deletes, before_answer=4))
    put("memory-hog", with_cell("hog = bytearray(64 * 2**30)", before_answer=2))
    wrong = with_answer(
        0,
        "weights_bytes = params * 2\nweights_gb = weights_bytes / GiB\n"
        "weights_gib = weights_bytes / GiB",
    )
    put("gib-for-gb", wrong)
    (subs / f"{SET}-garbage.ipynb").write_bytes(random.Random(0).randbytes(4096))
    (subs / f"{SET}-not-a-notebook.ipynb").write_text(json.dumps({"hello": "world"}))
    (subs / f"{SET}-notes.txt").write_text("I could not open Jupyter, sorry.\n")
    bomb = '{"cells": [], "nbformat": 4, "pad": [' + "[]," * 600_000 + "[]]}"  # 1.8 MB
    (subs / f"{SET}-huge.ipynb").write_text(bomb)
    (subs / "grades-old.csv").write_text("submission,total\nsomeone,9\n")
    other = authoring.EXERCISES_DIR / f"{OTHER_SET}.ipynb"
    nbformat.write(nbformat.read(other, as_version=4), subs / f"{OTHER_SET}-blank.ipynb")

    # -- attacks (tests/teaching/test_grading_attacks.py): blank answers plus a trick; honest
    # score 0 --
    patch = (
        "try:\n    import otter.test_files.ok_test as t\n"
        "    t.run_doctest = lambda *a, **k: (True, '')\nexcept Exception:\n    pass\n"
        "import course.selfcheck.values as v, teaching.grading.check as c, math\n"
        "v.matches = lambda *a, **k: True\nc.check_answer = lambda *a, **k: ''\n"
        "math.isclose = lambda *a, **k: True\n"
    )
    put("attack-monkeypatch", with_cell(patch, before_answer=0, nb=blank()))
    always_equal = (
        "class Anything(int):\n    def __eq__(self, other): return True\n"
        "    def __hash__(self): return 0\n"
        "class Sneaky:\n    def __eq__(self, other): return True\n"
    )
    eq = with_cell(always_equal, before_answer=0, nb=blank())
    eq = with_answer(
        0, "weights_bytes = Anything(1)\nweights_gb = Sneaky()\nweights_gib = Sneaky()", eq
    )
    eq = with_answer(4, "q5_answer = Sneaky()", eq)
    put("attack-eq", eq)
    steal = (
        "import course, os, glob, json, pathlib\n"
        "root = pathlib.Path(course.__file__).resolve().parents[1]\n"
        "found = [p for pat in ('solutions/*', 'build/**/*', 'exercises/checks/*', '../**/*.key.json',"
        f" '{subs.parent}/**/*') for p in glob.glob(str(root / pat) if not pat.startswith('/') "
        "else pat, recursive=True)]\n"
        "print('FOUND', found)\n"
        "keys = [json.load(open(p)) for p in found if p.endswith('.key.json')]\n"
        "if keys:\n"
        "    a = keys[0]['answers']\n"
        "    weights_bytes = a['q1']['weights_bytes']['value']\n"
        "    weights_gb = a['q1']['weights_gb']['value']\n"
        "    weights_gib = a['q1']['weights_gib']['value']\n"
    )
    put("attack-steal-key", with_cell(steal, before_answer=1, nb=blank()))
    brute = (
        "for guess in 'abcd':\n    q5_answer = guess\n    if grader.check('q5'):\n        break\n"
    )
    put("attack-oracle", with_answer(4, brute, nb=blank()))
    forge = (
        "import json, os, subprocess, sys, textwrap\n"
        "nonce = json.load(open('request.json'))['nonce']\n"
        "fake = {'nonce': nonce, 'done': True, 'cells': [], 'extras': {}, 'answers': {"
        "'q1': {'weights_bytes': {'value': 1, 'score': 495}}, 'q5': {'q5_answer': {'value': 'a'}}},"
        " 'score': 495, 'tests': [{'name': 'q1', 'score': 495}]}\n"
        "code = textwrap.dedent(f'''\n"
        "    import json, time\n"
        "    for _ in range(200):\n"
        "        json.dump({fake!r}, open('results.json', 'w'))\n"
        "        time.sleep(0.05)\n"
        "''')\n"
        "subprocess.Popen([sys.executable, '-c', code], start_new_session=True)\n"
    )
    put("attack-forge-results", with_cell(forge, before_answer=0, nb=blank()))
    daemon = (
        "import os, time, glob\n"
        "if os.fork() == 0:\n"
        "    os.setsid()\n"
        "    if os.fork() == 0:\n"
        "        for _ in range(600):\n"
        f"            for target in [{str(out_csv)!r}, *glob.glob({str(subs)!r} + '/*'),"
        f" {str(out_dir / 'grades_logs')!r} + '/x']:\n"
        "                try:\n"
        f"                    open(target, 'a').write({MARKER!r})\n"
        "                except OSError:\n"
        "                    pass\n"
        "            time.sleep(0.1)\n"
        "    os._exit(0)\n"
    )
    if CONTAINED:
        put("attack-daemon", with_cell(daemon, before_answer=0))
    victim = subs / f"{SET}-victim.ipynb"
    nbformat.write(filled_in(), victim)
    edit = (
        "import json\n"
        f"nb = json.load(open({str(victim)!r}))\n"
        "nb['cells'] = []\n"
        f"json.dump(nb, open({str(victim)!r}, 'w'))\n"
    )
    if CONTAINED:
        put("attack-edit-other", with_cell(edit, before_answer=0, nb=blank()))
    claims = filled_in()
    claims.metadata["course"] = {"assignment": "01_hardware"}
    put("attack-metadata", claims)
    symlink = "import os\nos.remove('results.json')\nos.symlink('/etc/shadow', 'results.json')\n"
    symlink += "os.replace = lambda *a, **k: None  # the runner can no longer replace it\n"
    put("attack-symlink", with_cell(symlink, before_answer=4))
    escape = (
        "import os, socket\nnet = []\n"
        "try:\n    socket.create_connection(('1.1.1.1', 80), timeout=2)\n    net.append('online')\n"
        "except OSError as e:\n    net.append(str(e))\n"
        "print('NET', net, 'UID', os.getuid(), 'PID', os.getpid())\n"
        "try:\n    env = open('/proc/self/environ', 'rb').read().replace(b'\\0', b' ').decode()\n"
        "except OSError as e:\n    env = repr(e)\n"
        "print('ENV', env)\n"
    )
    put("attack-escape", with_cell(escape, before_answer=0))
    stubborn = (
        "import time\nwhile True:\n    try:\n        time.sleep(1)\n"
        "    except BaseException:\n        pass\n"
    )
    put("attack-catches-timeout", with_cell(stubborn, before_answer=2))
    deaf = "import signal\nsignal.signal(signal.SIGALRM, signal.SIG_IGN)\nwhile True:\n    pass\n"
    put("ignores-alarm", with_cell(deaf, before_answer=3))
    slow = with_cell("import time\ntime.sleep(CELL - 2)", before_answer=3)
    for _ in range(7):  # eight cells, each within its limit, together past the submission's
        slow = with_cell("time.sleep(CELL - 2)", before_answer=3, nb=slow)
    slow = with_cell(f"CELL = {CELL_TIMEOUT_S}", before_answer=0, nb=slow)
    put("slow-overall", slow)


@functools.cache
def graded() -> dict:
    """Grade every submission in one run; return rows by file name and what was observed."""
    root = Path(tempfile.mkdtemp(prefix="grading-test-"))
    atexit.register(shutil.rmtree, root, True)
    subs, out_dir = root / "submissions", root / "out"
    subs.mkdir()
    out_dir.mkdir()
    build(subs, out_dir)
    before = _hashes(subs)
    repo_before = _hashes(authoring.SOLUTIONS_DIR) | _hashes(authoring.EXERCISES_DIR)
    out_csv = out_dir / "grades.csv"
    start = time.monotonic()
    status = gradebook.grade_folder(
        gradebook.GradingRun(
            subs, out_csv, timeout_seconds=TIMEOUT_S, cell_timeout_seconds=CELL_TIMEOUT_S, jobs=2
        )
    )
    seconds = time.monotonic() - start
    csvs = sorted(out_dir.glob("*.csv"))
    written = {p.name: p.read_bytes() for p in csvs}
    logs_after = _hashes(out_dir / "grades_logs")
    time.sleep(2)  # a surviving daemon would write within 0.1 s
    rows, headers = {}, {}
    for p in csvs:
        with p.open(newline="") as f:
            reader = csv.DictReader(f)
            headers[p.name] = reader.fieldnames
            for row in reader:
                rows[row["submission"]] = row
    return {
        "status": status,
        "rows": rows,
        "headers": headers,
        "csvs": [p.name for p in csvs],
        "seconds": seconds,
        "subs_unchanged": before == _hashes(subs),
        "repo_unchanged": repo_before
        == _hashes(authoring.SOLUTIONS_DIR) | _hashes(authoring.EXERCISES_DIR),
        "out_unchanged": written == {p.name: p.read_bytes() for p in sorted(out_dir.glob("*.csv"))}
        and logs_after == _hashes(out_dir / "grades_logs"),
        "log_dir": out_dir / "grades_logs",
        "subs": subs,
    }


def row(result: dict, suffix: str) -> dict:
    return result["rows"][f"{SET}-{suffix}.ipynb"]


def points(r: dict) -> tuple[float, float]:
    return float(r["total"]), float(r["possible"])


def question(r: dict, q: str) -> float:
    [column] = [k for k in r if k.startswith(f"{q} [")]
    return float(r[column])
