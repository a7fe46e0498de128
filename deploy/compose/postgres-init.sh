#!/bin/sh
# Run once by the postgres image on an empty data directory
# (/docker-entrypoint-initdb.d): one role and database for azolla's store,
# one role owning Temporal's two databases. The passwords arrive as psql
# variables, quoted by psql, never spliced into SQL by the shell.
set -eu
: "${TEMPORAL_DB_PASSWORD:?TEMPORAL_DB_PASSWORD is required}"
: "${STORE_DB_PASSWORD:?STORE_DB_PASSWORD is required}"

psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname postgres \
	-v temporal_pw="$TEMPORAL_DB_PASSWORD" -v azolla_pw="$STORE_DB_PASSWORD" <<'SQL'
CREATE ROLE temporal LOGIN PASSWORD :'temporal_pw';
CREATE ROLE azolla LOGIN PASSWORD :'azolla_pw';
CREATE DATABASE temporal OWNER temporal;
CREATE DATABASE temporal_visibility OWNER temporal;
CREATE DATABASE azolla OWNER azolla;
REVOKE ALL ON DATABASE temporal, temporal_visibility, azolla FROM PUBLIC;
GRANT CONNECT ON DATABASE temporal, temporal_visibility TO temporal;
GRANT CONNECT ON DATABASE azolla TO azolla;
SQL
