"""Presentation: the plot style and plots, diagrams drawn from the registry, findings
(sentences computed from a run's records), widgets (parse, call one calculator, render) and
quizzes."""
