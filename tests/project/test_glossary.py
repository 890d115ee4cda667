"""notebooks/glossary.md: alphabetical `### Term` entries, and every link into it resolves.

Lessons link a term at first use as ``[term](glossary.md#anchor)``; the anchor is the heading in
lower case with spaces as hyphens (GitHub's rule), so a renamed or missing entry fails here.
"""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]
GLOSSARY = ROOT / "notebooks" / "glossary.md"
HEADING = re.compile(r"^### (.+?)\s*$", re.MULTILINE)
#: The explicit anchor above each heading (JupyterLab's heading ids keep capitals: "Tensor-Core").
ANCHOR_LINE = re.compile(r'^<a id="([^"]+)"></a>\n\n### (.+?)\s*$', re.MULTILINE)
LINK = re.compile(r"glossary\.md#([A-Za-z0-9_-]+)")


def anchor(heading: str) -> str:
    """GitHub's heading anchor: lower case, punctuation other than hyphens dropped, spaces to
    hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def entries() -> dict[str, str]:
    """Heading -> body text of each glossary entry."""
    text = re.sub(r'^<a id="[^"]+"></a>\n', "", GLOSSARY.read_text(), flags=re.MULTILINE)
    parts = HEADING.split(text)
    return {parts[i]: parts[i + 1].strip() for i in range(1, len(parts), 2)}


def test_anchor_follows_githubs_rule():
    assert anchor("KV cache") == "kv-cache"
    assert anchor("FLOP and FLOP/s") == "flop-and-flops"
    assert anchor("AVX-512") == "avx-512"


def test_every_entry_has_a_lower_case_anchor_that_jupyterlab_can_scroll_to():
    # JupyterLab opens glossary.md#tensor-core in its Markdown preview and scrolls to the element
    # with that id; its own heading ids are "Tensor-Core", so each entry carries its anchor.
    text = GLOSSARY.read_text()
    headings = HEADING.findall(text)
    anchored = ANCHOR_LINE.findall(text)
    assert [h for _, h in anchored] == headings, (
        "put <a id=...></a> and a blank line above each ###"
    )
    assert all(a == anchor(h) for a, h in anchored)


def test_entries_are_alphabetical_unique_and_short():
    terms = list(entries())
    assert terms == sorted(terms, key=str.lower), "keep the glossary in alphabetical order"
    anchors = [anchor(t) for t in terms]
    assert len(set(anchors)) == len(anchors)
    for term, body in entries().items():
        assert body, f"{term} has no definition"
        prose = re.sub(r"\([^)]*\)", "", body)  # links, e.g. "(et al. 2016)", are not sentences
        sentences = re.findall(r"[.!?](?:\s|$)", prose)
        assert 1 <= len(sentences) <= 4, f"{term}: {len(sentences)} sentences (1-3 wanted)"


REQUIRED = [
    "blas",
    "simd",
    "avx2",
    "avx-512",
    "amx",
    "onednn",
    "sm",
    "warp",
    "cuda-core",
    "tensor-core",
    "hbm",
    "l1-cache",
    "l2-cache",
    "shared-memory",
    "bandwidth",
    "arithmetic-intensity",
    "roofline",
    "flop-and-flops",
    "kv-cache",
    "attention-head",
    "gqa",
    "adam-moments",
    "mixed-precision",
    "autocast",
    "loss-scaling",
    "quantisation",
    "sqnr",
    "activation-checkpointing",
    "zero",
    "fsdp",
    "mig",
    "nvlink",
    "nvswitch",
    "infiniband",
    "pue",
    "mfu",
    "gpc",
    "warp-scheduler",
    "registers",
]


@pytest.mark.parametrize("term", REQUIRED)
def test_the_terms_lessons_rely_on_are_defined(term):
    assert term in {anchor(t) for t in entries()}


def linking_files() -> list[Path]:
    return sorted([*ROOT.glob("notebooks/*.ipynb"), *ROOT.glob("*.md"), GLOSSARY])


def test_every_link_into_the_glossary_resolves():
    known = {anchor(t) for t in entries()}
    broken = []
    for path in linking_files():
        text = re.sub(r"`[^`\n]*`", "", path.read_text())  # examples in code spans are not links
        targets = LINK.findall(text)
        if path == GLOSSARY:  # links between entries: [moments](#adam-moments)
            targets += re.findall(r"\]\(#([A-Za-z0-9_-]+)\)", text)
        broken += [f"{path.name}: #{t}" for t in targets if t not in known]
    assert not broken, f"links to missing glossary entries: {broken}"
