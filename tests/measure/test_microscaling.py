"""course.measure.microscaling: the emulated FP8 / MX / NVFP4 formats against their specifications
(OCP MX v1.0; Micikevicius et al. 2022; NVIDIA's NVFP4 blog, 2025) and what block size buys."""

from __future__ import annotations

import pytest
import torch

from course.measure import microscaling as mx


def data(seed: int = 0) -> torch.Tensor:
    """Weight-like values: a Gaussian with rare 20x outliers, which one scale per tensor handles
    badly."""
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(64, 1024, generator=g)
    x[torch.rand(64, 1024, generator=g) < 0.001] *= 20
    return x


def test_e2m1_rounds_to_its_eight_values_and_saturates_at_6():
    x = torch.tensor([0.2, 0.26, 0.74, 1.3, 2.4, 2.6, 5.1, 7.0, -3.3, -100.0])
    expected = [0.0, 0.5, 0.5, 1.5, 2.0, 3.0, 6.0, 6.0, -3.0, -6.0]
    assert mx.round_to_element(x, "e2m1").tolist() == expected


def test_fp8_elements_have_the_published_maxima():
    # Micikevicius et al. 2022, Table 1: E4M3 max 448, E5M2 max 57,344 (values above saturate here).
    assert mx.round_to_element(torch.tensor([500.0]), "e4m3").item() == 448
    assert mx.round_to_element(torch.tensor([1e6]), "e5m2").item() == 57344
    assert mx.round_to_element(torch.tensor([448.0, 57344.0]), "e5m2").tolist() == [448, 57344]


def test_mx_scale_is_a_power_of_two_from_the_block_maximum():
    # OCP MX v1.0 sec. 6.3: X = 2^(floor(log2(amax)) - emax_elem); E2M1 emax = 2. amax 6 -> 2^0.
    x = torch.tensor([6.0, 1.0, -0.5, 1.5] * 8)  # one block of 32, every value on the E2M1 grid
    assert mx.quantize(x, "e2m1", 32, "e8m0").tolist() == x.tolist()  # all on the grid at scale 1
    assert mx.quantize(x * 4, "e2m1", 32, "e8m0").tolist() == (x * 4).tolist()  # scale 4, exact


def test_smaller_blocks_cut_fp4_error_and_fp8_needs_no_blocks():
    rows = {(r.element, r.block): r.sqnr_db for r in mx.format_errors(data())}
    fp4 = [rows[("e2m1", b)] for b in (None, 1024, 128, 32, 8)]
    assert fp4 == sorted(fp4) and fp4[-1] - fp4[0] > 10  # each smaller block helps 4-bit values
    # E4M3's 17 binades already cover the range: blocks buy nothing (a little is lost because a
    # power-of-two scale can put a block's maximum between 448 and 512, where it saturates)
    assert abs(rows[("e4m3", 8)] - rows[("e4m3", None)]) < 4


def test_nvfp4_beats_mxfp4_and_fp8_beats_both_on_weight_like_data():
    named = {r.format: r for r in mx.format_errors(data()) if r.format in mx.FORMATS}
    assert named["nvfp4"].sqnr_db > named["mxfp4"].sqnr_db  # 16-value blocks, finer E4M3 scale
    assert named["mxfp8"].sqnr_db > named["nvfp4"].sqnr_db + 5
    assert named["fp8-e4m3"].sqnr_db > named["fp8-e5m2"].sqnr_db  # one more mantissa bit
    assert named["nvfp4"].bits_per_value == 4.5 and named["mxfp4"].bits_per_value == 4.25


def test_a_tensor_that_does_not_split_into_blocks_is_refused():
    with pytest.raises(ValueError, match="blocks of 32"):
        mx.quantize(torch.ones(33), "e2m1", 32, "e8m0")
    with pytest.raises(ValueError, match="scale"):
        mx.quantize(torch.ones(32), "e2m1", 32, "int8")
