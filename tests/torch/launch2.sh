#!/bin/sh
# A two-rank launcher as a cluster script might be (torchrun's job, by hand):
# starts ddp.py (or $SCRIPT, a file beside it) twice with RANK/WORLD_SIZE/MASTER_*
# set and waits for both.
PY=${PYTHON:-python3}
here=$(dirname "$0")
export WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=${MASTER_PORT:-29577}
RANK=0 LOCAL_RANK=0 "$PY" "$here/${SCRIPT:-ddp.py}" "$@" &
a=$!
RANK=1 LOCAL_RANK=1 "$PY" "$here/${SCRIPT:-ddp.py}" "$@" &
b=$!
wait $a; ra=$?
wait $b; rb=$?
[ $ra -eq 0 ] && [ $rb -eq 0 ]
