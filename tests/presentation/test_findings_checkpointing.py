"""Every branch of lesson 12's findings, with synthetic records."""

from __future__ import annotations

from course.presentation.findings import checkpointing as F


def _pairs(block, held):
    return [
        {"blocking_save_seconds": b, "async_blocked_seconds": h}
        for b, h in zip(block, held, strict=True)
    ]


def test_async_save_branches():
    assert "did not run" in F.async_save([])
    assert "less" in F.async_save(_pairs([1.0, 1.1, 0.9], [0.2, 0.25, 0.2]))
    assert "longer than the blocking" in F.async_save(_pairs([0.1, 0.1, 0.1], [0.3, 0.3, 0.35]))
    assert "about the same" in F.async_save(_pairs([0.1, 0.1, 0.1], [0.1, 0.102, 0.098]))
    assert "rerun" in F.async_save(_pairs([1.0, 0.1, 0.5], [0.2, 0.5, 0.5]))
    assert "no measurable time" in F.async_save(_pairs([0.1], [0.0]))


def test_disk_against_filesystem_branches():
    args = dict(
        filesystem_bytes_per_s=2e12, gpus=16_384, filesystem="Tectonic", checkpoint_bytes=4.86e12
    )
    assert "did not run" in F.disk_against_filesystem(None, 0.0, **args)
    fast = F.disk_against_filesystem(1e9, 0.05, **args)
    assert "more than" in fast and "rough" not in fast
    assert "less than" in F.disk_against_filesystem(1e7, 0.05, **args)
    assert "about the" in F.disk_against_filesystem(2e12 / 16_384, 0.05, **args)
    assert "rough" in F.disk_against_filesystem(1e9, 0.8, **args)


def _tl(failures=True, resumes=True, lost=(2,)):
    steps = [(0, i, i, i + 0.9) for i in range(4)] + [(1, i, 10 + i, 10.9 + i) for i in (2, 3)]
    return {
        "steps": steps,
        "checkpoints": [(2, 1.95, 2.0)],
        "failures": [(3, 4.0, 1)] if failures else [],
        "resumes": [(2, 9.0, 9.5)] if resumes else [],
        "lost_steps": list(lost),
        "lost_seconds": 0.9 * len(lost),
        "total_seconds": 14.0,
        "restart_seconds": 5.5,
    }


def test_restart_branches():
    assert "did not run" in F.restart(None, 2)
    assert "No failure" in F.restart(_tl(failures=False), 2)
    assert "did not resume" in F.restart(_tl(resumes=False), 2)
    text = F.restart(_tl(), 2)
    assert "step 3" in text and "1 step done again" in text and "46%" in text
    assert "no step done again" in F.restart(_tl(lost=()), 2)


def _resume_record(losses_differ=(), params_differ=()):
    return {
        "steps": 8,
        "stopped_at": 3,
        "losses_differ": list(losses_differ),
        "params_differ": list(params_differ),
    }


def test_resumed_says_bitwise_only_when_nothing_differs():
    text = F.resumed(_resume_record(), {"rng": _resume_record([3, 4], ["w", "b"])})
    first, second = text.splitlines()
    assert "bitwise equal" in first
    assert "rng" in second and "from step 3" in second and "2 parameter tensors differ" in second
    assert "bitwise" not in F.resumed(_resume_record([], ["w"]), {})


def _step(attempt, step, loss):
    return {"event": "step", "attempt": attempt, "step": step, "loss": loss}


def test_redone_steps_compares_the_losses_exactly():
    same = [_step(0, 3, 5.25), _step(0, 4, 5.0), _step(1, 3, 5.25), _step(1, 4, 5.0)]
    assert "identical to the last bit" in F.redone_steps(same)
    off = same[:3] + [_step(1, 4, 5.000001)]
    assert "identical in 1 of 2 steps only" in F.redone_steps(off)
    assert "No step was done twice" in F.redone_steps(same[:2])
