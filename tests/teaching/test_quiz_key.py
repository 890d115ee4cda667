"""The instructors' quiz key is generated from the quiz modules and lives only with the answer
keys."""

from __future__ import annotations

from teaching import answer_keys, quiz_key

from course.presentation import quizzes
from course.presentation.quiz import MultipleChoice, Numeric


def test_the_key_holds_every_question_of_every_quiz_with_its_right_answer():
    page = quiz_key.quiz_key_page()
    lessons = quiz_key.quiz_lessons()
    assert lessons[:3] == ["00", "01", "02"]
    total = 0
    for lesson in lessons:
        section = page.split(f"## Lesson {lesson}\n", 1)[1].split("\n## ", 1)[0]
        qs = quizzes.questions(lesson)
        total += len(qs)
        assert section.count("   - Answer: ") == len(qs), lesson
        for q in qs:
            assert quiz_key._md(q.question) in section
            assert quiz_key.answer_line(q) in section
    assert f"{total} questions." in page


def test_answer_lines_name_the_right_option_and_the_accepted_value():
    mc = MultipleChoice("Which?", ("no", "yes"), 1, "because", why=("wrong", "right"))
    assert quiz_key.answer_line(mc) == "**(b)** yes"
    num = Numeric("Cost of $5 twice?", 10.0, "two times five", unit="$", rel_tol=0.02)
    assert quiz_key.answer_line(num) == r"**10 \$** (accepted within ±2%)"
    page = quiz_key.quiz_key_page([])
    assert page.startswith("# Quiz key") and "0 questions." in page


def test_the_answer_keys_folder_gets_the_quiz_key_in_its_index(tmp_path):
    answer_keys.write_answer_keys(tmp_path, values=False)
    assert (tmp_path / "quiz-key.md").read_text().startswith("# Quiz key")
    assert "\nquiz-key\n" in (tmp_path / "index.md").read_text()
