#!/usr/bin/env bash
# Installs Debian's chromium for the Playwright browser tests, unless it is already there.
set -euo pipefail

if [ -x /usr/bin/chromium ]; then
    exit 0
fi

# sudo drops the environment, so pass DEBIAN_FRONTEND through env.
SUDO=()
if [ "$(id -u)" -ne 0 ]; then
    SUDO=(sudo)
fi
"${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq
"${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium >/dev/null
/usr/bin/chromium --version
