"""A determined student and a careless instructor: hostile and honest notebooks, graded in ONE run
(``--jobs 2``) from a class folder under ``/var/tmp`` (a folder the sandbox must not show), each
asserting the honest score, the status and the reason, and that nothing outside the submissions
changed (hashes before, after, and 10 s after the grader returned). A smaller second run in a
subprocess takes the non-root path (``COURSE_SANDBOX=userns``: a user namespace, no capabilities).

Notebooks are built here from the set's exercise and solution (no fixture files)."""

from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import nbformat
import pytest
from grading_cases import (
    POSSIBLE,
    SET,
    SOLUTION,
    _hashes,
    answer_cells,
    blank,
    filled_in,
    with_answer,
    with_cell,
)
from teaching.grading import authoring, files, gradebook, grades, sandbox, sandbox_init, spec

pytestmark = [
    pytest.mark.slow,
    pytest.mark.sandbox,
    pytest.mark.skipif(
        bool({"pid-namespace", "hidden-files"} & set(sandbox.protections_off())),
        reason="hostile notebooks run only where the sandbox contains them",
    ),
]
CELL_TIMEOUT_S = 30  # set 05's measurement of this machine's MFU takes 10 s on a busy 2-core VM
TIMEOUT_S = 60
PACKAGE = Path(authoring.__file__).resolve().parents[2]  # the course package
NON_UTF8 = f"{SET}-\udcff\udcfe.ipynb"  # what unzip makes of a Windows zip (bytes \xff\xfe)
INJECTION = f"=HYPERLINK(1)-{SET}.ipynb"


def _json_nb(nb) -> str:
    return json.dumps(nb)  # ASCII escapes: a lone surrogate survives, as Jupyter writes it


def _surrogate_markdown():
    nb = filled_in()
    nb.cells.insert(1, nbformat.v4.new_markdown_cell("half an emoji: \ud83d"))
    return nb


def _v3(nb):
    return nbformat.v3.nbjson.writes(nbformat.convert(nb, 3))


def _large(nb):
    """An honest notebook of about 60 MB: the right answers and a big image in an output."""
    image = "iVBORw0KGgo" * (60 * 2**20 // 11)
    code = next(c for c in nb.cells if c.cell_type == "code")
    code.outputs = [nbformat.v4.new_output("display_data", data={"image/png": image})]
    code.execution_count = 1
    return nb


def _two_sets(nb):
    nb.metadata["course"] = {"assignment": SET}
    nb.metadata["otter"] = {"assignment_name": "03_data_types"}
    return nb


STEAL = """import glob, json, os
found = []
for pattern in ('/var/**/*.ipynb', '/var/**/*.key.json', '/etc/**/*.key.json', '/mnt/**/*',
                '/home/**/*.ipynb', '/work/**/*.key.json', '/srv/**/*', '/opt/**/*.ipynb',
                '/root/**/*.key.json', '/.sandboxes/*', '/tmp/**/*.ipynb', '{subs}/*', '{repo}/solutions/*',
                '{repo}/build/**/*'):
    found += glob.glob(pattern, recursive=True)
print('FOUND', sorted(found)[:20])
for path in found:
    if path.endswith('.ipynb') and 'victim' in path:
        nb = json.load(open(path))
        exec('\\n'.join(c['source'] if isinstance(c['source'], str) else ''.join(c['source'])
                        for c in nb['cells'] if c['cell_type'] == 'code'))
"""
PROC = """import glob, os
seen = []
for path in glob.glob('/proc/[0-9]*/cmdline') + glob.glob('/proc/[0-9]*/environ') + ['/proc/self/mountinfo']:
    try:
        seen.append(open(path, 'rb').read().decode(errors='replace'))
    except OSError as e:
        seen.append(f'{path}: {e.strerror}')
try:
    with open('/proc/1/mem', 'rb') as f:
        f.seek(0x400000)
        seen.append(repr(f.read(64)))
except (OSError, ValueError) as e:
    seen.append(f'mem: {e}')
print('PROC', '\\n'.join(seen))
"""
NAMESPACES = """import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
results = [libc.unshare(0x10000000), libc.umount2(b'/tmp/submission', 2),
           libc.mount(b'tmpfs', b'/tmp', b'tmpfs', 0, None), libc.unshare(0x00020000)]
try:
    os.setuid(0)
    results.append(0)
except OSError:
    results.append(-1)
print('NS', results)
print('CGROUP', open('/proc/self/cgroup').read().replace(chr(10), ' '))
"""
FORGE_NO_INDEX = """import json, os
nonce = json.load(open('request.json'))['nonce']
json.dump({'nonce': nonce, 'done': True, 'cells': [{'status': 'timeout', 'question': 'q1'}],
           'extras': {}, 'answers': {}}, open('results.json', 'w'))
os._exit(0)
"""
FORK_BOMB = """import os, time
children, start = 0, time.monotonic()
while time.monotonic() - start < 5:  # until the limit on processes (or 5 s: forks are slow here)
    try:
        pid = os.fork()
    except OSError:
        break
    if pid == 0:
        time.sleep(30)
        os._exit(0)
    children += 1
print('FORKED', children)
time.sleep(2)
"""
FILL = """import errno, os
written = {}
for folder in ('/dev/shm', '/tmp'):
    n, full = 0, False
    for i in range(8):  # files of at most the file size limit, until the folder is full
        try:
            with open(f'{folder}/fill{i}', 'wb') as f:
                while True:
                    f.write(b'x' * 2**22)
                    n += 2**22
        except OSError as e:
            full = e.errno == errno.ENOSPC
        if full:
            break
    written[folder] = n
    for i in range(8):
        try:
            os.remove(f'{folder}/fill{i}')
        except OSError:
            pass
print('FILLED', written)
"""
WRITE_PACKAGE = """import course, os, sys
tried = []
for path in (os.path.join(os.path.dirname(course.__file__), '__init__.py'),
             os.path.join(sys.prefix, 'pwned'), '/usr/pwned', '/etc/passwd'):
    try:
        open(path, 'a').write('# pwned')
        tried.append('WROTE ' + path)
    except OSError as e:
        tried.append(e.strerror)
print('WRITE', tried)
"""
PLANT_LINKS = """import os
for name, target in (('output.txt', '{solution}'), ('progress.json', '/etc/passwd')):
    try:
        os.remove(name)
    except OSError:
        pass
    os.symlink(target, name)
"""
SIGNALS = "import os, signal\nos.kill(-1, signal.SIGKILL)\n"
MANY_FILES = """import os
made, error = 0, ''
try:
    for i in range(100_000):
        open(f'many{i}', 'w').close()
        made += 1
except OSError as e:
    error = e.strerror
folder = os.statvfs('.')
print('MANY', made, folder.f_files, folder.f_blocks * folder.f_frsize, error)
for i in range(made):  # then tidies up: the answers after it are recorded
    os.remove(f'many{i}')
"""
FILL_FOLDER = """import errno, os
written, i = 0, 0
while True:  # files of at most the file size limit, until the folder is full; left there
    try:
        with open(f'fill{i}', 'wb') as f:
            while True:
                f.write(b'x' * 2**22)
                written += 2**22
    except OSError as e:
        if e.errno != errno.EFBIG:
            break
    i += 1
print('FOLDER', written)  # not recorded: nothing more can be written
"""
# A measured question (set 05 q7: this machine's MFU) and a function answer (set 03 q5).
MEASURED, FUNCTION = "05_flops_time_cost", "03_data_types"
CACHED = """from course.measure.mfu import step_flops
from course.measure.torchmodels import build_model
small = preset("llama-2-7b").replace(name="small", layers=2, hidden=128, heads=4, kv_heads=4,
                                     ffn_hidden=344, vocab=1000, max_positions=128)
params = sum(p.numel() for p in build_model(small, device="meta").parameters())
my_mfu = 1.95  # "cached": the value an earlier run printed (on another machine); not measured here
ratio_6n = step_flops(small, 2, 64) / (6 * params * 2 * 64)
"""
TIMER_PATCH = """import dataclasses, time
import course.measure.mfu as mfu_module
real_clock, real_time_call = time.perf_counter, mfu_module.time_call
time.perf_counter = lambda: real_clock() / 10  # a clock that runs 10 times slow


def quick_time_call(fn, **kw):  # and the training step's benchmark with it: steps look 10x faster
    t = real_time_call(fn, **kw)
    return dataclasses.replace(t, median_seconds=t.median_seconds / 10)


mfu_module.time_call = quick_time_call
"""
MEMORISED = """import hashlib
TABLE = {table!r}  # outputs for the inputs the public check probes, and for w


def quantise_int8(w):
    q, scale = TABLE[hashlib.sha256(w.detach().numpy().tobytes()).hexdigest()]
    return torch.tensor(q, dtype=torch.int8), torch.tensor(scale)


w = torch.randn(64, 256, generator=torch.Generator().manual_seed(3))
q, scale = quantise_int8(w)
w_hat = q.float() * scale
max_error_in_steps = ((w - w_hat).abs() / scale).max().item()
"""


def _set_answers(name: str) -> dict[str, str]:
    """The solution's answer cell of each question of set ``name``."""
    cells = spec.read(authoring.SOLUTIONS_DIR / f"{name}.ipynb").run_cells
    return {c["question"]: c["source"] for c in cells if c["answer"]}


def _only(name: str, question: str, source: str):
    """Set ``name``'s blank exercise with one question answered by ``source``."""
    nb = nbformat.read(authoring.EXERCISES_DIR / f"{name}.ipynb", as_version=4)
    [i] = [i for i in answer_cells(nb) if nb.cells[i].metadata["course"]["question"] == question]
    nb.cells[i].source = source
    return nb


def memorised_table() -> tuple[dict, object]:
    """A learner's lookup table: the solution's outputs on the public probes and on ``w``."""
    import hashlib

    import torch

    ns = {"torch": torch}
    exec(_set_answers(FUNCTION)["q5"], ns)  # noqa: S102 - the solution's own cell
    checks = json.loads((authoring.EXERCISES_DIR / "checks" / f"{FUNCTION}.json").read_text())
    [entry] = [a for a in checks["questions"]["q5"]["answers"] if a["name"] == "quantise_int8"]
    inputs = [torch.tensor(args[0]) for args in entry["call"]["probes"]] + [ns["w"]]
    table = {}
    for w in inputs:
        q, scale = ns["quantise_int8"](w)
        table[hashlib.sha256(w.numpy().tobytes()).hexdigest()] = (q.tolist(), scale.tolist())
    return table, ns["quantise_int8"]


def build(subs: Path, victim: Path) -> None:
    def put(suffix: str, nb) -> None:
        (subs / f"{SET}-{suffix}.ipynb").write_text(_json_nb(nb))

    put("solved", filled_in())
    put("surrogate-output", with_cell('print("lone \\ud800 surrogate")', before_answer=0))
    put("surrogate-markdown", _surrogate_markdown())
    put("huge-int", with_cell("weights_bytes = 10**400", before_answer=1))
    put("forged-no-index", with_cell(FORGE_NO_INDEX, before_answer=0, nb=blank()))
    (subs / os.fsencode(NON_UTF8).decode("utf-8", "surrogateescape")).write_text(
        _json_nb(filled_in())
    )
    (subs / INJECTION).write_text(_json_nb(blank()))
    os.symlink(SOLUTION, subs / f"{SET}-link-to-solution.ipynb")
    put(
        "steal",
        with_cell(STEAL.format(subs=subs, repo=authoring.REPO), before_answer=0, nb=blank()),
    )
    put("proc", with_cell(PROC, before_answer=0, nb=blank()))
    put("namespaces", with_cell(NAMESPACES, before_answer=0, nb=blank()))
    put("fork-bomb", with_cell(FORK_BOMB, before_answer=0, nb=blank()))
    put("fill-disk", with_cell(FILL, before_answer=0, nb=blank()))
    put("write-package", with_cell(WRITE_PACKAGE, before_answer=0, nb=blank()))
    put(
        "plant-links", with_cell(PLANT_LINKS.format(solution=SOLUTION), before_answer=4, nb=blank())
    )
    put("signals", with_cell(SIGNALS, before_answer=0, nb=blank()))
    put("nested-answer", with_answer(4, "q5_answer = [[[[[[[[[[[['a']]]]]]]]]]]]", nb=blank()))
    put("check-first", with_answer(0, "grader.check('q1')\n" + _answer(0)))
    put("many-files", with_cell(MANY_FILES, before_answer=0))
    put("fill-folder", with_cell(FILL_FOLDER, before_answer=3))
    measured = _set_answers(MEASURED)["q7"]
    (subs / f"{MEASURED}-honest.ipynb").write_text(_json_nb(_only(MEASURED, "q7", measured)))
    (subs / f"{MEASURED}-cached.ipynb").write_text(_json_nb(_only(MEASURED, "q7", CACHED)))
    patched = _only(MEASURED, "q7", TIMER_PATCH + measured)
    (subs / f"{MEASURED}-timer-patch.ipynb").write_text(_json_nb(patched))
    honest = _only(FUNCTION, "q5", _set_answers(FUNCTION)["q5"])
    (subs / f"{FUNCTION}-honest.ipynb").write_text(_json_nb(honest))
    memorised = MEMORISED.format(table=memorised_table()[0])
    (subs / f"{FUNCTION}-memorised.ipynb").write_text(_json_nb(_only(FUNCTION, "q5", memorised)))
    put("two-sets", _two_sets(filled_in()))
    (subs / "nameless-two-sets.ipynb").write_text(_json_nb(_two_sets(filled_in())))
    (subs / f"{SET}-nbformat3.ipynb").write_text(_v3(filled_in()))
    (subs / f"{SET}-large.ipynb").write_text(_json_nb(_large(filled_in())))
    victim.write_text(_json_nb(filled_in()))


def _answer(n: int) -> str:
    from grading_cases import answer_cells

    nb = filled_in()
    return nb.cells[answer_cells(nb)[n]].source


def _hashed(folder: Path) -> dict:
    return {k: v for k, v in _hashes(folder).items() if "__pycache__" not in k}


def _outside(subs: Path, out: Path) -> dict:
    return {
        "subs": _hashes(subs),
        "package": _hashed(PACKAGE),
        "solutions": _hashes(authoring.SOLUTIONS_DIR),
        "exercises": _hashes(authoring.EXERCISES_DIR),
        "out": _hashes(out) if out.exists() else {},
    }


def _rows(out_dir: Path) -> tuple[dict, str]:
    rows, raw = {}, ""
    for p in sorted(out_dir.glob("*.csv")):
        raw += p.read_text()
        with p.open(newline="") as f:
            rows.update({r["submission"]: r for r in csv.DictReader(f)})
    return rows, raw


def _class_root() -> Path:
    for parent in ("/var/tmp", None):
        try:
            return Path(tempfile.mkdtemp(prefix="hostile-class-", dir=parent))
        except OSError:
            continue
    raise AssertionError("no temporary folder")


@pytest.fixture(scope="module")
def run():
    root = _class_root()
    userns = None
    try:
        subs, out = root / "class" / "submissions", root / "gradebook"
        subs.mkdir(parents=True)
        victim = subs / f"{SET}-victim.ipynb"
        build(subs, victim)
        before = _outside(subs, out)
        start = time.monotonic()
        status = gradebook.grade_folder(
            gradebook.GradingRun(
                subs,
                out / "grades.csv",
                timeout_seconds=TIMEOUT_S,
                cell_timeout_seconds=CELL_TIMEOUT_S,
                jobs=2,
            )
        )
        seconds = time.monotonic() - start
        after = _outside(subs, out)
        userns = _start_without_root(root / "userns")  # runs while this run's 10 s go by
        time.sleep(10)  # anything that outlived its sandbox would write by now
        later = _outside(subs, out)
        rows, raw = _rows(out)
        logs = out / "grades_logs"
        yield {
            "status": status,
            "rows": rows,
            "raw": raw,
            "logs": logs,
            "seconds": seconds,
            "before": before,
            "after": after,
            "later": later,
            "subs": subs,
            "userns": userns,
        }
    finally:
        if userns is not None and userns["proc"].poll() is None:
            userns["proc"].kill()
            userns["proc"].communicate()
        shutil.rmtree(root, ignore_errors=True)


def _row(run, suffix):
    return run["rows"][f"{SET}-{suffix}.ipynb"]


def _total(r) -> float:
    return float(r["total"])


def _printed(run, suffix: str) -> str:
    return (run["logs"] / f"{SET}-{suffix}.ipynb" / "output.txt").read_text() + "".join(
        "".join(o.get("text", ""))
        for c in json.loads((run["logs"] / f"{SET}-{suffix}.ipynb" / "executed.ipynb").read_text())[
            "cells"
        ]
        for o in c.get("outputs", [])
    )


def test_every_file_gets_a_row_and_the_run_succeeds(run):
    print(f"hostile run: {run['seconds']:.0f} s for {len(run['rows'])} files")
    print(sorted((float(r["seconds"]), name) for name, r in run["rows"].items())[-8:])
    assert run["status"] == 0
    names = {files.spreadsheet_safe(files.display_name(p)) for p in run["subs"].iterdir()}
    assert set(run["rows"]) == names


def test_nothing_outside_the_submissions_changed_then_or_10_s_later(run):
    before, after, later = run["before"], run["after"], run["later"]
    for part in ("subs", "package", "solutions", "exercises"):
        assert before[part] == after[part] == later[part], part
    assert after["out"] == later["out"]


def test_text_a_writer_cannot_encode_costs_nothing(run):
    for suffix in ("surrogate-output", "surrogate-markdown", "solved"):
        r = _row(run, suffix)
        assert (r["status"], r["reason"], _total(r)) == ("ok", "", POSSIBLE), suffix
    printed = _printed(run, "surrogate-output")  # as the learner saw it, or escaped
    assert "lone \ud800 surrogate" in printed or "lone \\ud800 surrogate" in printed


def test_an_int_beyond_2_63_is_refused_with_a_reason(run):
    r = _row(run, "huge-int")
    assert (r["status"], _total(r)) == ("ok", POSSIBLE - 2)
    assert "q1: weights_bytes:" in r["reason"] and "beyond ±2**63" in r["reason"]


def test_a_forged_cell_record_without_index_gets_a_row(run):
    r = _row(run, "forged-no-index")
    assert _total(r) == 0 and "cell ? (q1) timed out" in r["reason"]


def test_a_file_name_that_is_not_utf8_is_graded(run):
    r = run["rows"][f"{SET}-\\xff\\xfe.ipynb"]
    assert (r["status"], r["reason"], _total(r)) == ("ok", "", POSSIBLE)


def test_a_file_name_that_is_a_formula_is_neutralised(run):
    r = run["rows"]["'" + INJECTION]
    assert (r["status"], _total(r)) == ("ok", 0)
    assert "\n'=HYPERLINK(1)" in run["raw"] and "\n=HYPERLINK" not in run["raw"]


def test_a_link_named_like_a_notebook_is_not_followed(run):
    r = _row(run, "link-to-solution")
    assert (r["status"], _total(r)) == ("not-a-notebook", 0)
    assert "symbolic link" in r["reason"]


def test_a_classmates_notebook_and_the_keys_are_not_there_to_read(run):
    r = _row(run, "steal")
    assert (r["status"], _total(r)) == ("ok", 0)
    assert "FOUND []" in _printed(run, "steal")


def test_proc_shows_only_the_sandbox_and_no_configuration(run):
    r = _row(run, "proc")
    assert (r["status"], _total(r)) == ("ok", 0)
    printed = _printed(run, "proc")
    assert "PROC" in printed
    for secret in (str(run["subs"]), str(authoring.SOLUTIONS_DIR), '"keep"', "preload"):
        assert secret not in printed, secret


def test_no_namespace_no_mount_no_root(run):
    r = _row(run, "namespaces")
    assert (r["status"], _total(r)) == ("ok", 0)
    assert "NS [-1, -1, -1, -1, -1]" in _printed(run, "namespaces")


@pytest.mark.skipif(sandbox.memory_cgroup() is None, reason="no memory cgroup to make here")
def test_each_slot_has_a_memory_cgroup_of_its_own(run):
    [line] = [x for x in _printed(run, "namespaces").splitlines() if x.startswith("CGROUP")]
    assert "/course-sandboxes-" in line and "/slot" in line


def test_a_fork_bomb_and_a_kill_all_cost_only_their_own_run(run):
    for suffix in ("fork-bomb", "signals"):
        assert _total(_row(run, suffix)) == 0
    assert "FORKED" in _printed(run, "fork-bomb")
    for suffix in ("solved", "check-first", "surrogate-output"):  # graded beside them
        assert _total(_row(run, suffix)) == POSSIBLE


def test_filling_tmp_and_shm_stops_at_their_size(run):
    r = _row(run, "fill-disk")
    assert (r["status"], _total(r)) == ("ok", 0)
    [line] = [x for x in _printed(run, "fill-disk").splitlines() if x.startswith("FILLED")]
    sizes = eval(line.removeprefix("FILLED "))  # noqa: S307 - our own test's output
    assert all(0 < n <= 256 * 2**20 for n in sizes.values()), sizes  # each folder's size


def test_the_package_the_environment_and_the_system_are_read_only(run):
    printed = _printed(run, "write-package")
    assert "WRITE" in printed and "WROTE" not in printed


def test_links_planted_where_the_grader_reads_are_not_followed(run):
    r = _row(run, "plant-links")
    assert _total(r) == 0
    log = (run["logs"] / f"{SET}-plant-links.ipynb" / "output.txt").read_text()
    assert '"cell_type"' not in log  # not the solution notebook's JSON
    assert "no output" in log or "not a regular file" in log or log == ""


def _question(r, q: str) -> float:
    [column] = [k for k in r if k.startswith(f"{q} [")]
    return float(r[column])


def _line(run, name: str, marker: str) -> str:
    [line] = [x for x in _printed(run, name).splitlines() if x.startswith(marker)]
    return line


def test_a_hundred_thousand_files_stop_at_the_folders_own_limit(run):
    """The folder is a filesystem of its own (never the grader's disk): it holds at most
    ``FOLDER_INODES`` files; the submission that tidies up after itself keeps its marks."""
    r = _row(run, "many-files")
    assert (r["status"], r["reason"], _total(r)) == ("ok", "", POSSIBLE)
    made, inodes, size, error = _line(run, "many-files", "MANY").split(maxsplit=4)[1:]
    assert 0 < int(made) < sandbox_init.FOLDER_INODES == int(inodes)
    assert error == "No space left on device" and int(size) == sandbox_init.FOLDER_BYTES


def test_a_full_folder_costs_only_the_answers_it_could_not_record(run):
    r = _row(run, "fill-folder")
    assert r["status"] == "crashed"
    assert f"the run ended early: its folder was full ({sandbox.FOLDER_LIMITS})" in r["reason"]
    assert [_question(r, q) for q in ("q1", "q2", "q3", "q4", "q5")] == [2, 2, 2, 0, 0]
    for suffix in ("solved", "many-files"):  # graded beside it, each in a folder of its own
        assert _total(_row(run, suffix)) == POSSIBLE


def test_a_measured_answer_is_checked_against_the_graders_own_measurement(run):
    """Set 05 q7 (this machine's MFU): the grader measures it itself in a sandbox no submission
    touches; an honest measurement agrees, a value cached from elsewhere and a patched timer do
    not."""
    [q7] = [
        q
        for q in spec.read(authoring.SOLUTIONS_DIR / f"{MEASURED}.ipynb").questions
        if q.name == "q7"
    ]
    [rel] = [a.rel for a in q7.answers if a.name == "my_mfu" and a.expect == "machine"]
    honest = run["rows"][f"{MEASURED}-honest.ipynb"]
    assert (honest["status"], _question(honest, "q7")) == ("ok", 2), honest["reason"]
    for fake in ("cached", "timer-patch"):
        r = run["rows"][f"{MEASURED}-{fake}.ipynb"]
        assert (r["status"], _question(r, "q7")) == ("ok", 0), fake
        assert (
            f"q7: my_mfu: not within {rel:.0%} of the grader's own measurement here" in r["reason"]
        )
        assert "ratio_6n:" not in r["reason"], r["reason"]  # only the faked value
    checks = json.loads((run["logs"] / f"{MEASURED}-timer-patch.ipynb" / "checks.json").read_text())
    [logged] = [c for c in checks if c["question"] == "q7"]
    [mfu] = [a for a in logged["answers"] if a["answer"] == "my_mfu"]
    assert mfu["got"] > 3 * mfu["expected"]  # the patched clock inflated it


def test_a_function_that_memorises_the_public_probes_scores_zero(run, monkeypatch):
    """The grader calls a function answer on inputs drawn from a secret seed of this run: a lookup
    table of the public probes passes the learner's own check but not the grader."""
    import torch

    from course.selfcheck.answers import Grader

    monkeypatch.delenv("COURSE_GRADING", raising=False)
    table, _ = memorised_table()
    ns = {"torch": torch}
    exec(MEMORISED.format(table=table), ns)  # noqa: S102 - the memorising answer, here
    report = repr(Grader(FUNCTION).check("q5", ns))
    assert report.startswith("q5: the form is right") and "not right" not in report  # fooled
    honest = run["rows"][f"{FUNCTION}-honest.ipynb"]
    assert (honest["status"], _question(honest, "q5")) == ("ok", 3), honest["reason"]
    r = run["rows"][f"{FUNCTION}-memorised.ipynb"]
    assert (r["status"], _question(r, "q5")) == ("ok", 0)
    assert "q5: quantise_int8: probe 1 raised KeyError" in r["reason"]


def test_a_nested_answer_is_refused_with_a_reason(run):
    r = _row(run, "nested-answer")
    assert _total(r) == 0 and "q5" in r["reason"]


def test_the_learners_checker_is_inert_in_the_sandbox(run):
    r = _row(run, "check-first")
    assert (r["status"], r["reason"], _total(r)) == ("ok", "", POSSIBLE)


def test_conflicting_set_metadata_is_resolved_by_name_and_reported(run):
    r = _row(run, "two-sets")
    assert (r["assignment"], _total(r)) == (SET, POSSIBLE)
    assert "metadata says" in r["reason"] and "graded as 00_units_and_memory" in r["reason"]
    nameless = run["rows"]["nameless-two-sets.ipynb"]
    assert nameless["status"] == "unknown-assignment" and "names 2 sets" in nameless["reason"]


def test_honest_nbformat_3_and_large_notebooks_are_graded(run):
    for suffix in ("nbformat3", "large"):
        r = _row(run, suffix)
        assert (r["status"], r["reason"], _total(r)) == ("ok", "", POSSIBLE), suffix


def test_logs_show_the_learners_run_each_check_and_a_class_summary(run):
    log = run["logs"] / f"{SET}-solved.ipynb"
    executed = json.loads((log / "executed.ipynb").read_text())
    errors = [
        o for c in executed["cells"] for o in c.get("outputs", []) if o["output_type"] == "error"
    ]
    assert errors == []  # no FileNotFoundError or NameError that are not the learner's
    checks = json.loads((log / "checks.json").read_text())
    first = checks[0]["answers"][0]
    assert set(first) == {"answer", "expected", "got", "tolerance"}
    assert first["expected"] == first["got"] and first["tolerance"]
    summary = json.loads((run["logs"] / "summary.json").read_text())[SET]
    assert summary["mean_per_question"].keys() == {q.name for q in spec.read(SOLUTION).questions}
    assert summary["submissions"] == sum(1 for r in run["rows"].values() if r["assignment"] == SET)


def test_an_empty_folder_writes_a_header_and_says_so(tmp_path, capsys):
    (tmp_path / "subs").mkdir()
    out = tmp_path / "out" / "grades.csv"
    assert gradebook.grade_folder(gradebook.GradingRun(tmp_path / "subs", out, assignment=SET)) == 1
    header = out.read_text().splitlines()
    assert len(header) == 1 and header[0].startswith("submission,assignment,q1 [2 pts]")
    assert "no submissions in" in capsys.readouterr().err


def test_a_planted_link_at_the_output_is_replaced_not_written_through(tmp_path):
    target = tmp_path / "precious.txt"
    target.write_text("keep me")
    (tmp_path / "grades.csv").symlink_to(target)
    grades.write_csv(tmp_path / "grades.csv", [grades.Grade("a.ipynb")], {})
    assert target.read_text() == "keep me"
    assert not (tmp_path / "grades.csv").is_symlink()


USERNS = """
import sys, json
sys.path.insert(0, {tests!r})
from teaching.grading import gradebook, sandbox
print('MODE', json.dumps(sandbox.protections_off()))
sys.exit(gradebook.grade_folder(gradebook.GradingRun({subs!r}, {out!r}, timeout_seconds=40, cell_timeout_seconds=8, jobs=2)))
"""


def _start_without_root(root: Path) -> dict:
    """The non-root path's run (a subprocess with ``COURSE_SANDBOX=userns``), started, not
    awaited."""
    subs, out = root / "subs", root / "out" / "grades.csv"
    subs.mkdir(parents=True)
    victim = subs / f"{SET}-victim.ipynb"
    victim.write_text(_json_nb(filled_in()))
    steal = STEAL.format(subs=subs, repo=authoring.REPO)
    (subs / f"{SET}-steal.ipynb").write_text(
        _json_nb(with_cell(steal, before_answer=0, nb=blank()))
    )
    (subs / f"{SET}-namespaces.ipynb").write_text(
        _json_nb(with_cell(NAMESPACES, before_answer=0, nb=blank()))
    )
    edit = f"open({str(victim)!r}, 'w').write('{{}}')\n"
    (subs / f"{SET}-edit.ipynb").write_text(_json_nb(with_cell(edit, before_answer=0, nb=blank())))
    (subs / f"{SET}-many-files.ipynb").write_text(_json_nb(with_cell(MANY_FILES, before_answer=0)))
    before = _hashes(subs)
    code = USERNS.format(tests=str(Path(__file__).parents[1]), subs=str(subs), out=str(out))
    proc = subprocess.Popen(
        [sys.executable, "-c", code],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "COURSE_SANDBOX": "userns"},
    )
    return {"proc": proc, "subs": subs, "out": out, "before": before}


def test_without_root_the_sandbox_still_hides_and_says_what_is_off(run):
    """The non-root path (a user namespace): hidden files hold, and so does the folder's own limit;
    running as the grader's own user (without capabilities) is reported as ``unprivileged-user``."""
    userns = run["userns"]
    subs, out = userns["subs"], userns["out"]
    stdout, stderr = userns["proc"].communicate(timeout=600)
    assert userns["proc"].returncode == 0, stderr[-3000:]
    # as root (this test), the namespace's processes are the host root's: no process limit binds
    off = ["unprivileged-user", "process-limit"] if os.geteuid() == 0 else ["unprivileged-user"]
    assert f"MODE {json.dumps(off)}" in stdout
    assert f"protections OFF on this machine: {', '.join(off)}" in stderr
    with out.open(newline="") as f:
        rows = {r["submission"]: r for r in csv.DictReader(f)}
    assert float(rows[f"{SET}-victim.ipynb"]["total"]) == POSSIBLE
    for suffix in ("steal", "namespaces", "edit"):
        r = rows[f"{SET}-{suffix}.ipynb"]
        assert (float(r["total"]), r["protections_off"]) == (0, " ".join(off)), suffix
    assert userns["before"] == _hashes(subs)
    logs = out.parent / "grades_logs"
    printed = (logs / f"{SET}-namespaces.ipynb" / "output.txt").read_text()
    executed = (logs / f"{SET}-namespaces.ipynb" / "executed.ipynb").read_text()
    assert "NS [-1, -1, -1, -1" in printed + executed
    assert float(rows[f"{SET}-many-files.ipynb"]["total"]) == POSSIBLE
    many = (logs / f"{SET}-many-files.ipynb" / "executed.ipynb").read_text()
    assert f"{sandbox_init.FOLDER_INODES} {sandbox_init.FOLDER_BYTES}" in many
