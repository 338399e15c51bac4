#!/usr/bin/env bash
# The test suite's CPU (issue 44, item 2): runs `npx vitest run [files...]` in a checkout (this one, or --dir) against a
# private Postgres cluster of its own (initdb'd once in $TMPDIR, started for the run on a Unix socket, stopped after),
# so that the Postgres CPU counted is the suite's alone, and prints:
#   suite_cpu_s      the vitest process tree's user+sys CPU (the forks, the children the tests start, nats-servers,
#                    Chromium and its renderers: every descendant, from a cpuacct cgroup of the run's own where one
#                    can be made, else those their parents waited for) plus the private cluster's (postmaster, its
#                    exited backends, its live background processes)
#   suite_wall_s     the run's wall time, with the load average before and after
# and the test and assertion counts (a setup file of its own, bench/suite-assertions.ts, tallies expect()'s assertion
# calls per test), and the files that spent most CPU in their worker (SUITE_FILE_CPU=<file> keeps every file's).
# Also counted on its cluster: the statements (suite_pg_statements, pg_stat_statements) and BEGINs (suite_pg_begins).
# SUITE_PG_TOP=N SUITE_PG_TOP_FILE=<file>: the cluster's top N statements by total time (pg_stat_statements).
#
#   bench/suite-cpu.sh [--dir <checkout>] [--json <file>] [files...]
#   bench/suite-cpu.sh --ab <commit> [--rounds N] [files...]   A = a detached worktree of <commit>, B = this checkout,
#                                                              alternately (A B A B), then each round and the ratio B/A
# NATS: the tests start private nats-servers (counted, as children); those that use NATS_URL use the one given.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DIR="$HERE"
AB=""
ROUNDS=1
JSON=""
FILES=()
while [ $# -gt 0 ]; do
  case "$1" in
    --dir) DIR="$(cd "$2" && pwd)"; shift 2 ;;
    --ab) AB="$2"; shift 2 ;;
    --rounds) ROUNDS="$2"; shift 2 ;;
    --json) JSON="$2"; shift 2 ;;
    *) FILES+=("$1"); shift ;;
  esac
done

if [ -n "$AB" ]; then
  sha="$(git -C "$HERE" rev-parse "$AB^{commit}" | cut -c1-12)"
  wt="${TMPDIR:-/tmp}/aivis-ab-$sha"
  if [ ! -f "$wt/package.json" ]; then
    git -C "$HERE" worktree add --detach "$wt" "$sha" >/dev/null
    ln -s "$(readlink -f "$HERE/node_modules")" "$wt/node_modules"
  fi
  out="$(mktemp -d)"
  for r in $(seq 1 "$ROUNDS"); do
    echo "# round $r: A ($sha)" >&2
    "$0" --dir "$wt" "${FILES[@]}" | tee "$out/a$r" >&2
    echo "# round $r: B (this checkout)" >&2
    "$0" --dir "$HERE" "${FILES[@]}" | tee "$out/b$r" >&2
  done
  node -e '
    const fs = require("fs"), [dir, rounds] = process.argv.slice(1);
    const get = (f, k) => Number((fs.readFileSync(f, "utf8").match(new RegExp("^" + k + " ([0-9.]+)", "m")) || [])[1]);
    const med = (xs) => { const s = [...xs].sort((a, b) => a - b); return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2; };
    const rs = Array.from({ length: Number(rounds) }, (_, i) => i + 1);
    for (const k of ["suite_cpu_s", "suite_node_cpu_s", "suite_pg_cpu_s", "suite_pg_statements", "suite_pg_begins", "suite_wall_s", "suite_tests", "suite_assertions"]) {
      const a = rs.map((r) => get(`${dir}/a${r}`, k)), b = rs.map((r) => get(`${dir}/b${r}`, k));
      console.log(`${k} A ${a.join(" ")} B ${b.join(" ")} median ratio B/A ${(med(b) / med(a)).toFixed(3)}`);
    }
    const a = rs.map((r) => get(`${dir}/a${r}`, "suite_cpu_s")), b = rs.map((r) => get(`${dir}/b${r}`, "suite_cpu_s"));
    console.log(`suite_cpu_ab_ratio ${(med(b) / med(a)).toFixed(3)} (goal <= 0.6)`);
  ' "$out" "$ROUNDS"
  exit 0
fi

PGBIN="$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)"
PGDIR="${TMPDIR:-/tmp}/aivis-suite-pg"
PORT="${SUITE_PG_PORT:-55432}"
as_pg() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
if [ ! -f "$PGDIR/data/PG_VERSION" ]; then
  mkdir -p "$PGDIR"
  [ "$(id -u)" = 0 ] && chown postgres "$PGDIR"
  as_pg "$PGBIN/initdb" -D "$PGDIR/data" -U postgres --auth=trust >/dev/null
  # the shared server's defaults (max_connections 100, shared_buffers 128MB); statements tallied for the profile
  cat >>"$PGDIR/data/postgresql.conf" <<EOF
listen_addresses = ''
unix_socket_directories = '$PGDIR'
shared_preload_libraries = 'pg_stat_statements'
pg_stat_statements.max = 10000
EOF
fi
# started for the run and stopped after it (one already running, e.g. for profiling, is used and left running)
if ! as_pg "$PGBIN/pg_ctl" -D "$PGDIR/data" status >/dev/null 2>&1; then
  as_pg "$PGBIN/pg_ctl" -D "$PGDIR/data" -o "-p $PORT" -l "$PGDIR/log" -w start >/dev/null
  stop_pg() { as_pg "$PGBIN/pg_ctl" -D "$PGDIR/data" -m fast -w stop >/dev/null 2>&1 || true; }
  trap stop_pg EXIT
fi
PM="$(head -1 "$PGDIR/data/postmaster.pid")"
# what an interrupted run left (its teardown drops them): test databases and templates only ever made here
as_pg "$PGBIN/psql" -h "$PGDIR" -p "$PORT" -U postgres -qAt -c "select format('drop database %I with (force)', datname) from pg_database where datname ~ '^aivis_(t|tpl)_'" |
  while read -r sql; do as_pg "$PGBIN/psql" -h "$PGDIR" -p "$PORT" -U postgres -qAt -c "$sql" >/dev/null; done
# clock ticks of the cluster: the postmaster's own and its reaped children's, plus its live children's
pg_ticks() {
  local t=0 f
  read -r -a f <<<"$(sed 's/^.*) //' "/proc/$PM/stat")"
  t=$((f[11] + f[12] + f[13] + f[14]))
  for c in $(cat "/proc/$PM/task/$PM/children" 2>/dev/null); do
    [ -r "/proc/$c/stat" ] || continue
    read -r -a f <<<"$(sed 's/^.*) //' "/proc/$c/stat" 2>/dev/null)" || continue
    t=$((t + f[11] + f[12]))
  done
  echo "$t"
}
HZ="$(getconf CLK_TCK)"
as_pg "$PGBIN/psql" -h "$PGDIR" -p "$PORT" -U postgres -qAt -c 'set client_min_messages = warning' -c 'create extension if not exists pg_stat_statements' -c 'select pg_stat_statements_reset()' >/dev/null

export DATABASE_URL="postgres://postgres@localhost:$PORT/postgres?host=$PGDIR"
export NATS_URL="${NATS_URL:-nats://127.0.0.1:4222}"
LOG="$(mktemp)"
TIMES="$(mktemp)"
COUNTS="$(mktemp)"
FILECPU="${SUITE_FILE_CPU:-$(mktemp)}"
: >"$FILECPU"
load0="$(cut -d' ' -f1-3 /proc/loadavg)"
p0="$(pg_ticks)"
# the checkout's own config, plus the setup file that counts assertions (the CLI takes no --setupFiles)
mkdir -p "$DIR/test-output"
CONFIG="$DIR/test-output/suite-cpu.config.mts"
cat >"$CONFIG" <<EOF
import { mergeConfig } from 'vitest/config';
import base from '../vitest.config';
export default mergeConfig(base, { root: '$DIR', test: { setupFiles: ['$HERE/bench/suite-assertions.ts'] } });
EOF
# A process its parent did not wait for is not in the waited-for figure: Chromium forks its renderers from a zygote
# that leaves them to init, and they spent more than half of the page tests' CPU. Where a cpuacct cgroup can be made
# (cgroup v1, as root), the run goes in one of its own and the tree's CPU is the cgroup's, which holds every descendant.
CG=""
if [ -w /sys/fs/cgroup/cpuacct ] && mkdir "/sys/fs/cgroup/cpuacct/aivis-suite-$$" 2>/dev/null; then
  CG="/sys/fs/cgroup/cpuacct/aivis-suite-$$"
fi
set +e
(
  [ -z "$CG" ] || echo "$BASHPID" >"$CG/tasks"
  cd "$DIR" && SUITE_ASSERTION_COUNTS="$COUNTS" SUITE_FILE_CPU="$FILECPU" /usr/bin/time -f '%U %S %e' -o "$TIMES" npx vitest run --config "$CONFIG" \
    ${JSON:+--reporter=default --reporter=./test/support/timeout-margin.ts --reporter=json --outputFile.json="$JSON"} \
    "${FILES[@]}" >"$LOG" 2>&1
)
rc=$?
set -e
cgcpu=""
if [ -n "$CG" ]; then
  sleep 0.5
  cgcpu="$(awk '{ printf "%.2f", $1 / 1e9 }' "$CG/cpuacct.usage")"
  for p in $(cat "$CG/tasks"); do kill "$p" 2>/dev/null || true; done
  sleep 0.2
  rmdir "$CG" 2>/dev/null || true
fi
p1="$(pg_ticks)"
load1="$(cut -d' ' -f1-3 /proc/loadavg)"
# what the suite asked of Postgres: statements, and transactions opened with BEGIN (the projections' batches, commands)
read -r stmts begins < <(as_pg "$PGBIN/psql" -h "$PGDIR" -p "$PORT" -U postgres -qAt -F ' ' -c "select coalesce(sum(calls), 0), coalesce(sum(calls) filter (where query ~* '^\s*begin'), 0) from pg_stat_statements") || { stmts=0; begins=0; }
if [ -n "${SUITE_PG_TOP:-}" ]; then
  as_pg "$PGBIN/psql" -h "$PGDIR" -p "$PORT" -U postgres -qAt -F ' | ' -c "select round(total_exec_time)::int as ms, calls, left(regexp_replace(query, '\s+', ' ', 'g'), 140) from pg_stat_statements order by total_exec_time desc limit ${SUITE_PG_TOP}" >"$SUITE_PG_TOP_FILE" || true
fi
sed 's/\x1b\[[0-9;]*m//g' "$LOG" | grep -E '^ *(Test Files|Tests|Duration) ' >&2 || true
[ $rc = 0 ] || { grep -E 'FAIL|✗|×' "$LOG" | sed 's/\x1b\[[0-9;]*m//g' | head -40 >&2 || true; echo "# vitest exited $rc; its output: $LOG" >&2; }
echo "# the files that spent most CPU in their worker (ms cpu, ms wall; all: SUITE_FILE_CPU=<file>)" >&2
# head may close the pipe before sort has written all (SIGPIPE, fatal under pipefail)
sort -rn "$FILECPU" | head -"${SUITE_TOP_FILES:-12}" >&2 || true
echo "# workers' CPU summed over files: $(awk '{ s += $1 } END { printf "%.1f s over %d files", s / 1000, NR }' "$FILECPU")" >&2
# a failed run: time writes "Command exited with non-zero status N" first
read -r u s e < <(tail -1 "$TIMES") || { u=0; s=0; e=0; }
pg="$(echo "scale=2; ($p1 - $p0) / $HZ" | bc)"
waited="$(echo "$u + $s" | bc)"
nodecpu="${cgcpu:-$waited}"
tests="$(sed 's/\x1b\[[0-9;]*m//g' "$LOG" | grep -E '^ *Tests ' | grep -oE '[0-9]+ passed' | grep -oE '[0-9]+' || echo 0)"
asserts="$(awk '{ s += $1 } END { print s + 0 }' "$COUNTS")"
echo "suite_cpu_s $(echo "$nodecpu + $pg" | bc) (vitest tree $nodecpu + Postgres $pg; checkout $(git -C "$DIR" rev-parse --short HEAD))"
echo "suite_node_cpu_s $nodecpu${cgcpu:+ (its cgroup; the waited-for descendants alone: $waited)}"
echo "suite_pg_cpu_s $pg"
echo "suite_pg_statements $stmts"
echo "suite_pg_begins $begins"
echo "suite_wall_s $e (load average $load0 before, $load1 after)"
echo "suite_tests $tests"
echo "suite_assertions $asserts"
echo "suite_exit $rc"
rm -f "$TIMES" "$COUNTS" "$CONFIG"
[ -n "${SUITE_FILE_CPU:-}" ] || rm -f "$FILECPU"
[ $rc = 0 ] && rm -f "$LOG"
exit 0
