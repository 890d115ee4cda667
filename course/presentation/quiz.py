"""Self-check questions at the end of each lesson: multiple choice or a number, checked on click.

``quiz(MultipleChoice(...), Numeric(...))`` shows one widget per question: pick or type an answer,
press *Check*, read whether it is right and why. Where widgets do not render (a static viewer, a
terminal, nbval), the same object shows the questions and options as text and HTML *without* answers
or explanations (a learner sees those only after answering), and ``Quiz.check(i, answer)`` gives the
same feedback from code. Each lesson's questions live in
``course/presentation/quizzes/lesson_NN.py`` so that the notebook does not show them either. No
calculations here.
"""

from __future__ import annotations

import html
import math
from dataclasses import dataclass

import ipywidgets as widgets

from course.presentation.widgets.base import widget_bundle

CORRECT = "Correct."
WRONG = "Not quite."


@dataclass(frozen=True)
class Feedback:
    correct: bool
    message: str


@dataclass(frozen=True)
class MultipleChoice:
    """A question with one right option (``answer`` is its index in ``options``).

    ``why`` (required) holds one explanation per option, in the order of ``options``: what is right
    about the right one and what is wrong with each wrong one, each wrong option its own; feedback
    shows the chosen option's. ``explain`` is optional: a general remark added to the feedback once
    the right option is chosen.
    """

    question: str
    options: tuple[str, ...] | list[str]
    answer: int
    explain: str = ""
    why: tuple[str, ...] | list[str] = ()

    def __post_init__(self) -> None:
        if len(self.options) < 2:
            raise ValueError(f"options must have at least 2 entries, got {len(self.options)}")
        if not (isinstance(self.answer, int) and 0 <= self.answer < len(self.options)):
            raise ValueError(
                f"answer must be an index 0..{len(self.options) - 1}, got {self.answer!r}"
            )
        if len(self.why) != len(self.options):
            raise ValueError(
                f"why must give one explanation per option ({len(self.options)}), got "
                f"{len(self.why)}"
            )
        if any(not (isinstance(w, str) and w.strip()) for w in self.why):
            raise ValueError("why must give a non-empty explanation for every option")
        if len(set(self.why)) != len(self.why):
            raise ValueError("why must give each option its own explanation, got repeats")

    def check(self, choice: object) -> Feedback:
        """Feedback for an option given by index or by its text."""
        index = self.options.index(choice) if choice in self.options else choice
        if index is None:
            return Feedback(False, "Pick one of the options first.")
        if not (isinstance(index, int) and 0 <= index < len(self.options)):
            return Feedback(False, "Pick one of the options first.")
        right = index == self.answer
        reason = self.why[index]
        if right and self.explain:
            reason = f"{reason} {self.explain}"
        return Feedback(right, f"{CORRECT if right else WRONG} {reason}")

    def answer_text(self) -> str:
        return self.options[self.answer]


@dataclass(frozen=True)
class Numeric:
    """A question whose answer is a number, accepted within ``rel_tol`` (relative) of ``answer``.

    A wrong answer shows ``hint`` (so the learner can try again without being told the answer),
    or, without one, a general nudge; never ``explain``, which states the value. A right answer
    shows ``explain``.
    """

    question: str
    answer: float
    explain: str
    unit: str = ""
    rel_tol: float = 0.05
    hint: str = ""

    def check(self, value: object) -> Feedback:
        """Feedback for a typed answer ('28.9', '2.9e1' and 28.9 all work)."""
        try:
            number = float(str(value).replace(",", "").strip())
        except ValueError:
            return Feedback(False, f"Type a number (in {self.unit or 'the units asked'}).")
        if not math.isfinite(number):
            return Feedback(False, "Type a finite number.")
        right = math.isclose(number, self.answer, rel_tol=self.rel_tol)
        if not right:
            hint = self.hint or f"check the formula and the units ({self.unit or 'as asked'})."
            return Feedback(False, f"{WRONG} Hint: {hint}")
        return Feedback(True, f"{CORRECT} {self.explain}")

    def answer_text(self) -> str:
        return f"{self.answer:,.4g} {self.unit}".strip()


Question = MultipleChoice | Numeric

_HOW_TO_ANSWER = (
    "run the cell in JupyterLab, answer, and press Check to see whether you are right and why"
)


#: Classes that MathJax 2 and 3 (JupyterLab, the Sphinx site) skip: "$" inside is text, not math.
NO_MATH = "tex2jax_ignore mathjax_ignore"


def _text(text: str) -> str:
    """``text`` escaped for HTML; wrapped so that MathJax leaves it alone if it holds a ``$``
    (two dollar amounts in one output would otherwise be typeset as math)."""
    escaped = html.escape(text)
    return f'<span class="{NO_MATH}">{escaped}</span>' if "$" in text else escaped


def _feedback_html(feedback: Feedback) -> str:
    colour = "#007a3d" if feedback.correct else "#b00020"
    return f'<div style="color:{colour}">{_text(feedback.message)}</div>'


def _question_widget(number: int, q: Question) -> widgets.VBox:
    title = widgets.HTML(f"<b>{number}. {_text(q.question)}</b>")
    if isinstance(q, MultipleChoice):
        answer = widgets.RadioButtons(options=list(q.options), value=None, layout={"width": "auto"})
    else:
        placeholder = f"a number, in {q.unit}" if q.unit else "a number"
        answer = widgets.Text(placeholder=placeholder)
    button = widgets.Button(description="Check", button_style="primary")
    feedback = widgets.HTML()

    def on_click(_):
        feedback.value = _feedback_html(q.check(answer.value))

    button.on_click(on_click)
    return widgets.VBox([title, answer, button, feedback], layout={"margin": "0 0 12px 0"})


class Quiz:
    """A list of questions that displays as widgets, or as text/HTML where widgets don't render."""

    def __init__(
        self, *questions: Question, first: int = 1, heading: str = "Check your understanding"
    ):
        """``first``: the number shown on the first question; ``heading``: the line above them."""
        if not questions:
            raise ValueError("a quiz needs at least one question")
        if not (isinstance(first, int) and first >= 1):
            raise ValueError(f"first must be a positive integer, got {first!r}")
        self.questions = questions
        self.first = first
        self.heading = heading

    def check(self, index: int, answer: object) -> Feedback:
        """Feedback for question ``index`` (0-based), the same the widget gives."""
        return self.questions[index].check(answer)

    def widget(self) -> widgets.VBox:
        return widgets.VBox(
            [_question_widget(i, q) for i, q in enumerate(self.questions, self.first)]
        )

    def __repr__(self) -> str:
        lines = [f"{self.heading} ({_HOW_TO_ANSWER}):"]
        for i, q in enumerate(self.questions, self.first):
            lines.append(f"{i}. {q.question}")
            if isinstance(q, MultipleChoice):
                lines += [f"   ({chr(97 + j)}) {o}" for j, o in enumerate(q.options)]
            else:
                lines.append(f"   answer in {q.unit}" if q.unit else "   answer: a number")
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        parts = [
            f"<p><b>{html.escape(self.heading)}</b> ({html.escape(_HOW_TO_ANSWER)})</p>"
            + (f'<ol start="{self.first}">' if self.first != 1 else "<ol>")
        ]
        for q in self.questions:
            if isinstance(q, MultipleChoice):
                items = "".join(f"<li>{_text(o)}</li>" for o in q.options)
                detail = f'<ol type="a">{items}</ol>'
            else:
                detail = f"<p>Answer in {_text(q.unit)}.</p>" if q.unit else ""
            parts.append(f"<li>{_text(q.question)}{detail}</li>")
        return "".join(parts) + "</ol>"

    def _repr_mimebundle_(self, include=None, exclude=None):
        bundle = widget_bundle(self.widget(), include=include, exclude=exclude)
        bundle["text/plain"] = repr(self)
        bundle["text/html"] = self._repr_html_()
        return bundle


def quiz(*questions: Question) -> Quiz:
    """The lesson's closing self-check; end a cell with it to show it."""
    return Quiz(*questions)
