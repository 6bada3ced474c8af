#!/bin/sh
# The official node image's entrypoint behaviour: `docker run IMAGE -e 'code'` or
# `docker run IMAGE script.js` runs node with those arguments; a command that exists runs as is.
set -e
if [ "${1#-}" != "$1" ] || [ -z "$(command -v "$1")" ] || { [ -f "$1" ] && ! [ -x "$1" ]; }; then
  set -- node "$@"
fi
exec "$@"
