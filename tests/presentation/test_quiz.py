"""The self-check quiz: right and wrong answers, its widget, and its text form."""

import pytest

from course.presentation.quiz import MultipleChoice, Numeric, quiz

MC = MultipleChoice(
    "Which is larger?",
    ["1 GB", "1 GiB"],
    answer=1,
    why=("1 GB is 10**9 bytes, less than 2**30.", "1 GiB is 2**30 bytes, more than 10**9."),
)
NUM = Numeric("13B fp16 at 900 GB/s: ms per token?", answer=28.9, unit="ms", explain="26e9/900e9.")


def test_multiple_choice_accepts_the_right_option_by_index_or_text():
    assert MC.check(1).correct and MC.check("1 GiB").correct
    assert not MC.check(0).correct
    assert "Pick one" in MC.check(None).message


def test_numeric_accepts_answers_within_tolerance_and_explains():
    assert Numeric("q", answer=100, explain="e", rel_tol=0.05).check("104").correct
    assert not NUM.check("15").correct  # seed 000's figure
    assert NUM.check("28.9").message.startswith("Correct.")
    for junk in ("fifteen", "", "nan", None):
        assert not NUM.check(junk).correct


def test_bad_question_definitions_raise_value_errors():
    with pytest.raises(ValueError, match="answer must be an index"):
        MultipleChoice("q", ["a", "b"], answer=2, why=("a is wrong", "b is right"))
    with pytest.raises(ValueError, match="at least one question"):
        quiz()


def test_the_widget_shows_feedback_when_check_is_clicked():
    q = quiz(MC, NUM)
    box = q.widget()
    first, second = box.children
    _, radio, button, feedback = first.children
    radio.value = "1 GiB"
    button.click()
    assert "Correct." in feedback.value
    _, text, button2, feedback2 = second.children
    text.value = "15"
    button2.click()
    assert "Not quite." in feedback2.value


def test_without_widgets_the_quiz_reads_as_text_and_html_without_answers():
    q = quiz(MC, NUM)
    bundle = q._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle
    assert "1. Which is larger?" in bundle["text/plain"] and "(b) 1 GiB" in bundle["text/plain"]
    assert "<li>1 GiB</li>" in bundle["text/html"]
    for form in (bundle["text/plain"], bundle["text/html"]):  # neither gives an answer away
        assert "28.9" not in form and "26e9" not in form and "2**30" not in form


def test_multiple_choice_feedback_explains_the_chosen_option():
    from course.presentation.quiz import MultipleChoice

    q = MultipleChoice("2 + 2?", ["3", "4"], 1, "Four.", why=("Off by one.", "Two pairs."))
    assert q.check(0).message == "Not quite. Off by one."
    assert q.check("4").message == "Correct. Two pairs. Four."
    with pytest.raises(ValueError, match="one explanation per option"):
        MultipleChoice("?", ["a", "b"], 0, "", why=("only one",))
    with pytest.raises(ValueError, match="one explanation per option"):
        MultipleChoice("?", ["a", "b"], 0)  # why is required
    with pytest.raises(ValueError, match="its own explanation"):
        MultipleChoice("?", ["a", "b"], 0, why=("same", "same"))
    assert q.check(5).message.startswith("Pick one")


def test_explain_is_added_once_the_right_option_is_chosen():
    q = MultipleChoice("2 + 2?", ["3", "4"], 1, "Addition.", why=("Off by one.", "Two pairs."))
    assert q.check(1).message == "Correct. Two pairs. Addition."
    assert "Addition" not in q.check(0).message


def test_a_lesson_without_a_quiz_module_is_a_clear_error():
    from course.presentation.quizzes import questions

    with pytest.raises(ValueError, match="has no quiz"):
        questions("99")
    with pytest.raises(ValueError, match="two-digit"):
        questions("5")


def test_lesson_05_quiz_answers_come_from_the_calculators():
    """Lesson 05: each MultipleChoice explains every option; the numeric answers are the
    calculators' (7.6 days; sqrt(1e24 / 120) = 91.3 B parameters; 1,000 h x 0.7 kW x 1.2)."""
    from course.presentation.quizzes import questions

    qs = questions("05")
    assert all(len(q.why) == len(q.options) for q in qs if isinstance(q, MultipleChoice))
    numeric = [q.answer for q in qs if not isinstance(q, MultipleChoice)]
    assert numeric[0] == pytest.approx(6 * 7e9 * 2e12 / (1024 * 312e12 * 0.4) / 86400)
    assert numeric[1] == pytest.approx((1e24 / 120) ** 0.5 / 1e9)
    assert numeric[2] == pytest.approx(840)
    assert qs[2].check(qs[2].answer).correct and not qs[2].check(0).correct


def test_on_ipywidgets_7_the_quiz_and_a_calculator_still_display_as_widgets(monkeypatch):
    """Colab ships ipywidgets 7.7.1, whose widgets have no _repr_mimebundle_ (they display through
    _ipython_display_): the bundle still carries the widget view, with the widget's model id."""
    import ipywidgets

    from course.presentation.widgets import will_it_fit

    owner = next(
        (c for c in ipywidgets.VBox.__mro__ if "_repr_mimebundle_" in vars(c)), None
    )  # ipywidgets 8 defines it on Widget; 7.7 nowhere
    if owner is not None:
        monkeypatch.delattr(owner, "_repr_mimebundle_")
    for shown in (quiz(MC, NUM), will_it_fit()):
        bundle = shown._repr_mimebundle_()
        view = bundle["application/vnd.jupyter.widget-view+json"]
        assert view["version_major"] == 2 and len(view["model_id"]) >= 16
        assert bundle["text/plain"] == repr(shown)
