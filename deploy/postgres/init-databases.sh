#!/bin/sh
# Run once by the postgres image, on the first start with an empty data volume
# (/docker-entrypoint-initdb.d). One server, two databases, each owned by its own login role:
# the apps never share a schema, and neither can read the other's tables.
# The passwords come from files (AUTH_DB_PASSWORD_FILE, ORDERS_DB_PASSWORD_FILE: docker-compose
# secrets written by deploy/generate-secrets.mjs) or, without those, from the environment.
set -eu

if [ -n "${AUTH_DB_PASSWORD_FILE:-}" ]; then AUTH_DB_PASSWORD=$(cat "$AUTH_DB_PASSWORD_FILE"); fi
if [ -n "${ORDERS_DB_PASSWORD_FILE:-}" ]; then ORDERS_DB_PASSWORD=$(cat "$ORDERS_DB_PASSWORD_FILE"); fi
: "${AUTH_DB_PASSWORD:?AUTH_DB_PASSWORD or AUTH_DB_PASSWORD_FILE is required}"
: "${ORDERS_DB_PASSWORD:?ORDERS_DB_PASSWORD or ORDERS_DB_PASSWORD_FILE is required}"

# psql variables (:'name') quote the passwords as SQL literals.
psql -v ON_ERROR_STOP=1 --username "${POSTGRES_USER:-postgres}" --dbname "${POSTGRES_DB:-postgres}" \
  -v auth_password="$AUTH_DB_PASSWORD" -v orders_password="$ORDERS_DB_PASSWORD" <<'SQL'
CREATE ROLE auth LOGIN PASSWORD :'auth_password';
CREATE DATABASE auth OWNER auth;
REVOKE ALL ON DATABASE auth FROM PUBLIC;

CREATE ROLE orders LOGIN PASSWORD :'orders_password';
CREATE DATABASE orders OWNER orders;
REVOKE ALL ON DATABASE orders FROM PUBLIC;
SQL
