#!/bin/sh
# Runs an emulator so that it never outlives the worker that launched it, even when the worker is
# killed with SIGKILL (which Node cannot catch and Linux's parent-death signal is out of Node's reach):
# the worker holds the write end of this script's stdin; when the worker dies the pipe closes, `read`
# sees end-of-file, and the emulator gets SIGTERM, then SIGKILL after GRACE seconds.
# Usage: parent-watch.sh GRACE_SECONDS EMULATOR [ARGS…]   (exit status: the emulator's)
grace=$1
shift
# Background jobs of a non-interactive shell read /dev/null, so the watcher reads the pipe as fd 3.
exec 3<&0
"$@" </dev/null 3<&- &
child=$!
{
  while read -r _line <&3; do :; done
  kill -TERM "$child" 2>/dev/null
  sleep "$grace"
  kill -KILL "$child" 2>/dev/null
} &
watcher=$!
wait "$child"
status=$?
kill "$watcher" 2>/dev/null
exit "$status"
