#!/usr/bin/env bash
# Server CPU time per request: a steadier figure than req/s on a shared
# machine (it does not count the load generator or other tenants).
# Usage: benches/cpu_per_request.sh PORT SCRIPT.lua [SECONDS]
#   PORT: a running followgraph (or its --bench-static-body-bytes baseline)
#   SCRIPT: a wrk script, e.g. target/followgraph-bench/list_details.lua
# Prints req/s and (utime + stime of the server) / requests, in µs.
set -euo pipefail
port=$1 script=$2 secs=${3:-5}
pid=$(ss -ltnp "sport = :$port" | grep -o 'pid=[0-9]*' | head -1 | cut -d= -f2)
[ -n "$pid" ] || { echo "nothing listens on port $port" >&2; exit 1; }
cpu() { awk '{print $14 + $15}' "/proc/$pid/stat"; }
before=$(cpu)
out=$(wrk -t2 -c32 -d"${secs}s" -s "$script" "http://127.0.0.1:$port")
after=$(cpu)
requests=$(echo "$out" | grep -o '[0-9]* requests in' | cut -d' ' -f1)
rps=$(echo "$out" | awk '/Requests\/sec/ {print $2}')
awk -v b="$before" -v a="$after" -v n="$requests" -v hz="$(getconf CLK_TCK)" \
  -v rps="$rps" -v s="$(basename "$script" .lua)" \
  'BEGIN { printf "%s: %s req/s, server CPU %.2f us/request\n", s, rps, (a - b) * 1e6 / hz / n }'
