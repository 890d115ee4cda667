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
from course.presentation.widgets.cost import how_long_and_how_much
from course.presentation.widgets.decode import decode_speed_calculator
from course.presentation.widgets.dgx_design import dgx_design_calculator
from course.presentation.widgets.fit import will_it_fit
from course.presentation.widgets.layout import layout_chooser
from course.presentation.widgets.mig import mig_explorer
from course.presentation.widgets.occupancy import occupancy_calculator
from course.presentation.widgets.roofline import roofline_explorer
from course.presentation.widgets.techniques import technique_table

__all__ = [
    "ERROR_COLOUR",
    "Calculator",
    "buy_vs_rent_calculator",
    "decode_speed_calculator",
    "dgx_design_calculator",
    "error_html",
    "friendly_message",
    "how_long_and_how_much",
    "layout_chooser",
    "mig_explorer",
    "occupancy_calculator",
    "parse_number",
    "parse_optional",
    "parse_percent",
    "parse_whole",
    "roofline_explorer",
    "technique_table",
    "will_it_fit",
]
