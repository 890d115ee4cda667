"""The node-health lifecycle: each Xid the lesson teaches has NVIDIA's action, and the steps run in
the order operators follow (drain before a reset, diagnose before resume)."""

import pytest

from course.facts import node_health


@pytest.mark.parametrize("xid", [45, 48, 63, 64, 79, 94, 95, 119, 120, 154])
def test_every_xid_of_the_lifecycle_has_an_action_and_a_source(xid):
    action = node_health.action_for(xid)
    assert action.node_action in node_health.NODE_ACTIONS
    assert action.source.startswith(("NVIDIA", "NVML")) and action.why


def test_the_catalogues_immediate_actions():
    # NVIDIA Xid Catalog, "Resolution Bucket (Immediate Action)"; GPU Debug Guidelines for 48/63/64
    immediate = {x: node_health.action_for(x).immediate for x in (13, 45, 48, 64, 94, 95, 119)}
    assert immediate == {
        13: "RESTART_APP",
        45: "IGNORE",
        48: "RESET_GPU",
        64: "REBOOT_SYSTEM",
        94: "RESTART_APP",
        95: "RESET_GPU",
        119: "RESET_GPU",
    }


def test_application_faults_leave_the_node_alone_and_hardware_drains_it():
    assert node_health.action_for(13).node_action == "none"
    assert node_health.action_for(45).node_action == "none"
    for xid in (48, 64, 74, 79, 95, 119):
        assert node_health.action_for(xid).node_action.startswith("drain"), xid
    # Xid 48 is drained at once, not "if it repeats" (NVIDIA's Xid 48 workflow)
    assert "if it repeats" in node_health.action_for(48).why
    assert "not only" in node_health.action_for(48).why
    # Xid 64 is a recording failure (reboot), not the replace-the-GPU signal
    assert "*record*" in node_health.action_for(64).meaning
    assert "REMAP_FAILURE" in node_health.action_for(64).why


def test_the_lifecycle_drains_first_and_resumes_last():
    steps = [s.step for s in node_health.LIFECYCLE]
    assert steps == ["drain", "reset or reboot", "diagnose", "resume"]
    assert "State=DRAIN" in node_health.LIFECYCLE[0].command
    assert "dcgmi diag" in node_health.LIFECYCLE[2].command
    assert "State=RESUME" in node_health.LIFECYCLE[-1].command


def test_an_xid_outside_the_table_names_the_known_ones():
    with pytest.raises(ValueError, match=r"Xid must be one of \[13, 31, 43, 45"):
        node_health.action_for(999)
