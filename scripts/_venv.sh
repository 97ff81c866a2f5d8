# Sourced by the other scripts: create (once) and activate the project's virtual environment,
# then install the project with the extras named in $1 ("app" or "test").
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
python="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
    echo "==> creating .venv with $($python --version)"
    "$python" -m venv .venv
fi
# shellcheck disable=SC1091
. .venv/bin/activate
stamp=".venv/.installed-$1"
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
    echo "==> installing evalvalidity[$1] into .venv"
    python -m pip install --quiet --disable-pip-version-check --upgrade pip
    python -m pip install --quiet --disable-pip-version-check -e ".[$1]"
    touch "$stamp"
fi
