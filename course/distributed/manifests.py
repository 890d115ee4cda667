"""Kubernetes manifests for the course's server (lesson 13) and trainer (lesson 06), with Kueue's
queue objects and the NVIDIA device plugin's configuration, checked offline against the schemas
of the API and of the CRDs.

The manifests are ``jobs/*.yaml`` beside this module: ``server``, ``trainer``, ``kueue``
(ResourceFlavor, ClusterQueue, LocalQueue) and ``device-plugin`` (its ConfigMap: time-slicing and
the MIG strategy). :func:`check` validates every document of one in strict mode: an unknown or
misspelt field fails, as ``kubectl apply --validate=strict`` would. Kubernetes' own kinds are
checked with ``kubernetes-validate`` (Will Thames, PyPI ``kubernetes-validate``: the upstream
JSON schemas of each Kubernetes release, shipped inside the package, so no network and no cluster
are needed); Kueue's kinds against the ``openAPIV3Schema`` of Kueue's published CRDs, and each
configuration in the device plugin's ConfigMap against its config format, both vendored in
``schemas/`` (its README names the release, commit and file of each) and checked with
``jsonschema``. The images are built by ``container/Containerfile`` in the repository
(:data:`IMAGES`).
"""

from __future__ import annotations

import functools
import json
from pathlib import Path

import jsonschema
import kubernetes_validate
import yaml

from course.facts import validate

JOBS_DIR = Path(__file__).parent / "jobs"
SCHEMAS_DIR = Path(__file__).parent / "schemas"
#: The Kubernetes release the manifests are checked against.
KUBERNETES_VERSION = "1.33"
#: The Kueue release whose CRD schemas are vendored in ``schemas/``, and their API version.
KUEUE_VERSION = "v0.19.2"
KUEUE_API = "kueue.x-k8s.io/v1beta2"
#: The device plugin's ConfigMap, whose every value is one of its configuration files.
DEVICE_PLUGIN_CONFIGMAP = "nvidia-device-plugin-configs"
DEVICE_PLUGIN_VERSION = "v0.20.0"
#: The images the manifests run, by ``container/Containerfile``'s target.
IMAGES = {"trainer": "gpu-course/trainer:2026-11", "server": "gpu-course/server:2026-11"}


def names() -> list[str]:
    """The shipped manifests: ``["device-plugin", "kueue", "server", "trainer"]``."""
    return sorted(p.stem for p in JOBS_DIR.glob("*.yaml"))


def text(name: str) -> str:
    """The YAML of manifest ``name``."""
    validate.choice("name", name, names())
    return (JOBS_DIR / f"{name}.yaml").read_text()


def _strict(schema: dict) -> dict:
    """``schema`` with unknown fields refused wherever it lists the fields of an object."""
    if isinstance(schema, dict):
        schema = {k: _strict(v) for k, v in schema.items()}
        if "properties" in schema and "additionalProperties" not in schema:
            schema["additionalProperties"] = False
    elif isinstance(schema, list):
        schema = [_strict(v) for v in schema]
    return schema


@functools.cache
def schema(name: str) -> dict:
    """The vendored JSON schema ``schemas/<name>.json``, strict (see :func:`_strict`)."""
    return _strict(json.loads((SCHEMAS_DIR / f"{name}.json").read_text()))


def _against(doc: object, name: str, label: str, what: str) -> None:
    error = jsonschema.exceptions.best_match(
        jsonschema.Draft7Validator(schema(name)).iter_errors(doc)
    )
    if error is not None:
        where = ".".join(str(p) for p in error.absolute_path) or "(top)"
        raise ValueError(f"{label} is not valid {what}: {where}: {error.message}")


def _check_document(doc: dict, version: str) -> str:
    label = f"{doc.get('kind', '?')}/{doc.get('metadata', {}).get('name', '?')}"
    if str(doc.get("apiVersion", "")).startswith("kueue.x-k8s.io/"):
        kinds = ("ResourceFlavor", "ClusterQueue", "LocalQueue")
        if doc.get("apiVersion") != KUEUE_API or doc.get("kind") not in kinds:
            raise ValueError(f"{label}: only {KUEUE_API} {', '.join(kinds)} are checked here")
        what = f"Kueue {KUEUE_VERSION}"
        _against(doc, f"kueue-v1beta2-{doc['kind'].lower()}", label, what)
        return f"{label}: valid against {what}'s CRD schema"
    try:
        kubernetes_validate.validate(doc, version, strict=True)
    except kubernetes_validate.ValidationError as error:
        raise ValueError(f"{label} is not valid Kubernetes {version}: {error.message}") from None
    line = f"{label}: valid against Kubernetes {version}'s schema"
    if doc.get("kind") == "ConfigMap" and doc["metadata"].get("name") == DEVICE_PLUGIN_CONFIGMAP:
        what = f"NVIDIA device plugin {DEVICE_PLUGIN_VERSION} config"
        for key, value in doc.get("data", {}).items():
            _against(
                yaml.safe_load(value), "nvidia-device-plugin-config-v1", f"{label} {key}", what
            )
        line += f"; its configurations {', '.join(doc.get('data', {}))} against the {what} format"
    return line


def check(manifest: str, version: str = KUBERNETES_VERSION) -> list[str]:
    """Validate every document of ``manifest`` (a YAML text, or a shipped name) in strict mode;
    one ``"<Kind>/<name>: valid"`` line per document. Raises ``ValueError`` naming the document
    and the schema error where one is invalid."""
    source = text(manifest) if manifest in names() else manifest
    return [_check_document(doc, version) for doc in yaml.safe_load_all(source) if doc]
