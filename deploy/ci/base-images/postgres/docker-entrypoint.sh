#!/bin/bash
# What the official postgres image's entrypoint does on the first start, for the environment this
# project uses (POSTGRES_PASSWORD or POSTGRES_PASSWORD_FILE, optional POSTGRES_USER / POSTGRES_DB,
# /docker-entrypoint-initdb.d):
#   as root: make PGDATA owned by postgres, then run again as postgres;
#   with an empty PGDATA: initdb with the superuser password, password (scram-sha-256) logins over
#   TCP from anywhere, a socket-only temporary server for the init scripts, then stop it;
#   finally exec the real server, which listens on every address.
set -Eeuo pipefail

if [ "${1:0:1}" = '-' ]; then set -- postgres "$@"; fi
if [ "$1" != 'postgres' ]; then exec "$@"; fi

if [ "$(id -u)" = 0 ]; then
  mkdir -p "$PGDATA"
  chown postgres:postgres "$PGDATA"
  chmod 700 "$PGDATA"
  exec setpriv --reuid=postgres --regid=postgres --init-groups "$BASH_SOURCE" "$@"
fi

# VAR_FILE names a file holding VAR (docker-compose secrets), as the official image's file_env.
file_env() {
  local variable=$1 file_variable="$1_FILE"
  if [ -n "${!variable:-}" ] && [ -n "${!file_variable:-}" ]; then
    echo "both $variable and $file_variable are set: keep one" >&2
    exit 1
  fi
  if [ -n "${!file_variable:-}" ]; then
    export "$variable"="$(<"${!file_variable}")"
    unset "$file_variable"
  fi
}
file_env POSTGRES_PASSWORD

export POSTGRES_USER="${POSTGRES_USER:-postgres}"
export POSTGRES_DB="${POSTGRES_DB:-$POSTGRES_USER}"

if [ ! -s "$PGDATA/PG_VERSION" ]; then
  : "${POSTGRES_PASSWORD:?the database is uninitialized and POSTGRES_PASSWORD is not set}"
  initdb --username="$POSTGRES_USER" --pwfile=<(printf '%s\n' "$POSTGRES_PASSWORD") \
    --auth-local=trust --auth-host=scram-sha-256 -D "$PGDATA" >/dev/null
  printf '\nhost all all all scram-sha-256\n' >>"$PGDATA/pg_hba.conf"
  printf "\nlisten_addresses = '*'\n" >>"$PGDATA/postgresql.conf"

  # Socket only: nothing can connect over TCP (and the health check fails) until init is done.
  pg_ctl -D "$PGDATA" -o "-c listen_addresses=''" -w start >/dev/null
  if [ "$POSTGRES_DB" != postgres ]; then
    psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname postgres \
      -v db="$POSTGRES_DB" <<<'CREATE DATABASE :"db";'
  fi
  for file in /docker-entrypoint-initdb.d/*; do
    case "$file" in
      *.sh)  echo "running $file"; if [ -x "$file" ]; then "$file"; else . "$file"; fi ;;
      *.sql) echo "running $file"; psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname "$POSTGRES_DB" -f "$file" ;;
      *)     [ -e "$file" ] && echo "ignoring $file" ;;
    esac
  done
  pg_ctl -D "$PGDATA" -m fast -w stop >/dev/null
  echo 'PostgreSQL init process complete; ready for start up.'
fi

exec "$@"
