#!/usr/bin/env python3
"""The software bill of materials of an installer: CycloneDX 1.5 JSON, written beside
``dist/SHA256SUMS`` by installers/build.py.

It lists what the installer ships: EvalDesk itself, the Python it runs on, and every package of
the target's lock file (``installers/requirements/<target>.txt``) as installed in the build's
Python: name, version, package URL (``pkg:pypi/...``), licence as the package declares it, and the
SHA-256 of every file of that version that the locked install accepts. A locked package that is
missing from the build's Python, or installed at another version, is an error: the bill would
not describe the installer.

    python installers/sbom.py --target linux-x64 --out dist/evaldesk-0.1.0-linux-x64.cdx.json

Our own small script (no extra dependency): the standard library and ``packaging``.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import uuid
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import lock as locks

ROOT = Path(__file__).resolve().parents[1]
SPEC_VERSION = "1.5"


class SbomError(Exception):
    """The bill cannot be written truthfully; the message says why."""


def _licence(dist: metadata.Distribution) -> list[dict]:
    """The licence a package declares: its SPDX expression, else its licence classifiers, else
    the first line of its License field; [] when it declares none."""
    meta = dist.metadata
    expression = (meta.get("License-Expression") or "").strip()
    if expression:
        return [{"expression": expression}]
    names = [c.split("::")[-1].strip() for c in meta.get_all("Classifier") or []
             if c.startswith("License ::") and c.count("::") >= 2]
    names = [n for n in names if n and n != "OSI Approved"]
    if names:
        return [{"license": {"name": n}} for n in dict.fromkeys(names)]
    text = (meta.get("License") or "").strip().splitlines()
    if text and text[0].strip() and len(text[0]) <= 120:
        return [{"license": {"name": text[0].strip()}}]
    return []


def _installed(name: str) -> metadata.Distribution | None:
    try:
        return metadata.distribution(name)
    except metadata.PackageNotFoundError:
        return None


def bill(target: str, *, lock_file: Path | None = None, version: str | None = None,
         now: datetime | None = None) -> dict:
    """The CycloneDX document for ``target``'s installer (as a dict)."""
    from packaging.markers import Marker
    from packaging.utils import canonicalize_name
    from packaging.version import Version

    path = lock_file or locks.lock_path(target)
    _, pins = locks.read_lock(path)
    app_version = version or _app_version()
    components, problems = [], []
    for pin in sorted(pins, key=lambda p: p.name):
        if pin.marker and not Marker(pin.marker).evaluate():
            continue  # not for this system (the lock is made for one target)
        dist = _installed(pin.name)
        if dist is None:
            problems.append(f"{pin.name} {pin.version} is locked but not installed")
            continue
        if Version(dist.version) != Version(pin.version):
            problems.append(f"{pin.name} is locked at {pin.version} but {dist.version} is "
                            "installed")
            continue
        name = canonicalize_name(pin.name)
        component = {
            "type": "library",
            "bom-ref": f"pkg:pypi/{name}@{pin.version}",
            "name": dist.metadata.get("Name") or pin.name,
            "version": pin.version,
            "purl": f"pkg:pypi/{name}@{pin.version}",
            "hashes": [{"alg": "SHA-256", "content": h} for h in pin.hashes],
            "externalReferences": [{"type": "distribution",
                                    "url": f"https://pypi.org/project/{name}/{pin.version}/"}],
        }
        licences = _licence(dist)
        if licences:
            component["licenses"] = licences
        components.append(component)
    if problems:
        raise SbomError(f"the build's Python does not hold what {path.name} locks: "
                        + "; ".join(problems) + ". Install it with installers/build.py (pip "
                        "install --require-hashes) before writing the bill.")
    python = platform.python_version()
    components.insert(0, {
        "type": "platform", "bom-ref": f"cpython@{python}", "name": "CPython",
        "version": python, "purl": f"pkg:generic/cpython@{python}",
        "licenses": [{"expression": "PSF-2.0"}],
    })
    stamp = (now or datetime.now(UTC)).isoformat(timespec="seconds")
    return {
        "bomFormat": "CycloneDX",
        "specVersion": SPEC_VERSION,
        "serialNumber": f"urn:uuid:{uuid.uuid4()}",
        "version": 1,
        "metadata": {
            "timestamp": stamp,
            "tools": {"components": [{"type": "application", "name": "installers/sbom.py",
                                      "version": app_version}]},
            "component": {"type": "application", "bom-ref": f"evaldesk@{app_version}",
                          "name": "EvalDesk", "version": app_version,
                          "licenses": [{"license": {"name": "Proprietary"}}]},
            "properties": [{"name": "evaldesk:target", "value": target},
                           {"name": "evaldesk:lock", "value": f"installers/requirements/{path.name}"},
                           {"name": "evaldesk:lock-inputs-sha256",
                            "value": locks.read_lock(path)[0]}],
        },
        "components": components,
        "dependencies": [{"ref": f"evaldesk@{app_version}",
                          "dependsOn": [c["bom-ref"] for c in components]}],
    }


def _app_version() -> str:
    import re

    text = (ROOT / "core" / "__init__.py").read_text(encoding="utf-8")
    found = re.search(r'^__version__ = "([^"]+)"', text, re.MULTILINE)
    return found.group(1) if found else "unknown"


def sbom_name(version: str, target: str) -> str:
    return f"evaldesk-{version}-{target}.cdx.json"


def write_sbom(target: str, out: Path, **kwargs) -> Path:
    document = bill(target, **kwargs)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n", encoding="utf-8",
                   newline="\n")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--target", default=None, choices=sorted(locks.TARGETS),
                        help="the installer's system (default: this one)")
    parser.add_argument("--out", type=Path, default=None,
                        help="where to write it (default: dist/evaldesk-<version>-<target>"
                        ".cdx.json)")
    args = parser.parse_args(argv)
    try:
        target = args.target or locks.target_for()
        out = args.out or ROOT / "dist" / sbom_name(_app_version(), target)
        write_sbom(target, out)
    except (SbomError, locks.LockError) as exc:
        print(f"sbom.py: {exc}", file=sys.stderr)
        return 1
    print(f"== {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
