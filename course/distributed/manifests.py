"""Kubernetes manifests for the course's server (lesson 13) and trainer (lesson 06), checked
offline against the Kubernetes API's OpenAPI schemas.

The manifests are ``jobs/server.yaml`` and ``jobs/trainer.yaml`` beside this module.
:func:`check` validates every document of one with ``kubernetes-validate`` (Will Thames, PyPI
``kubernetes-validate``: the upstream JSON schemas of each Kubernetes release, shipped inside the
package, so no network and no cluster are needed) in strict mode: an unknown or misspelt field
fails, as ``kubectl apply --validate=strict`` would.
"""

from __future__ import annotations

from pathlib import Path

import kubernetes_validate
import yaml

from course.facts import validate

JOBS_DIR = Path(__file__).parent / "jobs"
#: The Kubernetes release the manifests are checked against.
KUBERNETES_VERSION = "1.33"


def names() -> list[str]:
    """The shipped manifests: ``["server", "trainer"]``."""
    return sorted(p.stem for p in JOBS_DIR.glob("*.yaml"))


def text(name: str) -> str:
    """The YAML of manifest ``name``."""
    validate.choice("name", name, names())
    return (JOBS_DIR / f"{name}.yaml").read_text()


def check(manifest: str, version: str = KUBERNETES_VERSION) -> list[str]:
    """Validate every document of ``manifest`` (a YAML text, or a shipped name) in strict mode;
    one ``"<Kind>/<name>: valid"`` line per document. Raises ``ValueError`` naming the document
    and the schema error where one is invalid."""
    source = text(manifest) if manifest in names() else manifest
    lines = []
    for doc in yaml.safe_load_all(source):
        if not doc:
            continue
        label = f"{doc.get('kind', '?')}/{doc.get('metadata', {}).get('name', '?')}"
        try:
            kubernetes_validate.validate(doc, version, strict=True)
        except kubernetes_validate.ValidationError as error:
            raise ValueError(
                f"{label} is not valid Kubernetes {version}: {error.message}"
            ) from None
        lines.append(f"{label}: valid against Kubernetes {version}'s schema")
    return lines
