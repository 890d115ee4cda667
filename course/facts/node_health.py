"""The node-health lifecycle of a GPU cluster: which Xid calls for which action, and the steps a
node goes through from the error to its return to service (lesson 14).

:data:`XID_ACTIONS` holds the Xids a cluster's operators act on, each with NVIDIA's own words for
it and the two actions NVIDIA's *Xid Catalog* gives (its "Resolution Bucket (Immediate Action)" and
"(Investigatory Action)" columns), and what that means for the Slurm node. :data:`LIFECYCLE` is the
order of the steps (drain, reset or reboot, diagnose, resume), each with the command that does it.
:func:`action_for` looks up an Xid. Standard library only.

Sources (cited where each fact is used):

- NVIDIA, *Xid Errors*, "Analyzing Xid Errors with the Xid Catalog" (Ampere and newer):
  https://docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html
- NVIDIA, *GPU Debug Guidelines* (the Xid 48/63/64 workflow: "drain/cordon the node, wait for all
  work to complete, and reset GPU(s) reporting the XID"): https://docs.nvidia.com/deploy/gpu-debug-guidelines/
- NVML, ``nvmlDeviceGetGpuRecoveryAction`` / ``nvmlDeviceGpuRecoveryAction_t`` (Xid 154's recovery
  actions: none, GPU reset, node reboot, drain P2P, drain and reset):
  https://docs.nvidia.com/deploy/nvml-api/
- SchedMD, ``scontrol(1)`` (``update NodeName=... State=DRAIN Reason=...``, ``State=RESUME``) and
  ``slurm.conf(5)`` (``RebootProgram``, used by ``scontrol reboot ASAP nextstate=DOWN``):
  https://slurm.schedmd.com/scontrol.html
- NVIDIA, *A100 GPU Memory Error Management*, "Response to Uncorrectable Contained ECC Errors"
  (Xid 94: the application is terminated, the others go on, row remapping at the next reset):
  https://docs.nvidia.com/deploy/a100-gpu-mem-error-mgmt/
- NVIDIA DCGM, ``dcgmi diag -r 3`` (the diagnostic before a node returns):
  https://docs.nvidia.com/datacenter/dcgm/latest/user-guide/dcgm-diagnostics.html
"""

from __future__ import annotations

from dataclasses import dataclass

XID_SOURCE = "NVIDIA, Xid Catalog (docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html)"
DEBUG_SOURCE = "NVIDIA, GPU Debug Guidelines (docs.nvidia.com/deploy/gpu-debug-guidelines/)"
NVML_SOURCE = "NVML, nvmlDeviceGpuRecoveryAction_t (docs.nvidia.com/deploy/nvml-api/)"

#: What a node needs after an Xid, from least to most: nothing for the node (the application was at
#: fault or was only the victim), reset the GPU (drain first, so no job runs on it), reboot the node
#: (drain first), take it out for repair.
NODE_ACTIONS = ("none", "drain, reset GPU", "drain, reboot node", "drain, repair (RMA)")


@dataclass(frozen=True)
class XidAction:
    """One Xid: NVIDIA's name and description, the catalogue's actions, and the node's action."""

    xids: tuple[int, ...]
    mnemonic: str
    meaning: str
    immediate: str  # the catalogue's Resolution Bucket (Immediate Action)
    node_action: str  # one of NODE_ACTIONS
    why: str
    source: str = XID_SOURCE


#: The Xids a GPU cluster's operators act on (Ampere and newer), in the order of their numbers.
XID_ACTIONS: tuple[XidAction, ...] = (
    XidAction(
        (13, 31, 43),
        "ROBUST_CHANNEL_GR_EXCEPTION, MMU fault, RESETCHANNEL_VERIF_ERROR",
        "graphics engine exception, GPU memory page fault, GPU stopped processing",
        "RESTART_APP",
        "none",
        "usually the application (a bad index or pointer): fix the code; the node is fine",
    ),
    XidAction(
        (45,),
        "ROBUST_CHANNEL_PREEMPTIVE_REMOVAL",
        "preemptive cleanup: the driver tore down a channel of a process that was killed or ended",
        "IGNORE",
        "none",
        "a consequence, not a cause: it follows a kill (scancel, a timeout) or another Xid; act on "
        "that Xid",
    ),
    XidAction(
        (48,),
        "ROBUST_CHANNEL_FB_ECC_DBE",
        "double-bit (uncorrectable) ECC error",
        "RESET_GPU",
        "drain, reset GPU",
        "the job on the GPU is lost; followed by Xid 63 or 64, drain the node, wait for the work "
        "to end, reset the GPU (NVIDIA's Xid 48 workflow); not only 'if it repeats'",
        DEBUG_SOURCE,
    ),
    XidAction(
        (63,),
        "ECC page retirement or row remapping recorded",
        "a memory row was marked for remapping (page retired); it takes effect at the next reset",
        "RESET_GPU",
        "drain, reset GPU",
        "not fatal: drain and reset when convenient so the remap takes effect",
        DEBUG_SOURCE,
    ),
    XidAction(
        (64,),
        "ECC page retirement or row remapping recording failure",
        "the driver failed to *record* the retirement or remap in the InfoROM",
        "REBOOT_SYSTEM",
        "drain, reboot node",
        "reboot at once (a recording failure); drain and triage if it continues. The signal to "
        "replace the GPU is a failed *remap* (nvidia-smi 'Remapping Failure Occurred', "
        "DCGM_FI_DEV_ROW_REMAP_FAILURE), not Xid 64",
        DEBUG_SOURCE,
    ),
    XidAction(
        (74,),
        "NVLINK_ERROR",
        "an NVLink error",
        "RESET_GPU",
        "drain, reset GPU",
        "multi-GPU jobs on the node fail or slow down; reset, and repair if it comes back",
    ),
    XidAction(
        (79,),
        "GPU_HAS_FALLEN_OFF_THE_BUS",
        "the GPU has fallen off the bus (PCIe): the driver cannot reach it",
        "RESET_GPU",
        "drain, reboot node",
        "every job on the GPU is lost and a reset from the driver usually fails: drain, reboot "
        "the node, run diagnostics; repair if it comes back",
    ),
    XidAction(
        (94,),
        "CONTAINED_ERROR",
        "contained ECC error: the uncorrectable error was contained to the application that used "
        "the memory",
        "RESTART_APP",
        "drain, reset GPU",
        "only that application is killed, other work on the GPU goes on; drain and reset the GPU "
        "when it is free, so that the row remap takes effect",
    ),
    XidAction(
        (95,),
        "UNCONTAINED_ERROR",
        "uncontained ECC error: every application on the GPU may be affected",
        "RESET_GPU",
        "drain, reset GPU",
        "every job on the GPU is lost; reset the GPU before the next job",
    ),
    XidAction(
        (119, 120),
        "GSP_RPC_TIMEOUT, GSP_ERROR",
        "the GPU System Processor (GSP firmware) timed out or failed",
        "RESET_GPU",
        "drain, reset GPU",
        "the GPU may stop answering; drain, reset, and reboot the node if the reset fails",
    ),
    XidAction(
        (154,),
        "GPU_RECOVERY_ACTION_CHANGED",
        "the driver says which recovery the GPU now needs: none, GPU reset, node reboot, drain "
        "P2P, drain and reset (nvidia-smi -q, 'GPU Recovery Action')",
        "the action it names",
        "drain, reset GPU",
        "read the action it names (NVML's nvmlDeviceGetGpuRecoveryAction) and do that one; a "
        "node reboot outranks a GPU reset",
        f"{XID_SOURCE}; {NVML_SOURCE}",
    ),
)


@dataclass(frozen=True)
class Step:
    """One step of the node-health lifecycle and the command that does it."""

    step: str
    command: str
    what_happens: str


#: From a hardware Xid to the node's return: drain (running jobs finish, nothing new lands), reset
#: the GPU or reboot the node, diagnose, resume. A node that fails the diagnostic stays drained and
#: goes for repair.
LIFECYCLE: tuple[Step, ...] = (
    Step(
        "drain",
        'scontrol update NodeName=gpu-a03 State=DRAIN Reason="Xid 79"',
        "no new job lands; running jobs finish (sinfo: drng, then drain); jobs that asked for the "
        "node wait with ReqNodeNotAvail",
    ),
    Step(
        "reset or reboot",
        "nvidia-smi -r -i 5 (GPU reset), or scontrol reboot ASAP nextstate=DOWN "
        'reason="Xid 79" gpu-a03 (node reboot; DOWN until the diagnostic passes)',
        "what the Xid calls for (XID_ACTIONS); a reset needs the GPU idle, hence the drain first",
    ),
    Step(
        "diagnose",
        "dcgmi diag -r 3",
        "DCGM's long diagnostic (memory, PCIe, NVLink, stress); a failure sends the node to repair",
    ),
    Step(
        "resume",
        "scontrol update NodeName=gpu-a03 State=RESUME",
        "the node takes jobs again (sinfo: idle)",
    ),
)


def action_for(xid: int) -> XidAction:
    """What an Xid calls for (``Xid`` on screen): its :class:`XidAction`. Raises ``ValueError``
    for an Xid the table does not hold, naming those it does."""
    for action in XID_ACTIONS:
        if xid in action.xids:
            return action
    known = sorted(x for a in XID_ACTIONS for x in a.xids)
    raise ValueError(f"Xid must be one of {known}, got {xid!r}")


__all__ = ["LIFECYCLE", "NODE_ACTIONS", "XID_ACTIONS", "Step", "XidAction", "action_for"]
