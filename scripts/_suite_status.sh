#!/usr/bin/env bash
# _suite_status.sh deno|bun FILE: what a test run's own output says about it, for check:windows (windows.sh),
# where Wine sometimes loses a process's exit status (a deno.exe run that printed "FAILED | 1258 passed |
# 1 failed" ended with 0). Prints the run's summary in one line and exits 0 when it reports no failed test,
# 1 when it reports one, 2 when there is no summary at all (the runtime crashed or was killed before it: a
# time-out); then it says where the run was, the test file last started and the test (Deno prints a test's name
# as it starts it, Bun only its result: there, the last test that ended).
#
# Only the last summary counts: a test may print a nested run's output before it. Colours and CRs are ignored.
#
# _suite_status.sh left FILE TEST...: for a deno.exe run that Deno's own panic ended (its banner "Deno has
# panicked"; under Wine, in mio's named-pipe code, in no test's code), the test files still to run, one a line,
# in TEST's order: the file it ended in and every file it never started. Exits 0 with them; exits 1 and prints
# nothing when the run did not end in a panic or a test failed before it (a fault of ours is never skipped by
# resuming past it).
set -uo pipefail
# the output without colours and CRs
plain() { sed -e 's/\x1b\[[0-9;]*m//g' -e 's/\r$//' "$file"; }

if [ "${1:-}" = left ]; then
  file=${2:-}
  [ -f "$file" ] || { echo "usage: _suite_status.sh left FILE TEST..." >&2; exit 64; }
  shift 2
  # "FILE name" for each file Deno started, "FAILED" for each failed test, "PANIC" where it panicked (the
  # banner goes to stderr, so it may land inside a test's printed output)
  said=$(plain | awk '
    /^Deno has panicked\./ { print "PANIC"; exit }
    /^-+ ((pre|post)-test )?output end -+$/ { out = 0; next }
    /^-+ ((pre|post)-test )?output -+$/ { out = 1; next }
    out { next }
    /^running [0-9]+ tests? from / { sub(/^running [0-9]+ tests? from /, ""); gsub(/\\/, "/"); sub(/^\.\//, ""); print "FILE " $0; next }
    / \.\.\. FAILED( |$)/ { print "FAILED" }')
  grep -qx PANIC <<<"$said" && ! grep -qx FAILED <<<"$said" || exit 1
  # every started file but the last one ended
  ended=$(grep '^FILE ' <<<"$said" | sed -e 's/^FILE //' -e '$d')
  for t in "$@"; do
    n=${t//\\//}
    n=${n#./}
    grep -qxF -- "$n" <<<"$ended" || printf '%s\n' "$t"
  done
  exit 0
fi
kind=${1:-} file=${2:-}
if [ ! -f "$file" ] || { [ "$kind" != deno ] && [ "$kind" != bun ]; }; then
  echo "usage: _suite_status.sh deno|bun FILE" >&2
  exit 64
fi

# where: the file the run last started and its last test, as ", in FILE, TEST", or nothing. (What a test printed,
# which Deno puts between "------- output -------" lines, is skipped: a line of it may read as a test or a file.)
where() {
  plain | awk -v kind="$kind" '
    kind == "deno" && /^-+ ((pre|post)-test )?output end -+$/ { out = 0; next }
    kind == "deno" && /^-+ ((pre|post)-test )?output -+$/ { out = 1; next }
    out { next }
    kind == "deno" && /^running [0-9]+ tests? from / { sub(/^running [0-9]+ tests? from /, ""); f = $0; t = ""; next }
    kind == "deno" && / \.\.\.$/ { t = "during \"" substr($0, 1, length($0) - 4) "\""; next }
    kind == "deno" && / \.\.\. / { t = "" ; next }
    kind == "bun" && /^[^ (].*\.[cm]?[jt]sx?:$/ { f = substr($0, 1, length($0) - 1); t = "before its first result"; next }
    kind == "bun" && /^\((pass|fail|skip|todo)\) / { r = $0; sub(/^\([a-z]+\) /, "", r); sub(/ \[[^]]*\]$/, "", r); t = "after \"" r "\"" }
    END { if (f != "") printf ", in %s%s", f, (t == "" ? "" : ", " t) }'
}

if [ "$kind" = deno ]; then
  # "ok | 1258 passed (12 steps) | 0 failed | 3 ignored (2m15s)" / "FAILED | 1257 passed | 1 failed (2m15s)"
  line=$(plain | grep -E '^(ok|FAILED) \| [0-9]+ passed' | tail -n 1 | sed -E 's/ \([^()]*\)$//')
  [ -n "$line" ] || { echo "no summary line: the run ended before it$(where)"; exit 2; }
  echo "$line"
  case "$line" in "ok | "*"| 0 failed"*) exit 0 ;; *) exit 1 ;; esac
fi

# bun: the block of count lines that ends with "Ran N tests across M files. [1.2s]":
#  1258 pass / 3 skip / 0 fail / 1 error / 2040 expect() calls / Ran 1261 tests across 80 files. [105.00s]
block=$(plain | awk '
  /^ [0-9]+ [a-z]/ { cur = cur (cur == "" ? "" : ", ") substr($0, 2); next }
  /^Ran [0-9]+ tests? across [0-9]+ files?\./ { sub(/\. \[[^]]*\]$/, ""); last = (cur == "" ? "" : cur ", ") $0 }
  { cur = "" }
  END { print last }')
if [ -z "$block" ] || ! grep -Eq '(^|, )[0-9]+ fail(,|$)' <<<"$block"; then
  echo "no summary lines: the run ended before them$(where)"
  exit 2
fi
echo "$block"
grep -Eq '(^|, )[1-9][0-9]* (fail|error)s?(,|$)' <<<"$block" && exit 1
exit 0
