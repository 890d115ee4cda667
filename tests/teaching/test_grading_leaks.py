"""The leak finder the release runs: a hidden value found in the forms a text writes it in, and
not found in a question's number or a data type's width. Every exercise set is searched by
tests/project/test_exercises.py."""

from __future__ import annotations

from teaching.grading.leaks import find_leaks


def test_the_leak_finder_finds_the_leaks_it_was_written_for():
    text = "Thirteen. A GQA model ... 26 GB / 900 GB/s = 28.9 ms ... *S* = 2<sup>18</sup> = 262,144"
    assert find_leaks(text, [13], local=True)
    assert find_leaks(text, [28.888888], local=False)
    assert find_leaks(text, [2.0**18], local=False)
    assert find_leaks("about 17.2 GB", [17_179_869_184], local=False)
    assert not find_leaks("Q13 uses fp32", [13, 32], local=True)
