#!/usr/bin/env bash
# Export benchmark: a PostgreSQL cluster of its own, the
# synthetic graph of `generate --accounts N` written into the indexer's
# tables, then `followgraph export` of it, timed, with peak RSS.
#
# Usage: benches/export.sh [ACCOUNTS] [WORKDIR]
#   ACCOUNTS  default 1000000
#   WORKDIR   default bench-data/export-ACCOUNTS (git-ignored); the database
#             is generated once and reused by later runs.
# Prints generate time (first run), then the export's summary (rows, skips,
# seconds per phase, peak RSS of the exporter and of the verification load)
# and rows/s. Needs the PostgreSQL server binaries (Debian: postgresql).
set -euo pipefail
cd "$(dirname "$0")/.."
accounts=${1:-1000000}
work=$(realpath -m "${2:-bench-data/export-$accounts}")
bin=target/release/followgraph
cargo build --release --quiet

pgbin=$(pg_config --bindir 2>/dev/null || true)
[ -x "$pgbin/initdb" ] || pgbin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
[ -x "$pgbin/initdb" ] || { echo "no initdb: apt-get install postgresql" >&2; exit 1; }
as_pg() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }

mkdir -p "$work"
[ "$(id -u)" = 0 ] && chown postgres "$work"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
if [ ! -d "$work/data" ]; then
  as_pg "$pgbin/initdb" -D "$work/data" -U postgres --auth=trust >/dev/null
fi
as_pg "$pgbin/pg_ctl" -D "$work/data" -l "$work/postgres.log" -w \
  -o "-p $port -k $work -c listen_addresses=127.0.0.1 -c shared_buffers=1GB -c max_wal_size=8GB" start >/dev/null
trap 'as_pg "$pgbin/pg_ctl" -D "$work/data" -m fast stop >/dev/null' EXIT
url="postgres://postgres@127.0.0.1:$port/postgres"

if [ ! -f "$work/generated" ]; then
  echo "== generate --accounts $accounts into the indexer's tables"
  /usr/bin/time -f "generate: %e s wall, peak RSS %M KiB" \
    "$bin" generate --accounts "$accounts" --seed 1 --indexer-database-url "$url"
  as_pg "$pgbin/psql" -q -h 127.0.0.1 -p "$port" -U postgres -c "VACUUM ANALYZE" postgres
  touch "$work/generated"
fi

echo "== export"
rm -rf "$work/out"
# The database's CPU: its exited backends' time accrues to the postmaster
# (cutime + cstime, fields 16 and 17 of /proc/PID/stat).
postmaster=$(head -1 "$work/data/postmaster.pid")
pg_cpu() { awk -v hz="$(getconf CLK_TCK)" '{print ($16 + $17) / hz}' "/proc/$postmaster/stat"; }
pg_before=$(pg_cpu)
/usr/bin/time -f "export: %e s wall, peak RSS %M KiB (largest of the exporter and its verification child)" \
  "$bin" export --database-url "$url" --out "$work/out" --keep 1 \
  --query "badge_events=tests/indexer/queries/badge_events.sql" \
  --query "badges=tests/indexer/queries/badges.sql"
sleep 1
echo "database CPU during the export: $(awk -v a="$(pg_cpu)" -v b="$pg_before" 'BEGIN {printf "%.1f", a - b}') s (backends' user + system)"
python3 - "$work/out" <<'PY'
import json, sys, pathlib
root = pathlib.Path(sys.argv[1])
j = json.loads((root / (root / "CURRENT").read_text().strip() / "export.json").read_text())
rows = sum(j["rows"].values())
s = j["seconds"]
read = sum(v for k, v in s.items() if k in j["rows"])
print(f"rows {rows}, read+write {read:.1f} s -> {rows / read:,.0f} rows/s; total {s['total']:.1f} s")
print("per table:", ", ".join(f"{t} {j['rows'][t]} rows {s[t]:.1f} s" for t in j["rows"]))
print("peak RSS:", {k: f"{(v or 0) / 2**20:.0f} MiB" for k, v in j["peak_rss_bytes"].items()})
print(f"exporter CPU {j['cpu_seconds']} s (user + system, its threads; not the database's, not the verification child's)")
PY
