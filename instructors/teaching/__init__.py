"""The instructors' package: exercise authoring and sandboxed grading (``grading/``), the student
release, answer keys, the website, the slides and their offline assets, the coverage map and the
quiz key. ``python -m teaching --help`` lists its commands. It builds on the learners' package
(``course``), which never imports it (an import-linter contract)."""
