#!/bin/sh
# Run by the one-shot temporal-schema service (temporalio/admin-tools, the
# same version as the server): puts Temporal's schema into the databases
# postgres-init.sh created, or brings it up to this version. Safe to run
# again: setup-schema only adds the version tables when they are missing
# and update-schema applies only the versions not yet applied. The
# connection comes from SQL_PLUGIN, SQL_HOST, SQL_PORT, SQL_USER and
# SQL_PASSWORD.
set -eu
for db in temporal visibility; do
	name=$db
	[ "$db" = visibility ] && name=temporal_visibility
	temporal-sql-tool --database "$name" setup-schema --version 0.0
	temporal-sql-tool --database "$name" update-schema --schema-name "postgresql/v12/$db"
done
echo "temporal-schema: temporal and temporal_visibility are up to date"
