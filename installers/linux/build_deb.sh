#!/usr/bin/env bash
# Wrap the PyInstaller folder dist/EvalDesk/ in a Debian package: dist/evaldesk_<version>_<arch>.deb
#   /opt/evaldesk/                 the app folder (evaldesk, evaldesk-cli, _internal/)
#   /usr/bin/evaldesk              -> /opt/evaldesk/evaldesk  (GUI, and every CLI command)
#   /usr/share/applications/       menu entry, opens *.evaldesk files
#   /usr/share/mime/packages/      the .evaldesk file type
#   /usr/share/icons/hicolor/      the icon
# Needs dpkg-deb (any Debian/Ubuntu). Build the app first: `make dist` (`make deb` does both).
# DEB_COMPRESSION=xz|zstd|gzip|none (default xz: smallest, installs on every Debian/Ubuntu).
set -euo pipefail
cd "$(dirname "$0")/../.."
APP=dist/EvalDesk
[ -x "$APP/evaldesk" ] || { echo "$APP/evaldesk not found: run 'make dist' first" >&2; exit 1; }
VERSION=$(sed -n 's/^__version__ = "\(.*\)"/\1/p' core/__init__.py)
ARCH=$(dpkg --print-architecture)
STAGE=build/deb/evaldesk
OUT=dist/evaldesk_${VERSION}_${ARCH}.deb
rm -rf "$STAGE" && mkdir -p "$STAGE/DEBIAN" "$STAGE/opt" "$STAGE/usr/bin" \
    "$STAGE/usr/share/applications" "$STAGE/usr/share/mime/packages" \
    "$STAGE/usr/share/icons/hicolor/scalable/apps" "$STAGE/usr/share/icons/hicolor/scalable/mimetypes" \
    "$STAGE/usr/share/doc/evaldesk"
cp -a "$APP" "$STAGE/opt/evaldesk"
ln -s /opt/evaldesk/evaldesk "$STAGE/usr/bin/evaldesk"
install -m 644 installers/linux/evaldesk.desktop "$STAGE/usr/share/applications/evaldesk.desktop"
install -m 644 installers/linux/evaldesk-mime.xml "$STAGE/usr/share/mime/packages/evaldesk.xml"
install -m 644 resources/icons/evaldesk.svg "$STAGE/usr/share/icons/hicolor/scalable/apps/evaldesk.svg"
install -m 644 resources/icons/evaldesk.svg \
    "$STAGE/usr/share/icons/hicolor/scalable/mimetypes/application-x-evaldesk-project.svg"
cat > "$STAGE/usr/share/doc/evaldesk/copyright" <<'TXT'
EvalDesk. The bundled models and libraries keep their own licences: see Help → About in the app.
The Gemma 3 270M model is provided under and subject to the Gemma Terms of Use
(https://ai.google.dev/gemma/terms); a copy is inside /opt/evaldesk/_internal.
TXT
chmod -R u=rwX,go=rX "$STAGE"
SIZE=$(du -sk --exclude=DEBIAN "$STAGE" | cut -f1)
cat > "$STAGE/DEBIAN/control" <<TXT
Package: evaldesk
Version: ${VERSION}
Architecture: ${ARCH}
Maintainer: EvalDesk team <evaldesk@localhost>
Installed-Size: ${SIZE}
Section: education
Priority: optional
Depends: libc6 (>= 2.31), libgl1, libegl1, libfontconfig1, libfreetype6, libdbus-1-3,
 libxkbcommon0, libxkbcommon-x11-0, libx11-xcb1, libxcb-cursor0, libxcb-icccm4, libxcb-image0,
 libxcb-keysyms1, libxcb-randr0, libxcb-render-util0, libxcb-shape0, libxcb-xkb1, libgomp1,
 libglib2.0-0t64 | libglib2.0-0
Recommends: shared-mime-info, desktop-file-utils
Homepage: https://example.invalid/evaldesk
Description: evaluate AI-generated text without writing code
 EvalDesk lets educators, education researchers and clinicians evaluate
 AI-generated text with three published methods (AQER, MAJ-Eval,
 InteractEval). It runs its embedding model and a small language model
 locally, or talks to any LLM provider, and reads and writes Excel.
TXT
cat > "$STAGE/DEBIAN/postinst" <<'TXT'
#!/bin/sh
set -e
if [ "$1" = configure ]; then
    command -v update-mime-database >/dev/null && update-mime-database /usr/share/mime || true
    command -v update-desktop-database >/dev/null && update-desktop-database -q /usr/share/applications || true
    command -v gtk-update-icon-cache >/dev/null && gtk-update-icon-cache -q -t /usr/share/icons/hicolor || true
fi
exit 0
TXT
cat > "$STAGE/DEBIAN/postrm" <<'TXT'
#!/bin/sh
set -e
if [ "$1" = remove ] || [ "$1" = purge ]; then
    command -v update-mime-database >/dev/null && update-mime-database /usr/share/mime || true
    command -v update-desktop-database >/dev/null && update-desktop-database -q /usr/share/applications || true
fi
exit 0
TXT
chmod 755 "$STAGE/DEBIAN/postinst" "$STAGE/DEBIAN/postrm"
COMPRESSION=${DEB_COMPRESSION:-xz}
dpkg-deb --root-owner-group -Z"$COMPRESSION" --build "$STAGE" "$OUT"
rm -rf "$STAGE"
ls -l "$OUT"
