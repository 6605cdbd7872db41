#!/usr/bin/env bash
# The hostile set (issue 41): inputs, folders and workloads that try to make the
# harness hang, run out of memory, write outside its folder, lose what it wrote or
# misstate how it ended. Each case runs the built hangbench and checks what
# happened against what must; the table (case, expectation, what happened,
# verdict) is printed, and written as Markdown with its totals when asked.
#
# Usage: tests/hostile/hostile.sh HANGBENCH [--table FILE.md] [--only REGEX]
# Exit: 0 every case passed, 1 a case failed, 2 usage. Needs no GPU; runs as root
# (CI) in about a minute or two on 2 cores. Each case is bounded (a hang fails it).
set -u

HB=${1:?usage: hostile.sh HANGBENCH [--table FILE.md] [--only REGEX]}
shift
TABLE=""
ONLY=""
while [ $# -gt 0 ]; do
  case "$1" in
    --table) TABLE=$2; shift 2 ;;
    --only) ONLY=$2; shift 2 ;;
    *) echo "hostile.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
HB=$(readlink -f "$HB")
[ -x "$HB" ] || { echo "hostile.sh: no hangbench at $HB" >&2; exit 2; }

ROOT=$(mktemp -d /tmp/hb_hostile.XXXXXX)
trap 'rm -rf "$ROOT"' EXIT


# --- helpers ---------------------------------------------------------------

# hb SECONDS ARGS...: runs hangbench bounded (SIGKILL after SECONDS); RC, LOG.
hb() {
  local bound=$1
  shift
  timeout -s KILL "$bound" "$HB" "$@" >"$CASE/log" 2>&1
  RC=$?
  LOG=$(cat "$CASE/log")
}

# hb_peak SECONDS ARGS...: as hb, and PEAK_MIB: the harness's peak resident memory.
hb_peak() {
  local bound=$1
  shift
  timeout -s KILL "$bound" "$HB" "$@" >"$CASE/log" 2>&1 &
  local pid=$! hwm=0 v
  local child
  while kill -0 "$pid" 2>/dev/null; do
    child=$(cat /proc/$pid/task/$pid/children 2>/dev/null | awk '{print $1}')
    if [ -n "$child" ]; then
      v=$(awk '/^VmHWM:/ {print $2}' /proc/$child/status 2>/dev/null)
      [ -n "$v" ] && [ "$v" -gt "$hwm" ] && hwm=$v
    fi
    sleep 0.05
  done
  wait "$pid"
  RC=$?
  LOG=$(cat "$CASE/log")
  PEAK_MIB=$((hwm / 1024))
}

has() { grep -qF -- "$1" <<<"$LOG"; }

# A matrix running one shell script per trial: matrix NAME SCRIPT_TEXT [EXTRA_TOML];
# EXTRA_TOML's keys replace the defaults (one trial, 20 s, no stacks).
matrix() {
  local name=$1 text=$2 extra=${3:-}
  printf '%s\n' "$text" >"$CASE/$name.sh"
  {
    printf 'name = "%s"\ncommand = ["sh", "%s"]\n' "$name" "$CASE/$name.sh"
    local key
    for key in "trials = 1" "timeout = 20.0" "grace = 0.3" "stacks = false"; do
      grep -q "^${key%% *} =" <<<"$extra" || echo "$key"
    done
    printf '%s\n' "$extra"
  } >"$CASE/$name.toml"
  echo "$CASE/$name.toml"
}

# A matrix file with the given text: toml NAME TEXT.
toml() {
  printf '%s\n' "$2" >"$CASE/$1.toml"
  echo "$CASE/$1.toml"
}

# What became of the file a planted link pointed to: "untouched" or "OVERWRITTEN".
victim_state() { [ "$(cat "$CASE/victim" 2>/dev/null)" = precious ] && echo untouched || echo OVERWRITTEN; }
sum_of() { if [ -e "$1" ]; then sha256sum <"$1" | cut -c1-16; else echo absent; fi; }
store_status() { sqlite3 "$1" "SELECT status FROM runs ORDER BY started_at DESC LIMIT 1" 2>/dev/null; }

# verdict NAME EXPECTATION HAPPENED CONDITION: records one row (in $ROOT/rows).
verdict() {
  local name=$1 expect=$2 happened=$3 ok=$4
  local v=PASS
  if [ "$ok" != 1 ]; then
    v=FAIL
    echo "---- $name failed; the end of its log:" >&2
    tail -n 20 "$CASE/log" >&2 2>/dev/null
  fi
  happened=${happened//$ROOT\//}  # no path of this machine in the table
  happened=${happened//|/\\|}
  happened=${happened//$'\n'/ }
  printf '| %s | %s | %s | %s |\n' "$name" "$expect" "$happened" "$v" >>"$ROOT/rows"
  printf '%-4s %s (%s)\n' "$v" "$name" "$happened"
}

# t COND: 1 when the shell condition holds, else 0.
t() { if eval "$1"; then echo 1; else echo 0; fi; }

CASES=()
def() { CASES+=("$1"); }

# --- 1. the phase file -------------------------------------------------------

def phase_fifo
phase_fifo() {
  local m
  m=$(matrix fifo 'rm -f "$HANGBENCH_PHASE_FILE"; mkfifo "$HANGBENCH_PHASE_FILE"')
  hb 60 run --matrix "$m" --out "$CASE/out"
  verdict "phase file replaced by a FIFO" "exit 0, a warning naming it, no wait for a writer" \
    "exit $RC$(has 'not a regular file' && echo ', warned')" "$(t '[ $RC = 0 ] && has "not a regular file"')"
}

def phase_fifo_live
phase_fifo_live() {
  local m
  m=$(matrix fifol 'rm -f "$HANGBENCH_PHASE_FILE"; mkfifo "$HANGBENCH_PHASE_FILE"; sleep 1.5')
  hb 60 run --matrix "$m" --out "$CASE/out"
  verdict "phase file a FIFO while the workload lives" "exit 0: the follower never waits on it" "exit $RC" \
    "$(t '[ $RC = 0 ]')"
}

def phase_fifo_resume
phase_fifo_resume() {
  local m
  m=$(matrix fifor 'rm -f "$HANGBENCH_PHASE_FILE"; mkfifo "$HANGBENCH_PHASE_FILE"; sleep 30' 'trials = 2
timeout = 60.0')
  timeout -s KILL 60 "$HB" run --matrix "$m" --out "$CASE/out" >"$CASE/first.log" 2>&1 &
  local pid=$!
  for _ in $(seq 100); do
    [ -n "$(find "$CASE/out/trials" -type p 2>/dev/null)" ] && break
    sleep 0.1
  done
  kill -INT "$pid"
  wait "$pid"
  local first=$?
  sed -i 's/sleep 30/true/' "$CASE/fifor.sh"
  hb 60 run --resume --out "$CASE/out"
  verdict "FIFO phase file, interrupted, then --resume" "exit 3 then the resume ends, exit 0" \
    "first exit $first, resume exit $RC" "$(t '[ $first = 3 ] && [ $RC = 0 ]')"
}

def phase_dev_zero
phase_dev_zero() {
  local m
  m=$(matrix zero 'rm -f "$HANGBENCH_PHASE_FILE"; ln -s /dev/zero "$HANGBENCH_PHASE_FILE"')
  hb_peak 60 run --matrix "$m" --out "$CASE/out"
  verdict "phase file a link to /dev/zero" "exit 0 within the bound, warned (a link), under 200 MiB" \
    "exit $RC, peak ${PEAK_MIB} MiB" "$(t '[ $RC = 0 ] && [ $PEAK_MIB -lt 200 ] && has "symbolic link"')"
}

def phase_link_outside
phase_link_outside() {
  local m
  echo '{"phase":"planted","t":1}' >"$CASE/outside.jsonl"
  m=$(matrix linko "rm -f \"\$HANGBENCH_PHASE_FILE\"; ln -s '$CASE/outside.jsonl' \"\$HANGBENCH_PHASE_FILE\"")
  hb 60 run --matrix "$m" --out "$CASE/out" --format json
  local read_it=0
  grep -q planted "$CASE/out/report.json" 2>/dev/null && read_it=1
  verdict "phase file a link to a file elsewhere" "not read (warned), exit 0" "exit $RC, outside lines read: $read_it" \
    "$(t '[ $RC = 0 ] && [ $read_it = 0 ] && has "symbolic link"')"
}

def phase_huge_line
phase_huge_line() {
  local m
  m=$(matrix huge 'head -c 268435456 /dev/zero | tr "\0" x >> "$HANGBENCH_PHASE_FILE"')
  hb_peak 120 run --matrix "$m" --out "$CASE/out"
  verdict "a 256 MiB phase line without a newline" "exit 0, warned, harness measured under 200 MiB" \
    "exit $RC, peak ${PEAK_MIB} MiB" "$(t '[ $RC = 0 ] && [ $PEAK_MIB -gt 0 ] && [ $PEAK_MIB -lt 200 ] && has "longer than 64 KiB"')"
}

def phase_huge_then_phase
phase_huge_then_phase() {
  local m
  m=$(matrix hugep '{ head -c 10000000 /dev/zero | tr "\0" x; echo; echo "{\"phase\":\"after\",\"t\":$(date +%s)}"; } >> "$HANGBENCH_PHASE_FILE"' 'expect = "no-hang"')
  hb_peak 120 run --matrix "$m" --out "$CASE/out" --format json
  local kept=0
  grep -q '"after"' "$CASE/out/report.json" 2>/dev/null && kept=1
  verdict "a 10 MB line, then a phase line" "the long line skipped, the phase after it kept" \
    "exit $RC, phase kept: $kept, peak ${PEAK_MIB} MiB" "$(t '[ $RC = 0 ] && [ $kept = 1 ] && [ $PEAK_MIB -lt 200 ]')"
}

def phase_dir
phase_dir() {
  local m
  m=$(matrix pdir 'rm -f "$HANGBENCH_PHASE_FILE"; mkdir "$HANGBENCH_PHASE_FILE"')
  hb 60 run --matrix "$m" --out "$CASE/out"
  verdict "phase file a folder" "exit 0, warned" "exit $RC" "$(t '[ $RC = 0 ] && has "not a regular file"')"
}

def phase_big_file
phase_big_file() {
  local m
  m=$(matrix bigf 'yes "{\"metric\":\"m\",\"value\":1}" | head -c 20000000 >> "$HANGBENCH_PHASE_FILE"')
  hb_peak 120 run --matrix "$m" --out "$CASE/out"
  verdict "a 20 MB phase file of metric lines" "read up to its 16 MiB bound, warned, exit 0" \
    "exit $RC, peak ${PEAK_MIB} MiB" "$(t '[ $RC = 0 ] && has "past the file'"'"'s bound"')"
}

def phase_deep
phase_deep() {
  local m
  m=$(matrix deep 'python3 -c "print(\"{\\\"metric\\\":\\\"d\\\",\\\"value\\\":\" + \"[\"*100000 + \"]\"*100000 + \"}\")" >> "$HANGBENCH_PHASE_FILE"')
  hb 60 run --matrix "$m" --out "$CASE/out"
  verdict "a phase line nested 100,000 deep (round two)" "exit 0, warned, no crash" "exit $RC" \
    "$(t '[ $RC = 0 ] && has "phase line ignored unparsed"')"
}

def phase_garbage
phase_garbage() {
  local m
  m=$(matrix garb 'head -c 100000 /dev/urandom >> "$HANGBENCH_PHASE_FILE"')
  hb 60 run --matrix "$m" --out "$CASE/out"
  verdict "binary garbage on the phase channel (round two)" "exit 0, at most one warning of each kind" "exit $RC" \
    "$(t '[ $RC = 0 ] && [ $(grep -c "malformed phase line" "$CASE/log") -le 1 ]')"
}

def phase_skew
phase_skew() {
  local m
  m=$(matrix skew 'echo "{\"phase\":\"teardown_begin\",\"t\":0}" >> "$HANGBENCH_PHASE_FILE"; sleep 0.5' 'expect = "no-hang"
[phase_timeouts]
teardown_begin = 5.0')
  hb 60 run --matrix "$m" --out "$CASE/out"
  verdict "a phase time of 0 (skewed clock, round two)" "not a hang: exit 0, warned" "exit $RC" \
    "$(t '[ $RC = 0 ] && has "a skewed clock?"')"
}

# --- 2. links planted in --out ------------------------------------------------

def out_lock_link
out_lock_link() {
  mkdir -p "$CASE/out"
  echo precious >"$CASE/victim"
  ln -s "$CASE/victim" "$CASE/out/hangbench.lock"
  local m
  m=$(matrix ok 'true')
  hb 60 run --matrix "$m" --out "$CASE/out"
  verdict "hangbench.lock a link to a file elsewhere" "refused (exit 3), the file untouched" \
    "exit $RC, outside file $(victim_state)" "$(t '[ $RC = 3 ] && [ "$(cat "$CASE/victim")" = precious ]')"
}

# A run whose --out holds NAME as a link to a file outside: the file stays as it was.
out_link_case() {
  local name=$1
  mkdir -p "$CASE/out"
  echo precious >"$CASE/victim"
  ln -s "$CASE/victim" "$CASE/out/$name"
  local m
  m=$(matrix ok 'true')
  hb 60 run --matrix "$m" --out "$CASE/out"
  verdict "$name a link to a file elsewhere" "the run writes its own file, the outside file untouched" \
    "exit $RC, outside file $(victim_state)" "$(t '[ $RC = 0 ] && [ "$(cat "$CASE/victim")" = precious ]')"
}
def out_html_tmp
out_html_tmp() { out_link_case report.html.tmp; }
def out_json_tmp
out_json_tmp() { out_link_case report.json.tmp; }
def out_md_tmp
out_md_tmp() { out_link_case report.md.tmp; }
def out_html
out_html() { out_link_case report.html; }

def evidence_link
evidence_link() {
  mkdir -p "$CASE/outside"
  local m
  m=$(matrix evl "ln -s '$CASE/outside' \"\$HANGBENCH_TRIAL_DIR/evidence\"; sleep 60" 'timeout = 1.5
expect = "hang"')
  hb 90 run --matrix "$m" --out "$CASE/out"
  local outside inside
  outside=$(find "$CASE/outside" -type f | wc -l)
  inside=$(find "$CASE/out/trials" -path '*/evidence/*' -type f | wc -l)
  verdict "a workload plants evidence as a link to a folder elsewhere" \
    "its evidence in its own trial folder, nothing outside" "exit $RC, files outside: $outside, inside: $inside" \
    "$(t '[ $RC = 0 ] && [ $outside = 0 ] && [ $inside -gt 0 ]')"
}

def evidence_inner_link
evidence_inner_link() {
  echo precious >"$CASE/victim"
  local m
  m=$(matrix evi "mkdir \"\$HANGBENCH_TRIAL_DIR/evidence\"; ln -s '$CASE/victim' \"\$HANGBENCH_TRIAL_DIR/evidence/evidence.json\"; sleep 60" 'timeout = 1.5
expect = "hang"')
  hb 90 run --matrix "$m" --out "$CASE/out"
  verdict "a workload plants evidence/evidence.json as a link" "the outside file untouched" \
    "exit $RC, outside file $(victim_state)" "$(t '[ $RC = 0 ] && [ "$(cat "$CASE/victim")" = precious ]')"
}

def trial_dir_link
trial_dir_link() {
  mkdir -p "$CASE/outside"
  local m
  m=$(matrix tdl "d=\"\$HANGBENCH_TRIAL_DIR\"; mv \"\$d\" \"\$d.moved\"; ln -s '$CASE/outside' \"\$d\"; sleep 60" 'timeout = 1.5
expect = "hang"')
  hb 90 run --matrix "$m" --out "$CASE/out"
  local outside
  outside=$(find "$CASE/outside" -type f | wc -l)
  verdict "a workload replaces its trial folder with a link" "no evidence written outside --out" \
    "exit $RC, files outside: $outside" "$(t '[ $outside = 0 ]')"
}

# --- 3. merge and planted links ----------------------------------------------

# A shard of one hung trial whose workload ran SCRIPT in its trial folder first.
shard_with() {
  local m
  m=$(matrix shard "$1; sleep 60" 'timeout = 1.5
expect = "hang"')
  timeout -s KILL 90 "$HB" run --matrix "$m" --out "$CASE/shard" --shard 0/1 >"$CASE/shard.log" 2>&1
}

def merge_link_out
merge_link_out() {
  mkdir -p "$CASE/outside"
  echo secret >"$CASE/outside/secret.txt"
  shard_with "ln -s '$CASE/outside' \"\$HANGBENCH_TRIAL_DIR/planted\""
  hb 60 merge "$CASE/shard/hangbench.sqlite" --out "$CASE/merged"
  local copied links
  copied=$(find "$CASE/merged" -name secret.txt | wc -l)
  links=$(find "$CASE/merged" -type l | wc -l)
  verdict "merge: a trial folder holds a link to a folder elsewhere" "exit 0, nothing of it copied, no link" \
    "exit $RC, copies: $copied, links: $links" "$(t '[ $RC = 0 ] && [ $copied = 0 ] && [ $links = 0 ]')"
}

def merge_link_loop
merge_link_loop() {
  shard_with 'ln -s .. "$HANGBENCH_TRIAL_DIR/loop"; ln -s loop2 "$HANGBENCH_TRIAL_DIR/loop1"; ln -s loop1 "$HANGBENCH_TRIAL_DIR/loop2"'
  hb 60 merge "$CASE/shard/hangbench.sqlite" --out "$CASE/merged" --format json,html
  local status reports=0
  status=$(store_status "$CASE/merged/hangbench.sqlite")
  [ -s "$CASE/merged/report.json" ] && reports=1
  verdict "merge: link loops in a trial folder" "exit 0, store complete with its reports" \
    "exit $RC, status ${status:-none}, reports: $reports" "$(t '[ $RC = 0 ] && [ "$status" = complete ] && [ $reports = 1 ]')"
}

def merge_link_file
merge_link_file() {
  echo secret >"$CASE/secret.txt"
  shard_with "ln -s '$CASE/secret.txt' \"\$HANGBENCH_TRIAL_DIR/planted.txt\""
  hb 60 merge "$CASE/shard/hangbench.sqlite" --out "$CASE/merged"
  local copied
  copied=$(grep -rl secret "$CASE/merged/trials" 2>/dev/null | wc -l)
  verdict "merge: a link to a file elsewhere" "not copied, exit 0" "exit $RC, copies: $copied" \
    "$(t '[ $RC = 0 ] && [ $copied = 0 ]')"
}

def merge_fifo
merge_fifo() {
  shard_with 'mkfifo "$HANGBENCH_TRIAL_DIR/pipe"'
  hb 60 merge "$CASE/shard/hangbench.sqlite" --out "$CASE/merged"
  verdict "merge: a FIFO in a trial folder" "skipped, exit 0 (no wait for a writer)" "exit $RC" "$(t '[ $RC = 0 ]')"
}

def merge_escape
merge_escape() {
  mkdir -p "$CASE/shard"
  sqlite3 "$CASE/shard/hangbench.sqlite" "CREATE TABLE schema_version(version INTEGER); INSERT INTO schema_version VALUES(1);" 2>/dev/null
  echo hello >"$CASE/not.sqlite"
  hb 30 merge "$CASE/not.sqlite" --out "$CASE/merged"
  verdict "merge: a file that is not a store (round two)" "exit 2, nothing written" "exit $RC" \
    "$(t '[ $RC = 2 ] && [ ! -e "$CASE/merged" ]')"
}

# --- 6. --matrix must be a regular file of bounded size -----------------------

matrix_input_case() {
  local what=$1 path=$2
  shift 2
  hb 20 run --matrix "$path" --out "$CASE/out" "$@"
  verdict "--matrix $what${*:+ ($*)}" "exit 2 at once, naming it" "exit $RC" \
    "$(t '[ $RC = 2 ] && has "'"$path"'"')"
}
def matrix_zero
matrix_zero() { matrix_input_case /dev/zero /dev/zero; }
def matrix_urandom
matrix_urandom() { matrix_input_case /dev/urandom /dev/urandom; }
def matrix_null
matrix_null() { matrix_input_case /dev/null /dev/null; }
def matrix_fifo
matrix_fifo() {
  mkfifo "$CASE/m.fifo"
  matrix_input_case "a FIFO" "$CASE/m.fifo"
}
def matrix_fifo_dry
matrix_fifo_dry() {
  mkfifo "$CASE/m.fifo"
  matrix_input_case "a FIFO" "$CASE/m.fifo" --dry-run
}
def matrix_big
matrix_big() {
  { echo 'name = "big"'; echo 'command = "true"'; yes '# padding padding padding padding' | head -c 6000000; } >"$CASE/big.toml"
  matrix_input_case "of 6 MB" "$CASE/big.toml"
}
def matrix_folder
matrix_folder() { matrix_input_case "a folder" "$CASE"; }
def matrix_missing
matrix_missing() { matrix_input_case "missing" "$CASE/none.toml"; }
def matrix_resume_zero
matrix_resume_zero() {
  local m
  m=$(matrix ok 'true')
  timeout -s KILL 60 "$HB" run --matrix "$m" --out "$CASE/out" >/dev/null 2>&1
  hb 20 run --resume --out "$CASE/out" --matrix /dev/zero
  verdict "run --resume --matrix /dev/zero" "exit 2 at once" "exit $RC" "$(t '[ $RC = 2 ]')"
}

# --- 8. what a matrix may hold ---------------------------------------------------

# matrix_text_case NAME TOML NEEDLE: exit 2, naming file:line and NEEDLE.
matrix_text_case() {
  local name=$1 text=$2 needle=$3
  local m
  m=$(toml bad "$text")
  hb 20 run --matrix "$m" --out "$CASE/out"
  local line
  line=$(grep -n -m1 -F -- "${4:-zzz_no_marker}" "$m" | cut -d: -f1)
  verdict "$name" "exit 2 naming file:line${needle:+ and '$needle'}" "exit $RC: $(head -c 150 <<<"$LOG")" \
    "$(t '[ $RC = 2 ] && has "'"$m"':" && has "'"$needle"'" && [ ! -e "$CASE/out/hangbench.sqlite" ]')"
}
def m_nul_axis
m_nul_axis() { matrix_text_case "NUL in an axis value" $'name = "n"\ncommand = "echo {x}"\n[axes]\nx = ["a\\u0000b"]' "NUL"; }
def m_nul_command
m_nul_command() { matrix_text_case "NUL in the command" $'name = "n"\ncommand = ["echo", "a\\u0000b"]' "NUL"; }
def m_nul_var
m_nul_var() { matrix_text_case "NUL in a [vars] value" $'name = "n"\ncommand = "echo {v}"\n[vars]\nv = "a\\u0000b"' "NUL"; }
def m_env_eq
m_env_eq() { matrix_text_case "[env] name with '='" $'name = "n"\ncommand = "true"\n[env]\n"A=B" = "x"' "holds '='"; }
def m_env_empty
m_env_empty() { matrix_text_case "[env] empty name" $'name = "n"\ncommand = "true"\n[env]\n"" = "x"' "empty variable name"; }
def m_env_nul_value
m_env_nul_value() { matrix_text_case "[env] NUL in a value" $'name = "n"\ncommand = "true"\n[env]\nA = "x\\u0000y"' "NUL"; }
def m_env_nul_name
m_env_nul_name() { matrix_text_case "[env] NUL in a name" $'name = "n"\ncommand = "true"\n[env]\n"A\\u0000B" = "x"' "NUL"; }
def m_cell_env_eq
m_cell_env_eq() {
  matrix_text_case "[[cell]] env name with '='" $'name = "n"\ncommand = "true"\n[axes]\nx = ["a"]\n[[cell]]\nmatch = { x = "a" }\nenv = { "A=B" = "x" }' "holds '='"
}
def m_unknown_key
m_unknown_key() { matrix_text_case "an unknown key (earlier rounds)" $'name = "n"\ncommand = "true"\ntrails = 3' "unknown key"; }
def m_timeout_inf
m_timeout_inf() { matrix_text_case "timeout = inf (round two)" $'name = "n"\ncommand = "true"\ntimeout = inf' "timeout"; }
def m_grace_inf
m_grace_inf() { matrix_text_case "grace = inf (round two)" $'name = "n"\ncommand = "true"\ngrace = inf' "grace"; }
def m_long_value
m_long_value() {
  matrix_text_case "an axis value of 10,000 bytes (round two)" "name = \"n\"
command = \"true\"
[axes]
v = [\"$(head -c 10000 /dev/zero | tr '\0' v)\"]" "bytes"
}
def m_garbage
m_garbage() { matrix_text_case "TOML that does not parse" $'name = "n"\ncommand = [' ""; }

# --- 9. a foreign SQLite file as the history ------------------------------------

foreign_db() {
  sqlite3 "$1" "CREATE TABLE accounts(id INTEGER, owner TEXT); INSERT INTO accounts VALUES (1, 'someone');"
}
history_case() {
  local name=$1
  shift
  foreign_db "$CASE/theirs.sqlite"
  local before after
  before=$(sum_of "$CASE/theirs.sqlite")
  hb 30 "$@"
  after=$(sum_of "$CASE/theirs.sqlite")
  local extra
  extra=$(ls "$CASE" | grep -c 'theirs.sqlite-')
  verdict "$name" "refused (exit 2), the file byte for byte as it was, nothing beside it" \
    "exit $RC, file $([ "$before" = "$after" ] && echo unchanged || echo CHANGED), files beside: $extra" \
    "$(t '[ $RC = 2 ] && [ "$before" = "$after" ] && [ $extra = 0 ]')"
}
def hist_show
hist_show() { history_case "history --store on a foreign SQLite file" history --store "$CASE/theirs.sqlite"; }
def hist_check
hist_check() { history_case "history check --store on a foreign SQLite file" history check --store "$CASE/theirs.sqlite"; }
def hist_append
hist_append() {
  local m
  m=$(matrix ok 'true')
  timeout -s KILL 60 "$HB" run --matrix "$m" --out "$CASE/run" >/dev/null 2>&1
  history_case "history append into a foreign SQLite file" history append --store "$CASE/theirs.sqlite" "$CASE/run/hangbench.sqlite"
}
def run_foreign_store
run_foreign_store() {
  mkdir -p "$CASE/out"
  foreign_db "$CASE/out/hangbench.sqlite"
  local before after m
  before=$(sum_of "$CASE/out/hangbench.sqlite")
  m=$(matrix ok 'true')
  hb 60 run --matrix "$m" --out "$CASE/out"
  after=$(sum_of "$CASE/out/hangbench.sqlite")
  verdict "run --out a folder whose hangbench.sqlite is someone else's" "refused (exit 2), the file as it was" \
    "exit $RC, file $([ "$before" = "$after" ] && echo unchanged || echo CHANGED)" \
    "$(t '[ $RC = 2 ] && [ "$before" = "$after" ]')"
}
def hist_text
hist_text() {
  echo "not a database" >"$CASE/notes.sqlite"
  local before
  before=$(sum_of "$CASE/notes.sqlite")
  hb 30 history --store "$CASE/notes.sqlite"
  verdict "history --store on a text file" "refused (exit 2), the file as it was" "exit $RC" \
    "$(t '[ $RC = 2 ] && [ "$before" = "$(sum_of "$CASE/notes.sqlite")" ]')"
}

# --- 10. writes that fail -----------------------------------------------------------

# A store of one finished run, for the commands that read one.
one_store() {
  local m
  m=$(matrix ok 'true')
  timeout -s KILL 60 "$HB" run --matrix "$m" --out "$CASE/run" >/dev/null 2>&1
}
def w_evidence_full
w_evidence_full() {
  one_store
  hb 30 evidence "$CASE/run/hangbench.sqlite" --out /dev/full
  verdict "evidence --out /dev/full (a full disk)" "exit 3 naming /dev/full, no 'wrote'" "exit $RC" \
    "$(t '[ $RC = 3 ] && has "/dev/full" && ! has "wrote"')"
}
def w_evidence_stdout_full
w_evidence_stdout_full() {
  one_store
  timeout -s KILL 30 "$HB" evidence "$CASE/run/hangbench.sqlite" >/dev/full 2>"$CASE/log"
  RC=$?
  LOG=$(cat "$CASE/log")
  verdict "evidence > /dev/full (stdout)" "exit 3 naming standard output" "exit $RC" \
    "$(t '[ $RC = 3 ] && has "standard output"')"
}
def w_history_full
w_history_full() {
  one_store
  timeout -s KILL 30 "$HB" history append --store "$CASE/h.sqlite" "$CASE/run/hangbench.sqlite" >/dev/null 2>&1
  hb 30 history --store "$CASE/h.sqlite" --out /dev/full
  verdict "history --out /dev/full" "exit 3 naming /dev/full, no 'wrote'" "exit $RC" \
    "$(t '[ $RC = 3 ] && has "/dev/full" && ! has "wrote"')"
}
def w_diagnose_json_full
w_diagnose_json_full() {
  sleep 60 &
  local victim=$!
  timeout -s KILL 60 "$HB" diagnose --json "$victim" >/dev/full 2>"$CASE/log"
  RC=$?
  LOG=$(cat "$CASE/log")
  kill "$victim"
  wait "$victim" 2>/dev/null
  verdict "diagnose --json > /dev/full (stdout)" "exit 3 naming standard output" "exit $RC" \
    "$(t '[ $RC = 3 ] && has "standard output"')"
}
def w_diagnose_text_full
w_diagnose_text_full() {
  sleep 60 &
  local victim=$!
  timeout -s KILL 60 "$HB" diagnose "$victim" >/dev/full 2>"$CASE/log"
  RC=$?
  LOG=$(cat "$CASE/log")
  kill "$victim"
  wait "$victim" 2>/dev/null
  verdict "diagnose > /dev/full (text on stdout)" "exit 3" "exit $RC" "$(t '[ $RC = 3 ]')"
}
def w_diagnose_markdown_full
w_diagnose_markdown_full() {
  sleep 60 &
  local victim=$!
  hb 60 diagnose "$victim" --markdown /dev/full
  kill "$victim"
  wait "$victim" 2>/dev/null
  verdict "diagnose --markdown /dev/full" "exit 3 naming /dev/full" "exit $RC" "$(t '[ $RC = 3 ] && has "/dev/full"')"
}
def w_stats_full
w_stats_full() {
  timeout -s KILL 30 "$HB" stats fisher 8/98 0/120 >/dev/full 2>"$CASE/log"
  RC=$?
  LOG=$(cat "$CASE/log")
  verdict "stats fisher > /dev/full" "exit 3" "exit $RC" "$(t '[ $RC = 3 ]')"
}
def w_catalog_full
w_catalog_full() {
  timeout -s KILL 30 "$HB" catalog list >/dev/full 2>"$CASE/log"
  RC=$?
  LOG=$(cat "$CASE/log")
  verdict "catalog list > /dev/full" "exit 3" "exit $RC" "$(t '[ $RC = 3 ]')"
}
def w_evidence_dir_out
w_evidence_dir_out() {
  one_store
  hb 30 evidence "$CASE/run/hangbench.sqlite" --out "$CASE"
  verdict "evidence --out an existing folder" "exit 3 naming it, the folder kept" "exit $RC" \
    "$(t '[ $RC = 3 ] && [ -d "$CASE/run" ]')"
}
def w_evidence_tmp_link
w_evidence_tmp_link() {
  one_store
  echo precious >"$CASE/victim"
  ln -s "$CASE/victim" "$CASE/table.md.tmp"
  hb 30 evidence "$CASE/run/hangbench.sqlite" --out "$CASE/table.md"
  verdict "evidence --out with a planted FILE.tmp link" "exit 0, the linked file untouched" \
    "exit $RC, outside file $(victim_state)" "$(t '[ $RC = 0 ] && [ "$(cat "$CASE/victim")" = precious ] && [ -s "$CASE/table.md" ]')"
}
def w_dev_full_kept
w_dev_full_kept() {
  # An earlier hangbench renamed its FILE.tmp over the path: over a device, that removes it.
  mkfifo "$CASE/sink"
  cat "$CASE/sink" >"$CASE/received" &
  local reader=$!
  one_store
  hb 30 evidence "$CASE/run/hangbench.sqlite" --out "$CASE/sink"
  wait "$reader"
  verdict "evidence --out a FIFO" "written into it, the FIFO kept" \
    "exit $RC, received $(wc -c <"$CASE/received") bytes, $([ -p "$CASE/sink" ] && echo 'FIFO kept' || echo 'FIFO replaced')" \
    "$(t '[ $RC = 0 ] && [ -p "$CASE/sink" ] && [ -s "$CASE/received" ]')"
}

# --- 11. a reader that goes away, bounds on diagnose --------------------------------

def pipe_head
pipe_head() {
  local m
  m=$(matrix slow 'sleep 0.3' 'trials = 40
concurrency = 1')
  bash -c "'$HB' run --matrix '$m' --out '$CASE/out' --progress plain 2>&1 | head -c 1 >/dev/null; exit \${PIPESTATUS[0]}" &
  local pid=$!
  local waited=0
  while kill -0 $pid 2>/dev/null && [ $waited -lt 600 ]; do
    sleep 0.1
    waited=$((waited + 1))
  done
  kill -KILL $pid 2>/dev/null
  wait $pid
  local first=$?
  local status
  status=$(store_status "$CASE/out/hangbench.sqlite")
  hb 120 run --resume --out "$CASE/out"
  verdict "run … 2>&1 | head -c 1 (a reader that goes away)" "exit 3, run interrupted, --resume finishes it (exit 0)" \
    "exit $first, store '$status', resume exit $RC" "$(t '[ $first = 3 ] && [ "$status" = interrupted ] && [ $RC = 0 ]')"
}
def pipe_stdout_gone
pipe_stdout_gone() {
  local m
  m=$(matrix quick 'sleep 0.2' 'trials = 2')
  bash -c "'$HB' run --matrix '$m' --out '$CASE/out' 2>/dev/null | true; exit \${PIPESTATUS[0]}"
  local first=$?
  verdict "run … | true (the reader gone before the table)" "exit 3 (not 141), the run complete in its store" \
    "exit $first, store '$(store_status "$CASE/out/hangbench.sqlite")'" \
    "$(t '[ $first = 3 ] && [ "$(store_status "$CASE/out/hangbench.sqlite")" = complete ]')"
}
diag_timeout_case() {
  local value=$1
  sleep 60 &
  local victim=$!
  hb 30 diagnose --timeout "$value" "$victim"
  kill "$victim"
  wait "$victim" 2>/dev/null
  verdict "diagnose --timeout $value" "exit 2 naming the range in words" "exit $RC: $(grep -m1 timeout <<<"$LOG" | head -c 120)" \
    "$(t '[ $RC = 2 ] && has "above 0 and at most 3600"')"
}
def d_nan
d_nan() { diag_timeout_case nan; }
def d_huge
d_huge() { diag_timeout_case 1e308; }
def d_inf
d_inf() { diag_timeout_case inf; }
def d_zero
d_zero() { diag_timeout_case 0; }
def d_negative
d_negative() { diag_timeout_case -5; }
def d_word
d_word() { diag_timeout_case soon; }

# --- 4. a neighbouring run ----------------------------------------------------------

# A live run whose --out is inside another folder's trials/: the outer run's start
# must not take its trials for leftovers of its own.
def nested_live_run
nested_live_run() {
  local m p
  m=$(matrix inner 'sleep 60' 'timeout = 90.0')
  p=$(matrix outer 'true')
  mkdir -p "$CASE/out/trials/inner"
  timeout -s KILL 120 "$HB" run --matrix "$m" --out "$CASE/out/trials/inner" >"$CASE/inner.log" 2>&1 &
  local inner=$!
  for _ in $(seq 300); do
    [ "$(trial_procs "$CASE/out/trials/inner/")" -ge 1 ] && break
    sleep 0.1
  done
  local before after
  before=$(trial_procs "$CASE/out/trials/inner/")
  hb 60 run --matrix "$p" --out "$CASE/out"
  after=$(trial_procs "$CASE/out/trials/inner/")
  kill -INT "$inner" 2>/dev/null
  wait "$inner"
  verdict "a live run nested in another's --out, the outer one started" \
    "the nested run's trials live on; the outer run ends none" \
    "exit $RC, nested trial processes $before before, $after after" \
    "$(t '[ $RC = 0 ] && [ $before -ge 1 ] && [ $after = $before ] && ! has "cleanup: ended"')"
}

# --- 5. a hung tree of many processes ---------------------------------------------------

def tree_2000
tree_2000() {
  local m start took
  m=$(matrix tree 'i=0; while [ $i -lt 2000 ]; do sleep 600 & i=$((i+1)); done; wait' 'timeout = 30.0')
  start=$(date +%s)
  hb_peak 120 run --matrix "$m" --out "$CASE/out" --format json
  took=$(($(date +%s) - start))
  local listed=0
  listed=$(grep -c '"pid"' "$(find "$CASE/out/trials" -name evidence.json | head -1)" 2>/dev/null || echo 0)
  verdict "a hung trial with 2,000 sleeping children" "its evidence within the timeout and 60 s, under 500 MiB" \
    "exit $RC in ${took} s (timeout 30 s), peak ${PEAK_MIB} MiB, ${listed} pids in the evidence" \
    "$(t '[ $took -lt 90 ] && [ $PEAK_MIB -lt 500 ] && [ $listed -ge 2000 ]')"
}

# --- 7. the plan's bounds -----------------------------------------------------------------

def plan_total
plan_total() {
  local m
  m=$(matrix total 'true' 'trials = 20000000')
  hb_peak 20 run --matrix "$m" --out "$CASE/out"
  verdict "one cell of 20,000,000 trials" "exit 2 naming file:line and the limit, nothing written" \
    "exit $RC, peak ${PEAK_MIB} MiB" \
    "$(t '[ $RC = 2 ] && has "total.toml:6: the matrix plans more than 10000000 trials" && [ ! -e "$CASE/out/hangbench.sqlite" ]')"
}

def plan_total_cells
plan_total_cells() {
  local m vals
  vals=$(seq -s, -f '"%g"' 0 99)
  m=$(matrix cells 'true' "trials = 1001
[axes]
a = [$vals]
b = [$vals]")
  hb_peak 60 run --dry-run --matrix "$m"
  verdict "10,000 cells of 1,001 trials (dry run)" "exit 2 naming file:line and the limit" \
    "exit $RC, peak ${PEAK_MIB} MiB" "$(t '[ $RC = 2 ] && has "cells.toml:6: the matrix plans more than 10000000" && [ $PEAK_MIB -lt 300 ]')"
}

def plan_trials_flag
plan_trials_flag() {
  local m
  m=$(matrix flag 'true' '[axes]
a = ["1", "2"]')
  hb 20 run --matrix "$m" --out "$CASE/out" --trials 6000000
  verdict "--trials 6,000,000 over 2 cells" "exit 2 naming --trials, the file and the limit" "exit $RC" \
    "$(t '[ $RC = 2 ] && has "--trials 6000000" && has "at most 10000000"')"
}

def plan_huge_dry
plan_huge_dry() {
  local m
  m=$(matrix hugedry 'true' 'trials = 10000000')
  hb_peak 30 run --dry-run --matrix "$m" --shard 1/3
  verdict "a dry run of one cell of 10,000,000 trials, a shard of it" "exit 0 at once, under 100 MiB" \
    "exit $RC, peak ${PEAK_MIB} MiB" "$(t '[ $RC = 0 ] && [ $PEAK_MIB -lt 100 ] && has "of 10000000 (indices 1, 4, 7"')"
}

def plan_huge_run
plan_huge_run() {
  local m
  m=$(matrix hugerun 'true' 'trials = 10000000')
  hb_peak 8 run --matrix "$m" --out "$CASE/out" --format json
  local ran
  ran=$(sqlite3 "$CASE/out/hangbench.sqlite" "SELECT count(*) FROM trials" 2>/dev/null || echo 0)
  verdict "a run of one cell of 10,000,000 trials, killed after 8 s" "trials ran, under 200 MiB (no plan listed)" \
    "${ran} trials ran, peak ${PEAK_MIB} MiB" "$(t '[ "${ran:-0}" -ge 1 ] && [ $PEAK_MIB -lt 200 ]')"
}

# --- earlier rounds: the command line ------------------------------------------------

def r_timeout_inf
r_timeout_inf() {
  local m
  m=$(matrix ok 'true')
  hb 20 run --matrix "$m" --out "$CASE/out" --timeout inf
  verdict "run --timeout inf (round two)" "exit 2, nothing written" "exit $RC" \
    "$(t '[ $RC = 2 ] && [ ! -e "$CASE/out/hangbench.sqlite" ]')"
}
def r_out_file
r_out_file() {
  echo x >"$CASE/afile"
  local m
  m=$(matrix ok 'true')
  hb 20 run --matrix "$m" --out "$CASE/afile"
  verdict "run --out an existing file" "exit 2 or 3 naming it, the file kept" "exit $RC" \
    "$(t '{ [ $RC = 2 ] || [ $RC = 3 ]; } && [ "$(cat "$CASE/afile")" = x ]')"
}
def r_resume_nothing
r_resume_nothing() {
  hb 20 run --resume --out "$CASE/none"
  verdict "run --resume with no store (round two)" "exit 2" "exit $RC" "$(t '[ $RC = 2 ]')"
}
def r_report_unknown
r_report_unknown() {
  one_store
  hb 20 report --out "$CASE/run" --run no-such-run
  verdict "report --run of an unknown run" "exit 2" "exit $RC" "$(t '[ $RC = 2 ]')"
}
def r_missing_workload
r_missing_workload() {
  local m
  m=$(toml miss $'name = "m"\ncommand = "/nonexistent/workload"\ntrials = 1\ntimeout = 10.0')
  hb 60 run --matrix "$m" --out "$CASE/out"
  verdict "a workload that cannot start" "exit 3, its reason said" "exit $RC" "$(t '[ $RC = 3 ]')"
}

def r_folder_in_use
r_folder_in_use() {
  local m
  m=$(matrix long 'sleep 30' 'timeout = 60.0')
  timeout -s KILL 90 "$HB" run --matrix "$m" --out "$CASE/out" >"$CASE/first.log" 2>&1 &
  local first=$!
  for _ in $(seq 100); do
    [ -n "$(find "$CASE/out/trials" -name stdout.log 2>/dev/null)" ] && break
    sleep 0.1
  done
  hb 20 run --matrix "$m" --out "$CASE/out"
  kill -INT "$first"
  wait "$first"
  verdict "a second run on a folder in use (earlier rounds)" "exit 2 naming the run that holds it" "exit $RC" \
    "$(t '[ $RC = 2 ] && has "in use by another hangbench run"')"
}
def r_resume_changes
r_resume_changes() {
  local m
  m=$(matrix long 'sleep 30' 'timeout = 60.0
trials = 2')
  timeout -s KILL 90 "$HB" run --matrix "$m" --out "$CASE/out" >"$CASE/first.log" 2>&1 &
  local first=$!
  for _ in $(seq 100); do
    [ -n "$(find "$CASE/out/trials" -name stdout.log 2>/dev/null)" ] && break
    sleep 0.1
  done
  kill -INT "$first"
  wait "$first"
  hb 20 run --resume --out "$CASE/out" --trials 5
  verdict "--resume with --trials that would change the run (round two)" "exit 2" "exit $RC" \
    "$(t '[ $RC = 2 ] && has "would change them"')"
}
# Processes whose environment names a trial folder under $1.
trial_procs() {
  grep -l "HANGBENCH_TRIAL_DIR=$1" /proc/[0-9]*/environ 2>/dev/null | wc -l
}
def r_sigkill
r_sigkill() {
  local m
  m=$(matrix orphans 'sleep 60 & sleep 60 & (trap "" TERM; sleep 60) & wait' 'timeout = 90.0
trials = 2
concurrency = 2')
  timeout -s KILL 120 "$HB" run --matrix "$m" --out "$CASE/out" >"$CASE/log" 2>&1 &
  local pid=$!
  for _ in $(seq 200); do
    [ "$(trial_procs "$CASE/out/")" -ge 8 ] && break
    sleep 0.1
  done
  local before left
  before=$(trial_procs "$CASE/out/")
  kill -KILL "$(cat /proc/$pid/task/$pid/children | awk '{print $1}')"
  wait "$pid"
  for _ in $(seq 100); do
    [ "$(trial_procs "$CASE/out/")" = 0 ] && break
    sleep 0.1
  done
  left=$(trial_procs "$CASE/out/")
  verdict "the harness SIGKILLed with trials running (earlier rounds)" "no trial process left within 10 s" \
    "$before trial processes before, $left after" "$(t '[ $before -ge 8 ] && [ $left = 0 ]')"
}

# --- run them ------------------------------------------------------------------------

START=$(date +%s)
: >"$ROOT/rows"
for c in "${CASES[@]}"; do
  if [ -n "$ONLY" ] && ! grep -qE -- "$ONLY" <<<"$c"; then continue; fi
  CASE="$ROOT/$c"
  mkdir -p "$CASE"
  rows_before=$(wc -l <"$ROOT/rows")
  (cd "$CASE" && "$c")
  if [ "$(wc -l <"$ROOT/rows")" = "$rows_before" ]; then  # a case that ended before its verdict
    printf '| %s | its verdict | the case ended early | FAIL |\n' "$c" >>"$ROOT/rows"
    echo "FAIL $c (ended before its verdict)"
  fi
  rm -rf "$CASE"
done
ELAPSED=$(($(date +%s) - START))
PASSED=$(grep -c '| PASS |$' "$ROOT/rows")
FAILED=$(grep -c '| FAIL |$' "$ROOT/rows")
TOTAL=$((PASSED + FAILED))

render() {
  echo "| case | expectation | what happened | verdict |"
  echo "| --- | --- | --- | --- |"
  cat "$ROOT/rows"
  echo
  echo "Totals: $TOTAL cases, $PASSED passed, $FAILED failed, in ${ELAPSED} s."
}
echo
render
if [ -n "$TABLE" ]; then
  mkdir -p "$(dirname "$TABLE")"
  render >"$TABLE.body"
  {
    echo "# The hostile set (tests/hostile/hostile.sh)"
    echo
    [ -n "${HOSTILE_PROVENANCE:-}" ] && printf '%s\n\n' "$HOSTILE_PROVENANCE"
    cat "$TABLE.body"
  } >"$TABLE" && rm -f "$TABLE.body" || exit 2
fi
[ "$FAILED" = 0 ] && [ "$TOTAL" -gt 0 ]
