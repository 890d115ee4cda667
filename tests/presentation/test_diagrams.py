"""The diagrams of course/presentation/diagrams.py draw the registry's numbers, and only those.

Each test collects the text on the figure and checks every number in it against figures computed
here from course/facts/hardware/, so a diagram cannot show a typed or stale spec.
"""

import re

import matplotlib
import pytest

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402

from course.facts import hardware, units
from course.presentation import diagrams  # noqa: E402

NUMBER = re.compile(r"(?<![A-Za-z\d.,])\d[\d,]*(?:\.\d+)?")  # not the 1 of L1, 32 of FP32


def numbers_in(texts) -> set[str]:
    return {m.replace(",", "") for t in texts for m in NUMBER.findall(t)}


def name_numbers(*names: str) -> set[str]:
    """Numbers that are part of a registry name: 'H100 SXM 80GB', 'HBM2e', 'PCIe 5.0 x16'."""
    return numbers_in(names)


def size_numbers(n_bytes: float) -> set[str]:
    """The number part of a binary size, with 0-2 decimals (256 KiB, 47.68 MiB)."""
    out = set()
    for digits in (0, 1, 2):
        text = units.fmt_bytes(n_bytes, binary=True, digits=digits).split()[0].replace(",", "")
        out |= {text, text.rstrip("0").rstrip(".") if "." in text else text}
    return out


def rate_numbers(bytes_per_s: float) -> set[str]:
    out = set()
    for digits in (0, 1, 2):
        text = units.fmt_bandwidth(bytes_per_s, digits=digits).split()[0].replace(",", "")
        out |= {text, text.rstrip("0").rstrip(".") if "." in text else text}
    return out


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


@pytest.mark.parametrize("key", ["h100-sxm", "a100-80gb-sxm"])
def test_gpu_anatomy_shows_the_registrys_counts_and_sizes(key):
    g, a = hardware.GPUS[key], hardware.ANATOMY[key]
    fig = diagrams.gpu_anatomy(key)
    texts = diagrams.figure_texts(fig)
    body = [t for t in texts if not t.startswith("Numbers:")]
    expected = {
        str(v)
        for v in (
            g.sms,
            a.gpcs,
            a.chip_gpcs * a.chip_sms_per_gpc,
            a.chip_sms_per_gpc,
            a.warp_schedulers_per_sm,
            g.cuda_cores // g.sms // a.warp_schedulers_per_sm,
            g.cuda_cores,
            g.tensor_cores,
            a.hbm_stacks,
        )
    }
    sizes = set().union(
        *(
            size_numbers(b)
            for b in (
                g.l2_bytes,
                g.memory_bytes,
                g.l1_per_sm_bytes,
                a.max_shared_memory_per_sm_bytes,
                a.register_file_per_sm_bytes // a.warp_schedulers_per_sm,
            )
        )
    )
    allowed = expected | sizes | rate_numbers(g.memory_bandwidth_bytes_per_s)
    allowed |= name_numbers(g.name, g.memory_type, a.chip)
    shown = numbers_in(body)
    assert shown <= allowed, f"numbers not from the registry: {shown - allowed}"
    for must in (str(g.sms), str(g.cuda_cores), str(g.tensor_cores), str(a.gpcs)):
        assert must in shown
    assert g.name in " ".join(texts) and any("course/facts/hardware/" in t for t in texts)


@pytest.mark.parametrize("key", ["h100-sxm", "a100-80gb-sxm"])
def test_memory_pyramid_levels_are_the_registrys(key):
    g, a = hardware.GPUS[key], hardware.ANATOMY[key]
    levels = {level.name.split(" (")[0]: level for level in diagrams.pyramid_levels(key)}
    assert list(levels) == ["Registers", "L1 / shared memory", "L2 cache", "HBM", "Host DRAM"]
    assert levels["Registers"].capacity_bytes == a.register_file_per_sm_bytes * g.sms
    assert (
        levels["Registers"].bandwidth_bytes_per_s is None
    )  # NVIDIA publishes no register bandwidth
    assert levels["L1 / shared memory"].capacity_bytes == g.l1_per_sm_bytes * g.sms
    assert levels["L1 / shared memory"].bandwidth_bytes_per_s == 128 * g.sms * g.boost_clock_hz
    assert levels["L2 cache"].capacity_bytes == g.l2_bytes
    l2_per_clock = a.l2_read_bytes_per_clock
    assert levels["L2 cache"].bandwidth_bytes_per_s == (
        l2_per_clock and l2_per_clock * g.boost_clock_hz
    )
    assert (levels["HBM"].capacity_bytes, levels["HBM"].bandwidth_bytes_per_s) == (
        g.memory_bytes,
        g.memory_bandwidth_bytes_per_s,
    )
    system = next(s for s in hardware.SYSTEMS.values() if s.gpu == key)
    assert levels["Host DRAM"].capacity_bytes == system.system_memory_bytes
    assert (
        levels["Host DRAM"].bandwidth_bytes_per_s
        == hardware.INTERCONNECTS[g.host_link].bandwidth_bytes_per_s
    )


@pytest.mark.parametrize("key", ["h100-sxm", "a100-80gb-sxm", "a100-40gb-sxm"])
def test_memory_pyramid_draws_only_those_numbers(key):
    g = hardware.GPUS[key]
    levels = diagrams.pyramid_levels(key)
    texts = diagrams.figure_texts(diagrams.memory_pyramid(key))
    body = [t for t in texts if not t.startswith("Source:")]
    host, c2c = hardware.INTERCONNECTS[g.host_link], hardware.NVLINK_C2C
    systems = [s for s in hardware.SYSTEMS.values() if s.gpu == key]
    allowed = name_numbers(g.name, g.memory_type, host.name, c2c.name, *(s.name for s in systems))
    allowed |= {str(s.gpus) for s in systems}
    for level in levels:
        allowed |= size_numbers(level.capacity_bytes)
        allowed |= size_numbers(level.capacity_bytes / g.sms)  # per-SM sizes
        if level.bandwidth_bytes_per_s:
            allowed |= rate_numbers(level.bandwidth_bytes_per_s)
    allowed |= rate_numbers(c2c.bandwidth_bytes_per_s) if systems else set()
    shown = numbers_in(body)
    assert shown <= allowed, f"numbers not from the registry: {shown - allowed}"
    for level in levels:  # every capacity is on the figure
        assert shown & size_numbers(level.capacity_bytes), level.name


def test_software_stack_lists_the_layers_top_down_and_marks_the_wheel():
    fig = diagrams.software_stack({"PyTorch": "2.13.0"})
    ax = fig.axes[0]
    names = [name for name, *_ in diagrams.STACK]
    heights = {}
    for t in ax.texts:
        for name in names:
            if t.get_text() == name or t.get_text().startswith(name + "\n"):
                heights.setdefault(name, t.get_position()[1])
    assert list(heights) == names
    assert [heights[n] for n in names] == sorted(heights.values(), reverse=True)  # top down
    texts = " ".join(diagrams.figure_texts(fig))
    assert (
        "PyTorch\n2.13.0" in texts
        and "torch wheel" in texts
        and "installed on the machine" in texts
    )
    bundled = [name for name, _, origin, *_ in diagrams.STACK if "torch wheel" in origin]
    assert bundled == ["PyTorch", "cuBLAS / cuDNN / NCCL", "CUDA runtime"]


def test_a_gpu_without_anatomy_data_is_a_clear_error():
    with pytest.raises(ValueError, match="anatomy data"):
        diagrams.gpu_anatomy("rtx-3090")
