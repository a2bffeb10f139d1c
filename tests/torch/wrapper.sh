#!/bin/sh
# A launcher script as a repository might have: it runs a command first and
# then the training script with python3 (a child, not an exec).
echo "wrapper: starting"
"${PYTHON:-python3}" "$(dirname "$0")/nested.py" "$@"
rc=$?
echo "wrapper: done ($rc)"
exit $rc
