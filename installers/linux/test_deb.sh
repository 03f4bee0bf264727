#!/usr/bin/env bash
# Install the .deb, start the installed app (--version, a headless command, the window under
# Xvfb), then uninstall and check nothing is left. Needs root (or sudo) and dpkg.
#   installers/linux/test_deb.sh [dist/evaldesk_<version>_<arch>.deb]
set -euo pipefail
cd "$(dirname "$0")/../.."
DEB=${1:-$(ls -t dist/evaldesk_*.deb | head -1)}
SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
PY=${PY:-.venv/bin/python}
if dpkg-query -W -f='${Status}' evaldesk 2>/dev/null | grep -q "install ok installed"; then
    echo "evaldesk is already installed on this machine: not touching it" >&2; exit 1
fi
trap '$SUDO dpkg -P evaldesk >/dev/null 2>&1 || true' EXIT
echo "== installing $DEB ($(du -h "$DEB" | cut -f1))"
$SUDO dpkg -i "$DEB"
test -x /usr/bin/evaldesk
grep -q "MimeType=application/x-evaldesk-project" /usr/share/applications/evaldesk.desktop
if [ -f /usr/share/mime/globs2 ]; then
    grep -q "application/x-evaldesk-project:\*.evaldesk" /usr/share/mime/globs2 \
        || { echo "[FAIL] .evaldesk is not a registered file type" >&2; exit 1; }
    echo "[ok] .evaldesk files are EvalDesk projects (shared-mime-info)"
fi
echo "== /usr/bin/evaldesk --version: $(env -i PATH=/usr/bin:/bin HOME=/tmp /usr/bin/evaldesk --version)"
OUTDIR=$(mktemp -d)
if env -i PATH=/usr/bin:/bin HOME="$OUTDIR" /usr/bin/evaldesk aqer resources/samples/aqer_sample.xlsx \
        -o "$OUTDIR/aqer.xlsx" --device cpu >"$OUTDIR/log" 2>&1 && [ -s "$OUTDIR/aqer.xlsx" ]; then
    echo "[ok] installed evaldesk aqer wrote a workbook"
else
    echo "[FAIL] installed evaldesk aqer:"; tail -20 "$OUTDIR/log"; exit 1
fi
$PY installers/smoke_test.py --app /usr/bin/evaldesk --gui-only
echo "== removing"
$SUDO dpkg -r evaldesk
trap - EXIT
if [ -e /opt/evaldesk ] || [ -e /usr/bin/evaldesk ]; then echo "[FAIL] files left after dpkg -r" >&2; exit 1; fi
$SUDO dpkg -P evaldesk >/dev/null  # forget the package entirely (dpkg -r keeps its record)
echo "[ok] installed, started and removed cleanly"
