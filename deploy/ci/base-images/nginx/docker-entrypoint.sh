#!/bin/sh
# The official nginx image's entrypoint: before starting nginx, run the executable scripts of
# /docker-entrypoint.d/ in order (here the template step), then exec the command.
set -e
if [ "$1" = nginx ] || [ "$1" = nginx-debug ]; then
  for script in $(find /docker-entrypoint.d/ -follow -type f -name '*.sh' -print | sort -V); do
    if [ -x "$script" ]; then
      echo "$0: running $script"
      "$script"
    fi
  done
  echo "$0: configuration complete; ready for start up"
fi
exec "$@"
