#!/usr/bin/env bash
# Server CPU time per request: a steadier figure than req/s on a shared
# machine (it does not count the load generator or other tenants).
# Usage: benches/cpu_per_request.sh PORT SCRIPT.lua [SECONDS]
#   PORT: a running followgraph (or its --bench-static-body-bytes baseline)
#   SCRIPT: a wrk script, e.g. target/followgraph-bench/list_details.lua
# Prints req/s, (utime + stime of the server) / requests in µs with its
# user and system parts, and the server threads' context switches a
# request: voluntary (a worker waiting for work) and involuntary (a worker
# preempted, here mostly by wrk's threads waking on the same two cores).
set -euo pipefail
port=$1 script=$2 secs=${3:-5}
pid=$(ss -ltnp "sport = :$port" | grep -o 'pid=[0-9]*' | head -1 | cut -d= -f2)
[ -n "$pid" ] || { echo "nothing listens on port $port" >&2; exit 1; }
cpu() { awk '{print $14, $15}' "/proc/$pid/stat"; }
switches() {
  cat /proc/"$pid"/task/*/status |
    awk '/^voluntary_ctxt/ {v += $2} /^nonvoluntary_ctxt/ {n += $2} END {print v, n}'
}
read -r u0 s0 < <(cpu)
read -r v0 n0 < <(switches)
out=$(wrk -t2 -c32 -d"${secs}s" -s "$script" "http://127.0.0.1:$port")
read -r u1 s1 < <(cpu)
read -r v1 n1 < <(switches)
requests=$(echo "$out" | grep -o '[0-9]* requests in' | cut -d' ' -f1)
rps=$(echo "$out" | awk '/Requests\/sec/ {print $2}')
awk -v u=$((u1 - u0)) -v s=$((s1 - s0)) -v v=$((v1 - v0)) -v nv=$((n1 - n0)) \
  -v n="$requests" -v hz="$(getconf CLK_TCK)" -v rps="$rps" \
  -v name="$(basename "$script" .lua)" 'BEGIN {
    us = 1e6 / hz / n
    printf "%s: %s req/s, server CPU %.2f us/request (user %.2f, system %.2f), context switches %.3f voluntary, %.3f involuntary a request\n",
      name, rps, (u + s) * us, u * us, s * us, v / n, nv / n
  }'
