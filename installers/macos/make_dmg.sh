#!/usr/bin/env bash
# dist/EvalDesk.app -> dist/EvalDesk-<version>-macos-<arm64|x86_64>.dmg (a window with the app
# and a link to /Applications). Run on macOS after the app is built; installers/build.py runs it.
# The file name carries the processor type: Apple silicon and Intel Macs each need their own build.
# See installers/macos/README.md for signing.
set -euo pipefail
cd "$(dirname "$0")/../.."
APP=dist/EvalDesk.app
[ -d "$APP" ] || { echo "$APP not found: run 'make dist' on macOS first" >&2; exit 1; }
VERSION=$(sed -n 's/^__version__ = "\(.*\)"/\1/p' core/__init__.py)
STAGE=build/dmg
OUT=dist/EvalDesk-${VERSION}-macos-$(uname -m).dmg
rm -rf "$STAGE" "$OUT" && mkdir -p "$STAGE"
cp -R "$APP" "$STAGE/"
ln -s /Applications "$STAGE/Applications"
# Optional: sign the app before packing (needs a "Developer ID Application" certificate).
if [ -n "${CODESIGN_IDENTITY:-}" ]; then
    codesign --force --deep --options runtime --timestamp \
        --entitlements installers/macos/entitlements.plist \
        --sign "$CODESIGN_IDENTITY" "$STAGE/EvalDesk.app"
fi
hdiutil create -volname "EvalDesk ${VERSION}" -srcfolder "$STAGE" -fs HFS+ \
    -format UDZO -imagekey zlib-level=9 -ov "$OUT"
rm -rf "$STAGE"
if [ -n "${CODESIGN_IDENTITY:-}" ]; then codesign --sign "$CODESIGN_IDENTITY" --timestamp "$OUT"; fi
ls -l "$OUT"
