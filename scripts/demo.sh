#!/usr/bin/env bash
# Set up and start the dashboard on the bundled demo workspace.
set -euo pipefail
. "$(dirname "$0")/_venv.sh" app
exec evalvalidity app "$@"
