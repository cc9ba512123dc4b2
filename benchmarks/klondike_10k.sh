#!/usr/bin/env bash
# Thoughtful Klondike on deals 0-9999 (docs/winnability.md, "Deals 0-9999"): the passes of the
# solver over deals 1000-9999 (0-999 ship with the package), each a CSV in DIR. Every step resumes: run the
# script again after an interruption and it continues where it stopped. Hours on 2 cores; pass 3 dominates.
#   bash benchmarks/klondike_10k.sh [DIR]           # default DIR: benchmarks/results/klondike_10k
#   bash benchmarks/klondike_10k.sh --quick [DIR]   # seconds, a check of this script: every pass on deals
#                                                   # 1038-1040 at tiny budgets, one job; DIR: a new temporary one
# The rows are kept in git as NAME.csv.gz (gzip -n, written by hand between sessions); the plain CSVs are ignored.
# SOLITAIRE_ENV: the solitaire-env command to run (default .venv/bin/solitaire-env).
set -euo pipefail
cd "$(dirname "$0")/.."
QUICK=; [ "${1:-}" != --quick ] || { QUICK=1; shift; }
COMMITTED=benchmarks/results/klondike_10k
if [ -n "$QUICK" ]; then
  DIR=${1:-$(mktemp -d)}
  [ ! "$DIR" -ef "$COMMITTED" ] || { echo "--quick never writes to $COMMITTED" >&2; exit 2; }
  echo "== --quick: into $DIR"
else
  DIR=${1:-$COMMITTED}
fi
mkdir -p "$DIR"
# The committed snapshots (NAME.csv.gz) are where a fresh clone goes on from: a retry reads the pass before it.
for gz in "$DIR"/*.csv.gz; do
  [ ! -e "$gz" ] || [ -e "${gz%.gz}" ] || zcat "$gz" > "${gz%.gz}"
done
SOLVE=("${SOLITAIRE_ENV:-.venv/bin/solitaire-env}" solve --jobs 2 --no-progress)
# The deals and each pass's budget (positions, seconds a deal, MB of table); --quick: a few deals, tiny budgets.
SEEDS=1000:10000
PASS1=(--max-nodes 4000000 --time-limit 600 --memory 128)
PASS2=(--max-nodes 30000000 --time-limit 3600 --memory 1024)
PASS3=(--max-nodes 300000000 --time-limit 7200 --memory 2048)
if [ -n "$QUICK" ]; then
  SOLVE=("${SOLVE[0]}" solve --jobs 1 --no-progress)
  SEEDS=1038:1041  # deal 1038 stays undecided in both games (at 4M positions too): every retry has a deal
  PASS1=(--max-nodes 1000 --time-limit 10 --memory 16)
  PASS2=(--max-nodes 2000 --time-limit 10 --memory 16)
  PASS3=(--max-nodes 4000 --time-limit 10 --memory 16)
fi

# step NAME ARGS...: solve into DIR/NAME.csv, resuming when the file exists; a finished step is skipped.
step() {
  local name=$1; shift
  local csv=$DIR/$name.csv
  [ -e "$DIR/$name.done" ] && return 0
  local resume=(); [ -e "$csv" ] && resume=(--resume)
  echo "== $name ($(date -u +%H:%M:%S))"
  "${SOLVE[@]}" "$@" --csv "$csv" --json "$DIR/$name.json" "${resume[@]}"
  touch "$DIR/$name.done"
}

# Read whole before it runs (the braces), so that editing this file does not upset a run in progress.
{
# Draw 3, then draw 1: the shipped data's two passes on deals 1000-9999 (draw 1's first pass comes before draw 3's
# long third, so that every deal has an answer in both games early).
step draw3_pass1 klondike_draw3 --seeds "$SEEDS" "${PASS1[@]}"
step draw3_pass2 klondike_draw3 --retry "$DIR/draw3_pass1.csv" "${PASS2[@]}"
step draw1_pass1 klondike --seeds "$SEEDS" "${PASS1[@]}"
# Draw 3's third pass: the complete search alone with ten times pass 2's nodes.
step draw3_pass3 klondike_draw3 --retry "$DIR/draw3_pass2.csv" --restart-share 0 "${PASS3[@]}"
step draw1_pass2 klondike --retry "$DIR/draw1_pass1.csv" "${PASS2[@]}"
# The same third pass on the shipped deals 0-999 the two shipped passes left undecided.
[ -e "$DIR/shipped_draw3.csv" ] || zcat solitaire_env/data/winnability/klondike_draw3.csv.gz > "$DIR/shipped_draw3.csv"
step shipped_draw3_pass3 klondike_draw3 --retry "$DIR/shipped_draw3.csv" --restart-share 0 "${PASS3[@]}"
echo "== all passes done ($(date -u +%H:%M:%S))"
exit
}
