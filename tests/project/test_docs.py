"""README and CONTRIBUTING stay true: lessons linked only when they exist, every module in the
layer table."""

import re
from pathlib import Path

ROOT = Path(__file__).parents[2]
README = (ROOT / "README.md").read_text()
CONTRIBUTING = (ROOT / "CONTRIBUTING.md").read_text()


def test_readme_links_every_lesson_that_exists_and_no_lesson_that_does_not():
    linked = set(re.findall(r"\]\((notebooks/\d\d_[\w-]+\.ipynb)\)", README))
    existing = {p.relative_to(ROOT).as_posix() for p in ROOT.glob("notebooks/[0-9][0-9]_*.ipynb")}
    assert linked == existing
    for row in re.findall(r"^\| (\d\d) \|(.*)\|\s*(\w+)\s*\|$", README, re.MULTILINE):
        number, text, status = row
        has_notebook = any(p.startswith(f"notebooks/{number}_") for p in existing)
        assert status == ("ready" if has_notebook else "coming"), number
        assert ("](notebooks/" in text) == has_notebook, number


def test_readme_names_the_five_readings_by_title_and_links_the_glossary():
    for title in (
        "GPU Infrastructure & Computational Requirements",
        "Computation Requirements",
        "Computation and Hardware Architecture",
        "AI Infrastructure",
        "Computational Resources for Machine Learning: From Silicon to Tensors",
    ):
        assert f"*{title}*" in README
    assert "](notebooks/glossary.md)" in README
    assert not re.search(r"\bseed \d{3}\b|\d{3}_[0-9a-f]{16}\.txt", README)


def test_contributings_layer_table_names_every_layer_and_every_module_in_it():
    table = CONTRIBUTING[
        CONTRIBUTING.index("| folder (top to bottom) |") : CONTRIBUTING.index("Conventions:")
    ]
    layers = [p for p in sorted((ROOT / "course").iterdir()) if (p / "__init__.py").exists()]
    teaching = ROOT / "instructors" / "teaching"
    assert len(layers) >= 6, layers
    for layer in [*layers, teaching, teaching / "grading"]:
        assert f"`{layer.name}/`" in table, f"{layer.name}/ is missing from the table"
        for path in sorted(layer.iterdir()):
            if path.name.startswith(("_", ".")) or not (
                path.suffix == ".py" or (path / "__init__.py").exists()
            ):
                continue
            assert re.search(rf"`{path.stem}(\.py|/)?`", table), (
                f"{layer.name}/{path.name} is missing"
            )
