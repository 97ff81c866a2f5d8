#!/usr/bin/env bash
# Set up and run the whole test suite: lint, type checks, unit tests, doctests and the
# end-to-end browser tests. Extra arguments go to pytest (e.g. `bash scripts/test.sh -k floors`).
set -euo pipefail
. "$(dirname "$0")/_venv.sh" test

# The browser tests drive Debian's Chromium (Playwright's own browser download cannot work
# offline); install it when it is missing and we are allowed to.
if [ ! -x /usr/bin/chromium ] && [ -z "${EVALVALIDITY_SKIP_BROWSER:-}" ]; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        echo "==> installing Debian's chromium for the browser tests"
        apt-get update -qq >/dev/null
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
    else
        echo "!! /usr/bin/chromium is missing and cannot be installed here (not root):"
        echo "!! the browser tests will be skipped. Install the 'chromium' package to run them."
    fi
fi

export STREAMLIT_BROWSER_GATHER_USAGE_STATS=false
echo "==> ruff"
ruff check evalvalidity app tests bench
ruff format --check evalvalidity app tests bench
echo "==> mypy"
mypy
echo "==> pytest"
python -m pytest -n 2 "$@"
