#!/bin/sh
# First start: initdb with the password (POSTGRES_PASSWORD or the file POSTGRES_PASSWORD_FILE
# names), password logins from the network, the database POSTGRES_DB owned by POSTGRES_USER.
# Every start: the server in the foreground (SIGINT from `stop` is a fast, clean shutdown).
set -eu
user=${POSTGRES_USER:-postgres}
db=${POSTGRES_DB:-$user}
if [ ! -s "$PGDATA/PG_VERSION" ]; then
    if [ -n "${POSTGRES_PASSWORD_FILE:-}" ]; then
        pwfile=$POSTGRES_PASSWORD_FILE
    elif [ -n "${POSTGRES_PASSWORD:-}" ]; then
        pwfile=$(mktemp)
        printf '%s\n' "$POSTGRES_PASSWORD" >"$pwfile"
    else
        echo "postgres-entrypoint: set POSTGRES_PASSWORD or POSTGRES_PASSWORD_FILE" >&2
        exit 1
    fi
    mkdir -p "$PGDATA"
    chmod 0700 "$PGDATA"
    initdb -D "$PGDATA" -U "$user" --pwfile="$pwfile" --auth-local=trust --auth-host=scram-sha-256 \
        --encoding=UTF8 --locale-provider=builtin --builtin-locale=C.UTF-8 >/dev/null
    [ "$pwfile" = "${POSTGRES_PASSWORD_FILE:-}" ] || rm -f "$pwfile"
    printf "listen_addresses = '*'\n" >>"$PGDATA/postgresql.conf"
    printf 'host all all all scram-sha-256\n' >>"$PGDATA/pg_hba.conf"
    if [ "$db" != postgres ]; then
        # The database, made by a server that listens on its socket only while it does.
        pg_ctl -D "$PGDATA" -o "-c listen_addresses=''" -w start >/dev/null
        createdb -U "$user" -O "$user" "$db"
        pg_ctl -D "$PGDATA" -m fast -w stop >/dev/null
    fi
    echo "postgres-entrypoint: initialised $PGDATA (user $user, database $db)"
fi
exec postgres -D "$PGDATA" "$@"
