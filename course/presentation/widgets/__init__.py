"""Calculator widgets, one module per widget, all on
:class:`course.presentation.widgets.base.Calculator`.

| module | widget | lesson |
|---|---|---|
| ``roofline`` | ``roofline_explorer()`` | 02 |
| ``decode`` | ``decode_speed_calculator()`` | 02 |
| ``fit`` | ``will_it_fit()`` | 04 |
| ``cost`` | ``how_long_and_how_much()`` | 05 |
| ``layout`` | ``layout_chooser()`` | 06 |
| ``mig`` | ``mig_explorer()`` | 08 |
| ``dgx_design`` | ``dgx_design_calculator()`` | 08 |
| ``buy_vs_rent`` | ``buy_vs_rent_calculator()`` | 09 |
| ``techniques`` | ``technique_table()`` | 07 |
| ``occupancy`` | ``occupancy_calculator()`` | 11 |
| ``cpu_or_gpu`` | ``cpu_or_gpu()`` | 10 (question 1) |
| ``cores`` | ``tensor_vs_cuda_cores()`` | 10 (question 2) |
| ``gpu_choice`` | ``a100_or_h100()`` | 10 (question 4) |
| ``grace_hopper`` | ``grace_hopper_calculator()`` | 10 (question 7) |
| ``pod_power`` | ``pod_power_calculator()`` | 10 (question 10) |

A new widget is a new module here with a builder that returns a ``Calculator``, exported below.
Tests drive them by setting ``calc.controls[name].value`` and reading ``calc.result`` (the
calculator's result; ``tests/presentation/test_widgets_base.py`` drives every input of every
widget).
"""

from course.presentation.widgets.base import (
    ERROR_COLOUR,
    Calculator,
    error_html,
    friendly_message,
    parse_number,
    parse_optional,
    parse_percent,
    parse_whole,
)
from course.presentation.widgets.buy_vs_rent import buy_vs_rent_calculator
from course.presentation.widgets.cores import tensor_vs_cuda_cores
from course.presentation.widgets.cpu_or_gpu import cpu_or_gpu
from course.presentation.widgets.decode import decode_speed_calculator
from course.presentation.widgets.dgx_design import dgx_design_calculator
from course.presentation.widgets.fit import will_it_fit
from course.presentation.widgets.gpu_choice import a100_or_h100
from course.presentation.widgets.grace_hopper import grace_hopper_calculator
from course.presentation.widgets.layout import layout_chooser
from course.presentation.widgets.mig_explorer import mig_explorer
from course.presentation.widgets.occupancy_calculator import occupancy_calculator
from course.presentation.widgets.pod_power import pod_power_calculator
from course.presentation.widgets.roofline import roofline_explorer
from course.presentation.widgets.run_cost import how_long_and_how_much
from course.presentation.widgets.technique_chooser import technique_table

__all__ = [
    "ERROR_COLOUR",
    "Calculator",
    "a100_or_h100",
    "buy_vs_rent_calculator",
    "cpu_or_gpu",
    "decode_speed_calculator",
    "dgx_design_calculator",
    "error_html",
    "friendly_message",
    "grace_hopper_calculator",
    "how_long_and_how_much",
    "layout_chooser",
    "mig_explorer",
    "occupancy_calculator",
    "parse_number",
    "parse_optional",
    "parse_percent",
    "parse_whole",
    "pod_power_calculator",
    "roofline_explorer",
    "technique_table",
    "tensor_vs_cuda_cores",
    "will_it_fit",
]
