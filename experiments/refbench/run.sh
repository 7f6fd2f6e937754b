#!/usr/bin/env bash
# experiments/refbench/run.sh — time two public reference implementations against
# clothbench, interleaved, and print a ratio table (README.md beside this file).
#
#   run.sh PBD_SRC FMS_SRC [--rounds N] [-o OUT.csv] [--clothbench PATH]
#          [--build-dir DIR] [--steps N] [--repeats N]
#          [--clothbench-repo DIR | --clothbench-commit TEXT]
#
# PBD_SRC: a checkout of InteractiveComputerGraphics/PositionBasedDynamics;
# FMS_SRC: a checkout of sam007961/FastMassSpring. Their files are compiled from there
# (never copied) with the drivers pbd_bend.cpp and fms.cpp into the build folder
# (default ./build-refbench). Needs g++ (or $CXX) with OpenMP, and Eigen 3 headers
# (Debian: libeigen3-dev; or set EIGEN3_INCLUDE_DIR). Nothing is downloaded.
#
# Each round runs, for every case, the reference and then clothbench (reference, ours,
# reference, ours, ...). Each run reports its least ms per step over its repeats; the
# table gives the least over the rounds and, in brackets, the median over the rounds.
# ratio = reference / clothbench (> 1: clothbench is faster).
set -euo pipefail

script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

usage() {
    sed -n '2,18p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
}

die() {
    echo "run.sh: error: $*" >&2
    exit 2
}

note() { echo "run.sh: $*" >&2; }

# ---------------------------------------------------------------- arguments
rounds=7
steps=60
repeats=5
out=""
build_dir="build-refbench"
clothbench="$script_dir/../../build-release/clothbench"
cb_repo=""
cb_commit=""
positional=()

need_value() { [[ $# -ge 2 && -n $2 ]] || die "$1 needs a value (see --help)"; }
need_int() { [[ $2 =~ ^[1-9][0-9]*$ ]] || die "$1: expected a positive integer, got '$2'"; }

while [[ $# -gt 0 ]]; do
    case $1 in
        -h | --help) usage; exit 0 ;;
        --rounds) need_value "$@"; need_int "$1" "$2"; rounds=$2; shift 2 ;;
        --steps) need_value "$@"; need_int "$1" "$2"; steps=$2; shift 2 ;;
        --repeats) need_value "$@"; need_int "$1" "$2"; repeats=$2; shift 2 ;;
        -o | --output) need_value "$@"; out=$2; shift 2 ;;
        --build-dir) need_value "$@"; build_dir=$2; shift 2 ;;
        --clothbench) need_value "$@"; clothbench=$2; shift 2 ;;
        --clothbench-repo) need_value "$@"; cb_repo=$2; shift 2 ;;
        --clothbench-commit) need_value "$@"; cb_commit=$2; shift 2 ;;
        --) shift; positional+=("$@"); break ;;
        -*) die "unknown option '$1' (see --help)" ;;
        *) positional+=("$1"); shift ;;
    esac
done
[[ ${#positional[@]} -eq 2 ]] ||
    die "expected two folders, PBD_SRC and FMS_SRC, got ${#positional[@]} argument(s) (see --help)"
pbd_src=${positional[0]}
fms_src=${positional[1]}
[[ $steps -ge 2 ]] || die "--steps: at least 2 (clothbench times steps 2..N)"

# ---------------------------------------------------------------- checks
# check_source NAME DIR WHAT FILE...: every FILE must exist under DIR.
check_source() {
    local name=$1 dir=$2 what=$3
    shift 3
    [[ -d $dir ]] || die "$name: '$dir' is not a folder (expected a checkout of $what)"
    local missing=()
    local f
    for f in "$@"; do
        [[ -f $dir/$f ]] || missing+=("$f")
    done
    [[ ${#missing[@]} -eq 0 ]] ||
        die "$name: '$dir' does not look like a checkout of $what: missing ${missing[*]}"
}
check_source PBD_SRC "$pbd_src" "InteractiveComputerGraphics/PositionBasedDynamics" \
    Common/Common.h \
    PositionBasedDynamics/PositionBasedDynamics.h PositionBasedDynamics/PositionBasedDynamics.cpp \
    PositionBasedDynamics/TimeIntegration.h PositionBasedDynamics/TimeIntegration.cpp \
    PositionBasedDynamics/MathFunctions.h PositionBasedDynamics/MathFunctions.cpp \
    Utils/IndexedFaceMesh.h Utils/IndexedFaceMesh.cpp
grep -q 'solve_DihedralConstraint' "$pbd_src/PositionBasedDynamics/PositionBasedDynamics.h" ||
    die "PBD_SRC: $pbd_src/PositionBasedDynamics/PositionBasedDynamics.h has no solve_DihedralConstraint"
check_source FMS_SRC "$fms_src" "sam007961/FastMassSpring" \
    ClothApp/MassSpringSolver.h ClothApp/MassSpringSolver.cpp
grep -q 'class MassSpringSolver' "$fms_src/ClothApp/MassSpringSolver.h" ||
    die "FMS_SRC: $fms_src/ClothApp/MassSpringSolver.h has no class MassSpringSolver"
pbd_src=$(cd "$pbd_src" && pwd)
fms_src=$(cd "$fms_src" && pwd)

cxx=${CXX:-g++}
command -v "$cxx" >/dev/null || die "C++ compiler '$cxx' not found (install g++ or set CXX)"

eigen_dir=${EIGEN3_INCLUDE_DIR:-}
if [[ -z $eigen_dir ]]; then
    for d in /usr/include/eigen3 /usr/local/include/eigen3; do
        if [[ -f $d/Eigen/Sparse ]]; then eigen_dir=$d; break; fi
    done
fi
[[ -n $eigen_dir && -f $eigen_dir/Eigen/Sparse ]] ||
    die "Eigen 3 headers not found (no Eigen/Sparse under ${eigen_dir:-/usr/include/eigen3}): install libeigen3-dev, or set EIGEN3_INCLUDE_DIR"

[[ -x $clothbench ]] || die "clothbench binary '$clothbench' not found or not executable (use --clothbench PATH)"
clothbench=$(cd "$(dirname "$clothbench")" && pwd)/$(basename "$clothbench")

# The three comparison cases must be in this clothbench binary: a tiny probe run each.
for probe in "pbd_bend pbd" "fms_curtain fms" "fms_classic fms"; do
    read -r pcase psolver <<<"$probe"
    if ! perr=$(OMP_NUM_THREADS=1 "$clothbench" bench --case "$pcase" --solver "$psolver" --size 4 \
        --steps 2 --repeats 1 -q 2>&1 >/dev/null); then
        if [[ $perr == *"unknown case"* ]]; then
            die "$clothbench has no bench case '$pcase' (a binary older than experiments/bench.c's comparison cases? rebuild it)"
        fi
        die "clothbench bench --case $pcase --solver $psolver failed on a 4 x 4 probe: $perr"
    fi
done

# ---------------------------------------------------------------- build
mkdir -p "$build_dir"
build_dir=$(cd "$build_dir" && pwd)
[[ -n $out ]] || out="$build_dir/refbench.csv"
mkdir -p "$(dirname "$out")"
txt="${out%.csv}.txt"

flags=(-std=c++17 -O3 -DNDEBUG -march=native)   # the references' Release flags
pbd_flags=(-DUSE_DOUBLE -fopenmp)                 # PositionBasedDynamics' CMake defaults
pbd_files=("$pbd_src/PositionBasedDynamics/PositionBasedDynamics.cpp"
    "$pbd_src/PositionBasedDynamics/TimeIntegration.cpp"
    "$pbd_src/PositionBasedDynamics/MathFunctions.cpp"
    "$pbd_src/Utils/IndexedFaceMesh.cpp")
fms_files=("$fms_src/ClothApp/MassSpringSolver.cpp")

# build OUT SOURCE... -- FLAG...: compile unless OUT is newer than every input and this script.
build() {
    local target=$1
    shift
    local inputs=()
    while [[ $1 != -- ]]; do inputs+=("$1"); shift; done
    shift
    local stale=0 f
    [[ -x $target ]] || stale=1
    for f in "${inputs[@]}" "${BASH_SOURCE[0]}" "$script_dir/driver_util.h"; do
        if [[ $f -nt $target ]]; then stale=1; fi
    done
    if [[ $stale -eq 0 ]]; then
        note "up to date: $target"
        return
    fi
    note "compiling $(basename "$target") ..."
    "$cxx" "$@" -o "$target" "${inputs[@]}" ||
        die "compiling $(basename "$target") failed (command: $cxx $* -o $target ${inputs[*]})"
}
build "$build_dir/pbd_bend" "$script_dir/pbd_bend.cpp" "${pbd_files[@]}" -- \
    "${flags[@]}" "${pbd_flags[@]}" -I"$pbd_src" -I"$eigen_dir"
build "$build_dir/fms" "$script_dir/fms.cpp" "${fms_files[@]}" -- \
    "${flags[@]}" -I"$fms_src" -I"$eigen_dir"

# ---------------------------------------------------------------- runs
# Every run: steps and repeats as given; single-threaded rows get OMP_NUM_THREADS=1 on
# both sides (and one BLAS thread, for CHOLMOD), the 2-thread row OMP_NUM_THREADS=2.
run_env() { env OMP_NUM_THREADS="$1" OPENBLAS_NUM_THREADS=1 "${@:2}"; }

# ref_pbd THREADS -> "ms"
ref_pbd() {
    local line
    line=$(run_env "$1" "$build_dir/pbd_bend" --n 60 --steps "$steps" --repeats "$repeats" 2>>"$log") ||
        die "pbd_bend driver failed (see $log)"
    awk '$1 == "pbd_bend" && $2 == "ms_per_step" { print $3; found = 1 }
         END { if (!found) exit 1 }' <<<"$line" || die "pbd_bend driver printed '$line'"
}

# ref_fms N PINS DT -> "construct_ms ms"
ref_fms() {
    local line
    line=$(run_env 1 "$build_dir/fms" --n "$1" --pins "$2" --dt "$3" --steps "$steps" \
        --repeats "$repeats" 2>>"$log") || die "fms driver failed (see $log)"
    awk '$1 == "fms" && $3 == "construct_ms" && $5 == "ms_per_step" { print $4, $6; found = 1 }
         END { if (!found) exit 1 }' <<<"$line" || die "fms driver printed '$line'"
}

# cb THREADS CASE SOLVER SIZE [BENCH OPTION...] -> "min_ms_per_step create_ms first_step_ms"
# (nan when the row failed or a column is absent: a warning says which)
cb() {
    local csv rc=0
    csv=$(run_env "$1" "$clothbench" bench --case "$2" --solver "$3" --size "$4" --steps "$steps" \
        --repeats "$repeats" -q "${@:5}" 2>>"$log") || rc=$?
    awk -F, -v want="$2" '
        NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
        $1 == want {
            st = ("status" in col) ? $(col["status"]) : "?"
            if (st != "ok") { print "nan nan nan"; print "row " want ": status " st > "/dev/stderr"; found = 1; next }
            printf "%s %s %s\n", $(col["min_ms_per_step"]),
                ("create_ms" in col) ? $(col["create_ms"]) : "nan",
                ("first_step_ms" in col) ? $(col["first_step_ms"]) : "nan"
            found = 1
        }
        END { if (!found) print "nan nan nan" }' <<<"$csv"
    [[ $rc -eq 0 ]] || note "warning: clothbench bench --case $2 exited $rc (see $log)"
}

load_start=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || uptime)
log="${out%.csv}.log"
: >"$log"
note "$rounds round(s), $steps steps x $repeats repeats per run; log of the runs' stderr: $log"

declare -A ref cbv        # case -> space-separated values, one per round
cases=(pbd_bend pbd_bend_2threads fms_curtain_81 fms_curtain_81_single fms_classic_60 fms_prefactor_81 fms_create_81)
for c in "${cases[@]}"; do ref[$c]=""; cbv[$c]=""; done

for ((r = 1; r <= rounds; r++)); do
    echo "== round $r" >>"$log"
    a=$(ref_pbd 1)
    read -r b _ _ <<<"$(cb 1 pbd_bend pbd 60)"
    ref[pbd_bend]+=" $a"; cbv[pbd_bend]+=" $b"
    note "round $r/$rounds pbd_bend: reference $a, clothbench $b ms/step"

    a=$(ref_pbd 2)
    read -r b _ _ <<<"$(cb 2 pbd_bend pbd 60)"
    ref[pbd_bend_2threads]+=" $a"; cbv[pbd_bend_2threads]+=" $b"
    note "round $r/$rounds pbd_bend 2 threads: reference $a, clothbench $b ms/step"

    x=$(ref_fms 81 top 0.03333333333333333)   # the curtain scene's dt, 1/30 s
    read -r ac a <<<"$x"
    read -r b bc bf <<<"$(cb 1 fms_curtain fms 81)"
    ref[fms_curtain_81]+=" $a"; cbv[fms_curtain_81]+=" $b"
    ref[fms_create_81]+=" $ac"; cbv[fms_create_81]+=" $bc"
    # clothbench factors in its first step: one-off work = create + first step - a steady step
    ref[fms_prefactor_81]+=" $ac"
    cbv[fms_prefactor_81]+=" $(awk -v c="$bc" -v f="$bf" -v s="$b" 'BEGIN {
        if (c == "nan" || f == "nan" || s == "nan") print "nan"; else printf "%.6g\n", c + f - s }')"
    note "round $r/$rounds fms_curtain 81: reference $a (construct $ac), clothbench $b (create $bc, first step $bf) ms"

    # the same with clothbench's single-precision solves, like for like with FastMassSpring's
    # float (a reference run of its own, so the pair is interleaved like the others)
    read -r _ a <<<"$(ref_fms 81 top 0.03333333333333333)"
    read -r b _ _ <<<"$(cb 1 fms_curtain fms 81 --set solvers.fms.factor_precision=single)"
    ref[fms_curtain_81_single]+=" $a"; cbv[fms_curtain_81_single]+=" $b"
    note "round $r/$rounds fms_curtain 81, factor_precision single: reference $a, clothbench $b ms/step"

    x=$(ref_fms 60 corners 0.016666666666666666)   # the hanging scene's dt, 1/60 s
    read -r ac a <<<"$x"
    read -r b _ _ <<<"$(cb 1 fms_classic fms 60)"
    ref[fms_classic_60]+=" $a"; cbv[fms_classic_60]+=" $b"
    note "round $r/$rounds fms_classic 60: reference $a, clothbench $b ms/step"
done
load_end=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || uptime)

# ---------------------------------------------------------------- report
# stats "v1 v2 ..." -> "min median" (nan values ignored; "nan nan" when none is left)
stats() {
    tr ' ' '\n' <<<"$1" | awk 'NF && $1 != "nan"' | sort -g | awk '
        { v[NR] = $1 }
        END {
            if (NR == 0) { print "nan nan"; exit }
            med = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
            printf "%.4g %.4g\n", v[1], med
        }'
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "nan" || b == "nan" || b == 0) print "nan"; else printf "%.2f\n", a / b }'; }

declare -A label=(
    [pbd_bend]="pbd_bend 60x60, 1 thread (ms/step)"
    [pbd_bend_2threads]="pbd_bend 60x60, 2 threads (ms/step)"
    [fms_curtain_81]="fms curtain 81x81 (ms/step)"
    [fms_curtain_81_single]="fms curtain 81x81, clothbench factor_precision single (ms/step)"
    [fms_classic_60]="fms classic 60x60 (ms/step)"
    [fms_prefactor_81]="fms prefactorization 81x81: construct vs create + first step - step (ms)"
    [fms_create_81]="fms prefactorization 81x81: construct vs create_ms only (ms)"
)

echo "case,reference_ms,clothbench_ms,ratio,rounds" >"$out"
table="| case | reference | clothbench | ratio |
| --- | ---: | ---: | ---: |"
for c in "${cases[@]}"; do
    read -r rmin rmed <<<"$(stats "${ref[$c]}")"
    read -r cmin cmed <<<"$(stats "${cbv[$c]}")"
    q=$(ratio "$rmin" "$cmin")
    echo "$c,$rmin,$cmin,$q,$rounds" >>"$out"
    table+="
| ${label[$c]} | $rmin ($rmed) | $cmin ($cmed) | $q |"
done

echo
echo "min over $rounds rounds (median in brackets); ratio = reference / clothbench, > 1: clothbench faster"
echo
echo "$table"
echo

# ---------------------------------------------------------------- provenance
# source_commit DIR: the commit when DIR is the top of a git checkout, else 'unknown'.
source_commit() {
    local top
    if command -v git >/dev/null && top=$(git -C "$1" rev-parse --show-toplevel 2>/dev/null) &&
        [[ $(cd "$top" && pwd -P) == $(cd "$1" && pwd -P) ]]; then
        git -C "$1" rev-parse HEAD 2>/dev/null || echo unknown
    else
        echo unknown
    fi
}
if [[ -z $cb_commit ]]; then
    if [[ -z $cb_repo ]]; then   # the nearest folder above the binary with a .git
        d=$(dirname "$clothbench")
        while [[ $d != / && ! -e $d/.git ]]; do d=$(dirname "$d"); done
        if [[ -e $d/.git ]]; then cb_repo=$d; fi
    fi
    if [[ -n $cb_repo ]] && command -v git >/dev/null; then
        cb_commit=$(git -C "$cb_repo" rev-parse HEAD 2>/dev/null || echo unknown)
    else
        cb_commit=unknown
    fi
    cb_commit_how="git -C ${cb_repo:-?} rev-parse HEAD"
else
    cb_commit_how="given with --clothbench-commit"
fi
model=$(lscpu 2>/dev/null | sed -n 's/^Model name:[[:space:]]*//p' | head -n 1)
eigen_version=$(awk '/#define EIGEN_(WORLD|MAJOR|MINOR)_VERSION/ { v = v (v ? "." : "") $3 } END { print v }' \
    "$eigen_dir/Eigen/src/Core/util/Macros.h" 2>/dev/null || true)
{
    echo "refbench run of $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
    echo "machine: ${model:-unknown}; nproc $(nproc 2>/dev/null || echo unknown)"
    echo "load average (1/5/15 min): start $load_start; end $load_end"
    echo "PositionBasedDynamics: $pbd_src, commit $(source_commit "$pbd_src")"
    echo "FastMassSpring: $fms_src, commit $(source_commit "$fms_src")"
    echo "clothbench: $clothbench, commit $cb_commit ($cb_commit_how); binary sha256 $(sha256sum "$clothbench" | cut -d' ' -f1)"
    echo "compiler: $("$cxx" --version | head -n 1); flags ${flags[*]} (pbd_bend also ${pbd_flags[*]}); Eigen ${eigen_version:-?} from $eigen_dir"
    echo "rounds $rounds; each run $steps steps x $repeats repeats, its least ms per step; clothbench times steps 2..N"
    echo "threads: OMP_NUM_THREADS=1 on both sides except the 2-thread row (2 on both sides); OPENBLAS_NUM_THREADS=1;" \
        "OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-unset} GOMP_SPINCOUNT=${GOMP_SPINCOUNT:-unset} OMP_PROC_BIND=${OMP_PROC_BIND:-unset}"
    echo
    echo "$table"
    echo
    echo "per-round values (ms), reference | clothbench:"
    for c in "${cases[@]}"; do echo "  $c:${ref[$c]} |${cbv[$c]}"; done
} >"$txt"
note "wrote $out and $txt"
