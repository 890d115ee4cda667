"""Lesson 09 (cloud and cost): the self-check quiz. Answers follow from ``course.calculators.cloud`` and the
dated prices in ``course.facts.data.cloud_instances``."""

from __future__ import annotations

from course.presentation.quiz import MultipleChoice, Numeric

QUESTIONS = (
    Numeric(
        "Computational Resources for ML's break-even for an A100 80GB: $15,000 purchase against ~$4/hour in the cloud, "
        "ignoring every running cost. How many hours?",
        answer=3750,
        unit="hours",
        rel_tol=0.01,
        explain="15,000 / 4 = 3,750 h. Power, hosting and idle time all push the real break-even later.",
        hint="break-even hours = purchase price / hourly rent.",
    ),
    MultipleChoice(
        "A system breaks even after 7 months against on-demand rent when busy 100 % of the time. "
        "With no fixed costs, how long does it take at 25 % utilisation?",
        (
            "About 7 months",
            "About 14 months",
            "About 28 months",
            "About 2 months",
        ),
        answer=2,
        explain="Rent saved per month scales with the hours used: a quarter of the hours, four "
        "times as long (7 / 0.25 = 28 months). Fixed costs make it longer still.",
        why=(
            "That is the answer at full use; idle hours save no rent.",
            "Halving is what 50 % utilisation would give; 25 % quarters the saving.",
            "Right: the monthly saving is proportional to the hours used, so 7 / 0.25 = 28.",
            "Lower use never shortens break-even: the purchase is paid whatever the hours.",
        ),
    ),
    MultipleChoice(
        "Why can a 1-year reservation cost more than on-demand for the same work?",
        (
            "Its hourly rate is higher than the on-demand rate",
            "It is paid for every hour of the term, used or not",
            "It adds a fee for each job started on the hardware",
            "It is billed per second instead of per hour of use",
        ),
        answer=1,
        explain="A reservation trades a lower rate for a commitment: at low utilisation you pay "
        "for idle hours, and on-demand (paid only when used) can come out cheaper.",
        why=(
            "Reserved rates are lower per hour; that is the point of committing.",
            "Right: the commitment covers idle hours too.",
            "No per-job fee is involved; the cost is the hours committed.",
            "Billing granularity is not what makes it dearer; idle committed hours are.",
        ),
    ),
    Numeric(
        "Young's (1974) checkpoint interval for a 5-minute checkpoint and one preemption a day on "
        "average, in hours?",
        answer=2.0,
        unit="hours",
        rel_tol=0.02,
        explain="sqrt(2 x 300 s x 86,400 s) = 7,200 s = 2 h. Daly's higher-order estimate is a "
        "little shorter (about 1.94 h).",
        hint="Young: interval = sqrt(2 x checkpoint time x mean time between failures), in seconds first; then hours.",
    ),
    MultipleChoice(
        "AI Infrastructure lists Azure's ND A100 v4 as '8x A100 (80GB)'. What does the ND96asr_v4 have?",
        [
            "Eight A100 40GB; the 80 GB series is NDm A100 v4",
            "Eight A100 80GB, as the reading says it does",
            "Eight H100 80GB; A100s are in the NC series",
            "Four A100 80GB joined by NVLink bridges",
        ],
        answer=0,
        explain="Microsoft's ND family page: ND A100 v4 has 40 GB A100s; NDm A100 v4 has 80 GB.",
        why=(
            "Right: 8 x 40 GB; the 'm' series doubles the memory.",
            "That is the reading's error: the 80 GB GPUs are in NDm A100 v4.",
            "H100s are in ND H100 v5; ND A100 v4 has A100s.",
            "ND A100 v4 has eight GPUs on NVSwitch, not four on bridges.",
        ),
    ),
)
