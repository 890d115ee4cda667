"""MemTracker's snapshot key (defect 2 of issue 8: every category read 0 B on CUDA)."""

import pytest
import torch

from course.measure.memory import tracker_device


def test_cpu_key_is_the_cpu():
    assert tracker_device("cpu") == torch.device("cpu")


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU (defect 2 of issue 8)")
def test_bare_cuda_gets_the_index_memtracker_uses():
    assert tracker_device("cuda") == torch.device("cuda", torch.cuda.current_device())
    assert tracker_device("cuda:0") == torch.device("cuda", 0)
