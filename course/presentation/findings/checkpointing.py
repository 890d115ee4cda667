"""Findings of lesson 12: what a checkpoint, an async save and a restart cost on this run.

Each function takes the records a demo returned and says what they show, with every outcome
worded (faster, slower, about the same, too noisy to tell, missing).
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence

from course.facts import units
from course.presentation.findings._common import NOISY, SAME, times


def async_save(records: Sequence[Mapping]) -> str:
    """How long ``dcp.async_save`` held training up against a blocking ``dcp.save``, from paired,
    interleaved repeats (:func:`course.distributed.checkpoint.async_overlap`)."""
    if not records:
        return "No async-save records: the cell did not run."
    block = [r["blocking_save_seconds"] for r in records]
    held = [r["async_blocked_seconds"] for r in records]
    ratios = [b / h for b, h in zip(block, held, strict=True) if h > 0]
    if not ratios:
        return "The async save returned in no measurable time: rerun with a larger model."
    ratio = statistics.median(ratios)
    spread = (max(ratios) - min(ratios)) / ratio if len(ratios) > 1 else 0.0
    head = (
        f"Blocking `dcp.save` stopped training for {units.fmt_seconds(statistics.median(block))}"
        f" (median of {len(records)}); `dcp.async_save` held it for "
        f"{units.fmt_seconds(statistics.median(held))}"
    )
    agree = all(r > 1 + SAME for r in ratios) or all(r < 1 - SAME for r in ratios)
    if spread > NOISY and not agree:
        return (
            f"{head}, but the pairs disagree (ratios {min(ratios):.2g} to {max(ratios):.2g}): "
            "the machine was busy, so rerun before drawing a conclusion."
        )
    if ratio > 1 + SAME:
        return (
            f"{head}: {times(ratio)} less. The rest of the write ran in the background while "
            "training went on; it still costs memory (a staged copy of the state) and disk "
            "bandwidth the next checkpoint competes for."
        )
    if ratio < 1 - SAME:
        return (
            f"{head}: longer than the blocking save ({times(1 / ratio)}). On a model this "
            "small the fixed cost of staging and starting the background writer outweighs "
            "the write itself; the gain appears when the write is long."
        )
    return (
        f"{head}: about the same. The state is so small that writing it costs no more than "
        "staging a copy of it; async saving pays when the write itself is long."
    )


def disk_against_filesystem(
    disk_bytes_per_s: float | None,
    spread_fraction: float,
    filesystem_bytes_per_s: float,
    gpus: int,
    filesystem: str,
    checkpoint_bytes: float,
) -> str:
    """This machine's disk against a parallel filesystem's share per GPU, and what a checkpoint
    of ``checkpoint_bytes`` would take on each."""
    if not disk_bytes_per_s:
        return "No disk measurement: the cell did not run."
    per_gpu = filesystem_bytes_per_s / gpus
    here = checkpoint_bytes / disk_bytes_per_s
    there = checkpoint_bytes / filesystem_bytes_per_s
    noisy = (
        f" The repeats spread by {spread_fraction:.0%}: the disk was shared, take the figure "
        "as rough."
        if spread_fraction > NOISY
        else ""
    )
    ratio = disk_bytes_per_s / per_gpu
    if ratio > 1 + SAME:
        share = f"{times(ratio)} more than"
    elif ratio < 1 - SAME:
        share = f"{times(1 / ratio)} less than"
    else:
        share = "about"
    return (
        f"This disk wrote {units.fmt_bandwidth(disk_bytes_per_s)} synced, {share} the "
        f"{units.fmt_bandwidth(per_gpu)} that {filesystem} gives each of {gpus:,} GPUs when "
        f"all write at once ({units.fmt_bandwidth(filesystem_bytes_per_s)} in all). The whole "
        f"checkpoint of {units.fmt_bytes(checkpoint_bytes)} would take "
        f"{units.fmt_seconds(here)} here and {units.fmt_seconds(there)} there: a parallel "
        f"filesystem is fast because thousands of writers share it.{noisy}"
    )


def restart(tl: Mapping | None, every: int) -> str:
    """What the failure cost in the elastic run: the work done again and the restart's time."""
    if not tl or not tl.get("steps"):
        return "No elastic run to read: the cell did not run (or torchrun failed: see its output)."
    if not tl["failures"]:
        return (
            f"No failure happened in this run: {len(tl['steps'])} steps, "
            f"{len(tl['checkpoints'])} checkpoints, nothing lost."
        )
    step = tl["failures"][0][0]
    if not tl["resumes"]:
        return (
            f"A rank died at step {step} and the run did not resume: the elastic agent had no "
            "restart left, or no checkpoint was complete. Read torchrun's output."
        )
    lost, total = tl["lost_seconds"], tl["total_seconds"]
    lost_steps = tl["lost_steps"]
    lost_txt = (
        f"{len(lost_steps)} step{'s' * (len(lost_steps) != 1)} done again "
        f"({units.fmt_seconds(lost)})"
        if lost_steps
        else "no step done again (the failure came right after a checkpoint)"
    )
    return (
        f"A rank died at step {step}; the group resumed from the checkpoint of step "
        f"{tl['resumes'][0][0]} (one every {every} steps): {lost_txt}, and "
        f"{units.fmt_seconds(tl['restart_seconds'])} from the failure to the loaded "
        f"checkpoint (detection, stopping the survivors, new processes importing torch, "
        f"rendezvous, loading). Failure and restart together took "
        f"{(lost + tl['restart_seconds']) / total:.0%} of this {units.fmt_seconds(total)} run."
    )


def resumed(full: Mapping, without: Mapping[str, Mapping]) -> str:
    """Whether a run stopped and resumed from its checkpoint is bitwise the uninterrupted one,
    and what leaving each part out of the checkpoint does (records of
    ``course.distributed.resume.interrupted_and_uninterrupted``)."""

    def verdict(r: Mapping) -> str:
        if not r["losses_differ"] and not r["params_differ"]:
            return "every loss and every parameter tensor bitwise equal (`torch.equal`)"
        first = min(r["losses_differ"]) if r["losses_differ"] else None
        where = f"losses differ from step {first}" if first is not None else "losses equal"
        return f"{where}, {len(r['params_differ'])} parameter tensors differ"

    lines = [
        f"Stopped after step {full['stopped_at']} of {full['steps']}, saved with `dcp.save`, "
        f"resumed from `dcp.load` with the generators seeded elsewhere: {verdict(full)}."
    ]
    lines += [f"- without **{part}**: {verdict(r)}" for part, r in without.items()]
    return "\n".join(lines)


def redone_steps(events: Sequence[Mapping]) -> str:
    """The steps the elastic run did twice, the first attempt's loss against the restart's."""
    first = {e["step"]: e["loss"] for e in events if e["event"] == "step" and e["attempt"] == 0}
    again = [e for e in events if e["event"] == "step" and e["attempt"] > 0 and e["step"] in first]
    if not again:
        return "No step was done twice in this run (no failure, or it came right after a save)."
    rows = [f"step {e['step']}: {first[e['step']]!r} then {e['loss']!r}" for e in again]
    same = sum(first[e["step"]] == e["loss"] for e in again)
    verdict = (
        "identical to the last bit"
        if same == len(again)
        else f"identical in {same} of {len(again)} steps only"
    )
    return (
        f"Steps done twice (rank 0's loss before the failure, then after the restart): "
        f"{'; '.join(rows)}. The re-done losses are {verdict}."
    )


__all__ = ["async_save", "disk_against_filesystem", "redone_steps", "restart", "resumed"]
