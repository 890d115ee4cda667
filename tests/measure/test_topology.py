"""course.measure.topology (lesson 11): CPU lists, the reference run's topology, an 8-GPU matrix."""

from __future__ import annotations

from course.facts.data import reference
from course.measure import topology


def test_cpu_list_and_sys_parsing(tmp_path):
    assert topology.cpu_list("0-3,8,10-11") == [0, 1, 2, 3, 8, 10, 11]
    node = tmp_path / "node" / "node1"
    node.mkdir(parents=True)
    (node / "cpulist").write_text("4-7\n")
    (node / "meminfo").write_text("Node 1 MemTotal:       1024 kB\n")
    assert topology.numa_nodes(tmp_path) == [topology.NumaNode(1, [4, 5, 6, 7], 1024 * 1024)]
    assert topology.numa_nodes(tmp_path / "absent") == []


def test_numa_nodes_and_caches_print_themselves(tmp_path):
    node = tmp_path / "node" / "node0"
    node.mkdir(parents=True)
    (node / "cpulist").write_text("0-1\n")  # no meminfo: memory unknown
    nodes = topology.numa_nodes(tmp_path)
    assert nodes.columns == ["node", "cpus", "memory_bytes"]
    assert nodes.text_rows() == [["0", "[0, 1]", "unknown"]]
    cache = tmp_path / "cpu" / "cpu0" / "cache" / "index0"
    cache.mkdir(parents=True)
    for name, text in [
        ("level", "1"),
        ("type", "Data"),
        ("size", "48K"),
        ("coherency_line_size", "64"),
        ("shared_cpu_list", "0"),
    ]:
        (cache / name).write_text(text + "\n")
    caches = topology.cache_hierarchy(tmp_path)
    assert caches == [topology.CacheLevel(1, "Data", 48 * 1024, 64, [0])]
    assert caches.columns == ["level", "kind", "size_bytes", "line_bytes", "shared_by_cpus"]
    assert caches.text_rows() == [["1", "Data", "49.2 KB (48.0 KiB)", "64", "[0]"]]
    assert "49.2 KB (48.0 KiB)" in str(caches) and not caches.note
    absent = topology.cache_hierarchy(tmp_path / "absent")
    assert absent == [] and "sysctl hw" in absent.note


def test_reference_topology_and_smi_summary_parse():
    machine = reference.load(reference.H100, "machine")
    rows = topology.parse_topo(machine["nvidia_smi_topo"])
    assert [(r.device, r.cpu_affinity, r.numa_affinity) for r in rows] == [("GPU0", "0-15", "0")]
    assert rows.columns == ["device", "links", "cpu_affinity", "numa_affinity"]
    assert rows.text_rows() == [["GPU0", "{'GPU0': 'X'}", "0-15", "0"]]
    smi = topology.parse_smi_summary(machine["nvidia_smi"])
    assert smi["power_cap"] == "700W" and smi["volatile_uncorrected_ecc"] == "0"
    assert smi["mig_mode"] == "Disabled" and smi["performance_state"] == "P0"


def test_eight_gpu_topology_matrix_parses():
    text = (
        "\tGPU0\tGPU1\tNIC0\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\n"
        "GPU0\t X \tNV18\tPXB\t0-55\t0\t\tN/A\n"
        "GPU1\tNV18\t X \tSYS\t56-111\t1\t\tN/A\n"
        "NIC0\tPXB\tSYS\t X \n\nLegend:\n"
    )
    rows = topology.parse_topo(text)
    assert rows[1].links == {"GPU0": "NV18", "GPU1": "X", "NIC0": "SYS"}
    assert rows[1].numa_affinity == "1" and rows[2].device == "NIC0"
