"""Slides (``make slides``): the tagging rule, tags that are metadata only and reproducible,
decks built."""

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell
from teaching import offline, site, slides

LESSONS = site.lessons()


def _plot_cell():
    cell = new_code_cell("plot()")
    cell.outputs = [nbformat.v4.new_output("display_data", data={"image/png": "iVBOR"})]
    return cell


@pytest.mark.parametrize(
    ("cell", "expected"),
    [
        (new_markdown_cell("# 04 · Title\n\ntext"), "slide"),
        (new_markdown_cell("## 2. A section"), "slide"),
        (new_markdown_cell("### The sources say: ..."), "subslide"),
        (new_markdown_cell("> **Takeaway:** one line"), "subslide"),
        (new_markdown_cell("Explanation, with a #hashtag"), "notes"),
        (new_markdown_cell("#not a heading"), "notes"),
        (_plot_cell(), "subslide"),
        (new_code_cell("x = 1"), "skip"),
    ],
)
def test_the_rule_gives_each_kind_of_cell_its_slide_type(cell, expected):
    assert slides.slide_type(cell) == expected


def test_tagging_changes_metadata_only_and_is_idempotent():
    path = LESSONS[0]
    before = nbformat.read(path, as_version=4)
    tagged = nbformat.read(path, as_version=4)
    slides.tag(tagged)
    assert slides.tag(tagged) == 0  # a second pass changes nothing
    for old, new in zip(before.cells, tagged.cells, strict=True):
        assert new.source == old.source and new.get("outputs") == old.get("outputs")
        assert {k: v for k, v in new.metadata.items() if k != "slideshow"} == {
            k: v for k, v in old.metadata.items() if k != "slideshow"
        }


@pytest.mark.parametrize("path", LESSONS, ids=lambda p: p.stem)
def test_committed_slide_tags_are_the_rules(path):
    """Tags in the notebooks are the rule's (cells added since the last tagging have none yet:
    decks tag those on the fly, and `make slides TAG=1` commits them)."""
    nb = nbformat.read(path, as_version=4)
    if not slides.is_tagged(nb):
        pytest.skip(f"{path.name} is not tagged yet: decks tag it on the fly (make slides TAG=1)")
    for i, cell in enumerate(nb.cells):
        if "slideshow" in cell.metadata:
            want = slides.slide_type(cell)
            got = cell.metadata["slideshow"].get("slide_type")
            assert got == want, f"{path.name} cell {i}: {got} != {want}; re-tag: make slides TAG=1"


def test_cells_added_after_tagging_are_tagged_in_the_deck_only():
    nb = nbformat.read(LESSONS[-1], as_version=4)
    slides.tag(nb)
    nb.cells.append(new_markdown_cell("## A section added later"))
    assert slides.tag(nb, only_missing=True) == 1
    assert nb.cells[-1].metadata["slideshow"] == {"slide_type": "slide"}


def test_every_lesson_gets_a_deck_with_its_title_sections_and_plots(tmp_path):
    decks = slides.build(tmp_path)
    assert [d.name for d in decks] == [f"{p.stem}.slides.html" for p in LESSONS]
    for path, deck in zip(LESSONS, decks, strict=True):
        html = deck.read_text()
        nb = nbformat.read(path, as_version=4)
        title = nb.cells[0].source.splitlines()[0].lstrip("# ").split("·")[-1].strip()
        assert title.split()[0] in html, (deck.name, title)
        assert html.count("<section") >= 5, deck.name
        assert "reveal" in html.lower() and "widget-state+json" not in html
        has_plot = any(
            "image/png" in o.get("data", {}) for c in nb.cells for o in c.get("outputs", [])
        )
        assert ("data:image/png;base64" in html) == has_plot, deck.name
    # Behind a firewall: every script, style and font is a file of the build, and it is there.
    assert offline.audit(tmp_path) == {"external": [], "missing": []}
