"""Exercise set 11 (inside the GPU): the learner's checks accept the solution and give the hints
written for known wrong answers; the sandboxed grader gives the solution full marks and a blank
notebook 0, the Triton kernel question included (checked on the grader's own probe vectors).
Two hostile answers to the kernel question: plain torch in place of the kernel scores 0 on it (the
check counts the Triton programs launched on the result), and a kernel without its mask costs only
that question (the interpreter's bounds check raises where it used to kill the process).
Four ways to let torch do the work under a launch score 0 on it too: a kernel whose body is ``pass``
launched on torch's result, a kernel that stores back what torch put in the output, a rebound
``triton_kernels`` and a patched ``triton_kernels.kernel_result`` (the check replays each launch
that received the output on a poisoned output and counts the elements it stored, and is called by
absolute import)."""

from __future__ import annotations

import csv

import nbformat
import pytest
import torch
from solution_run import feedback_with, solution_namespace
from teaching.grading import authoring, gradebook, spec

from course.measure import triton_kernels
from course.selfcheck.answers import Grader

pytestmark = pytest.mark.sandbox  # runs solutions in the grading sandbox (tests/conftest.py)

SET = "11_inside_the_gpu"
SOLUTION = authoring.SOLUTIONS_DIR / f"{SET}.ipynb"
EXERCISE = authoring.EXERCISES_DIR / f"{SET}.ipynb"


INPUTS = """\
g = torch.Generator().manual_seed(11)
x, y = torch.randn(1000, generator=g), torch.randn(1000, generator=g)
"""

TORCH_ANSWER = (
    INPUTS
    + """\
def scale_add(a, x, y):
    return a * x.float() + y.float()


max_error = (scale_add(2.5, x, y) - (2.5 * x + y)).abs().max().item()
"""
)

UNMASKED_ANSWER = (
    INPUTS
    + """\
@triton.jit
def scale_add_kernel(x_ptr, y_ptr, out_ptr, a, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offsets, a * tl.load(x_ptr + offsets) + tl.load(y_ptr + offsets))


def scale_add(a, x, y):
    out = torch.empty_like(x)
    scale_add_kernel[(triton.cdiv(x.numel(), 128),)](x, y, out, a, x.numel(), BLOCK=128)
    return out


max_error = (scale_add(2.5, x, y) - (2.5 * x + y)).abs().max().item()
"""
)


TORCH_UNDER_A_KERNEL = (
    INPUTS
    + """\
@triton.jit
def scale_add_kernel(x_ptr, y_ptr, out_ptr, a, n, BLOCK: tl.constexpr):
    pass


def scale_add(a, x, y):
    out = a * x.float() + y.float()
    scale_add_kernel[(triton.cdiv(x.numel(), 128),)](x, y, out, a, x.numel(), BLOCK=128)
    return out


max_error = (scale_add(2.5, x, y) - (2.5 * x + y)).abs().max().item()
"""
)

TORCH_STORED_BACK = (
    INPUTS
    + """\
@triton.jit
def scale_add_kernel(x_ptr, y_ptr, out_ptr, a, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(out_ptr + offsets, tl.load(out_ptr + offsets, mask=mask), mask=mask)


def scale_add(a, x, y):
    out = a * x.float() + y.float()
    scale_add_kernel[(triton.cdiv(x.numel(), 128),)](x, y, out, a, x.numel(), BLOCK=128)
    return out


max_error = (scale_add(2.5, x, y) - (2.5 * x + y)).abs().max().item()
"""
)

FAKE_RESULT = "lambda fn, a, x, y: [fn(a, x, y).tolist(), triton.cdiv(x.numel(), 128)]"

REBOUND_ALIAS = (
    TORCH_ANSWER
    + f"""\

import types

triton_kernels = types.SimpleNamespace(kernel_result={FAKE_RESULT})
"""
)

PATCHED_RESULT = TORCH_ANSWER + f"\ntriton_kernels.kernel_result = {FAKE_RESULT}\n"

BYPASSES = {
    "pass_kernel": TORCH_UNDER_A_KERNEL,
    "stored_back": TORCH_STORED_BACK,
    "rebound_module": REBOUND_ALIAS,
    "patched_kernel_result": PATCHED_RESULT,
}


@pytest.fixture(scope="module")
def namespace() -> dict:
    return solution_namespace(SET)


def _answered(source: str, namespace: dict) -> dict:
    ns = dict(namespace)
    ns.pop("max_error", None)
    try:
        exec(compile(source, "hostile", "exec"), ns)  # noqa: S102 - the test's own answer
    except Exception as e:  # noqa: BLE001 - the learner's cell fails; the check must say why
        ns["_error"] = e
    return ns


def test_plain_torch_in_place_of_the_kernel_is_not_right(namespace, monkeypatch):
    monkeypatch.delenv("COURSE_GRADING", raising=False)
    ns = _answered(TORCH_ANSWER, namespace)
    assert "_error" not in ns and ns["max_error"] == 0  # the numbers alone are right
    text = repr(Grader(SET).check("q3", ns))
    assert "scale_add: gives wrong results" in text and "torch arithmetic" in text


@pytest.mark.parametrize("bypass", sorted(BYPASSES))
def test_torch_doing_the_work_under_a_launch_is_not_right(namespace, monkeypatch, bypass):
    monkeypatch.delenv("COURSE_GRADING", raising=False)
    monkeypatch.setattr(triton_kernels, "kernel_result", triton_kernels.kernel_result)  # restored
    ns = _answered(BYPASSES[bypass], namespace)
    assert "_error" not in ns and ns["max_error"] == 0  # the numbers alone are right
    text = repr(Grader(SET).check("q3", ns))
    assert "scale_add: gives wrong results" in text, text


def test_a_kernel_without_its_mask_fails_its_question_and_nothing_else(namespace, monkeypatch):
    monkeypatch.delenv("COURSE_GRADING", raising=False)
    ns = _answered(UNMASKED_ANSWER, namespace)
    assert "live lanes of program" in str(ns["_error"])  # raised in the learner's cell, no crash
    report = Grader(SET).check("q3", ns)
    assert not report and "OutOfBounds" in repr(report)
    others = [Grader(SET).check(q, ns) for q in ("q4", "q5", "q6", "q7")]
    assert all(others), others


def test_set_11_has_at_least_seven_questions_and_a_function_answer():
    questions = spec.read(SOLUTION).questions
    assert len(questions) >= 7
    assert any("call" in str(q.answers) and "probes" in str(q.answers) for q in questions)


def test_the_solution_passes_every_learner_check(namespace, monkeypatch):
    monkeypatch.delenv("COURSE_GRADING", raising=False)
    report = Grader(SET).check_all(namespace)
    assert bool(report), repr(report)


@pytest.mark.parametrize(
    ("question", "name", "value", "hint"),
    [
        ("q1", "aos_sectors", 32, "two or three share"),
        ("q2", "blocks", 7, "not the smallest of the four limits"),
        ("q4", "unfused_bytes", 4 * 100_000_000 * 4, "2 bytes per element"),
        ("q6", "issued", 40, "both paths"),
        ("q8", "running_sum", 2.3844312, "rescale it before adding"),
        ("q8", "rescale", 403.42879, "at most 1"),
    ],
)
def test_known_wrong_answers_get_their_hint(namespace, monkeypatch, question, name, value, hint):
    monkeypatch.delenv("COURSE_GRADING", raising=False)
    text = feedback_with(SET, namespace, question, name, value)
    assert f"{name}: not right yet" in text and hint in text


@pytest.mark.slow
def test_sandboxed_grading_gives_the_solution_full_marks_and_a_blank_zero(tmp_path):
    subs, out = tmp_path / "subs", tmp_path / "out"
    subs.mkdir()
    out.mkdir()
    blank = nbformat.read(EXERCISE, as_version=4)
    nbformat.write(blank, subs / f"{SET}-blank.ipynb")
    filled = nbformat.read(EXERCISE, as_version=4)
    answers = iter(c["source"] for c in spec.read(SOLUTION).run_cells if c["answer"])
    for cell in filled.cells:
        if cell.metadata.get("course", {}).get("answer"):
            cell.source = next(answers)
    assert next(answers, None) is None
    nbformat.write(filled, subs / f"{SET}-solution.ipynb")
    hostile_answers = {
        "torch": TORCH_ANSWER,
        "unmasked": UNMASKED_ANSWER,
        "pass_kernel": TORCH_UNDER_A_KERNEL,  # one of each kind of bypass, in the real grader
        "patched_kernel_result": PATCHED_RESULT,
    }
    for name, source in hostile_answers.items():
        hostile = nbformat.read(subs / f"{SET}-solution.ipynb", as_version=4)
        for cell in hostile.cells:
            meta = cell.metadata.get("course", {})
            if meta.get("answer") and meta.get("question") == "q3":
                cell.source = source
        nbformat.write(hostile, subs / f"{SET}-{name}.ipynb")
    assert (
        gradebook.grade_folder(
            gradebook.GradingRun(subs, out / "grades.csv", timeout_seconds=120, jobs=1)
        )
        == 0
    )
    csv_path = next(out.glob("grades*.csv"))  # one set in the folder: grades.csv
    with csv_path.open(newline="") as f:
        rows = {r["submission"]: r for r in csv.DictReader(f)}
    possible = sum(q.points for q in spec.read(SOLUTION).questions)
    solved, empty = rows[f"{SET}-solution.ipynb"], rows[f"{SET}-blank.ipynb"]
    assert (float(solved["total"]), float(solved["possible"])) == (possible, possible), solved
    assert float(empty["total"]) == 0, empty
    q3 = next(q.points for q in spec.read(SOLUTION).questions if q.name == "q3")
    for name in hostile_answers:  # 0 on the kernel question, every other point kept
        row = rows[f"{SET}-{name}.ipynb"]
        assert float(row[f"q3 [{q3:g} pts]"]) == 0, row
        assert float(row["total"]) == possible - q3, row


def test_the_online_softmax_answer_is_the_kernels_and_torchs_log_sum_exp(namespace):
    """Q8's blocks as query 0's scores through the course's FlashAttention kernel, which walks
    them as two key blocks of 16 (each of the question's blocks padded with scores whose e^x is
    0, so the second block raises the maximum there too; the query has norm sqrt(d) along the
    first axis, each key carries its score there), and through torch."""
    blocks = (namespace["block1"], namespace["block2"])
    scores = torch.tensor([s for b in blocks for s in b], dtype=torch.float64)
    assert namespace["lse"] == pytest.approx(torch.logsumexp(scores, 0).item(), rel=1e-12)
    if not triton_kernels.available():
        pytest.skip(f"Triton is not available here: {triton_kernels.setup()}")
    d = block = 16
    padded = [s for b in blocks for s in [*b, *[-1e4] * (block - len(b))]]
    q, k = torch.zeros(1, 1, len(padded), d), torch.zeros(1, 1, len(padded), d)
    q[0, 0, 0, 0] = d**0.5
    k[0, 0, :, 0] = torch.tensor(padded)
    _, lse = triton_kernels.attention(q, k, torch.randn(1, 1, len(padded), d), block=block)
    assert lse[0, 0, 0].item() == pytest.approx(namespace["lse"], rel=1e-6)
