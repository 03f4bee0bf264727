"""Render resources/icons/evaldesk.svg into build/icons/: PNGs (16-1024 px), evaldesk.ico
(Windows: Qt writes ICO) and an evaldesk.iconset folder (macOS: `iconutil -c icns` turns it into
evaldesk.icns). Run with the project's Python before `make dist` on Windows/macOS:

    .venv/bin/python installers/make_icons.py
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "build" / "icons"


def main() -> int:
    from PySide6.QtCore import Qt
    from PySide6.QtGui import QGuiApplication, QImage, QPainter
    from PySide6.QtSvg import QSvgRenderer

    app = QGuiApplication.instance() or QGuiApplication(sys.argv[:1])  # noqa: F841
    renderer = QSvgRenderer(str(ROOT / "resources" / "icons" / "evaldesk.svg"))
    iconset = OUT / "evaldesk.iconset"
    iconset.mkdir(parents=True, exist_ok=True)
    for size in (16, 32, 48, 64, 128, 256, 512, 1024):
        image = QImage(size, size, QImage.Format.Format_ARGB32)
        image.fill(Qt.GlobalColor.transparent)
        painter = QPainter(image)
        renderer.render(painter)
        painter.end()
        image.save(str(OUT / f"evaldesk-{size}.png"))
        if size <= 512:
            image.save(str(iconset / f"icon_{size}x{size}.png"))
        if size >= 32:
            image.save(str(iconset / f"icon_{size // 2}x{size // 2}@2x.png"))
        if size == 256 and not image.save(str(OUT / "evaldesk.ico")):
            print("note: this Qt cannot write .ico; install Pillow and PyInstaller converts "
                  f"{OUT / 'evaldesk-256.png'} itself")
    print(f"icons in {OUT}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
