#!/bin/sh
# The operations of the Docker filesystem backend (sandboxes/filesystem/docker.py) on the tree at
# ROOT, run in the container as: sh -c "<this script>" tree ROOT OPERATION [OPERAND...]
# Paths are resolved inside the container and must stay in the tree. Failures the caller maps to
# exceptions exit 3 with an errno name as the last line of stderr; success ends stdout with the
# trailer AJ-END.
set -u
R=$1; op=$2; shift 2
# one NUL-terminated record per entry: type size mode mtime atime ctime path
F='%y %s %m %T@ %A@ %C@ %P\0'
fail() { printf '%s\n' "$1" >&2; exit 3; }
# success ends with a trailer, so a lost answer can be told from an empty one
finish() { printf '%s' AJ-END; exit 0; }
inside() { case $1 in "$R"|"$R"/*) return 0 ;; esac; return 1; }
canon() {
    # realpath -m, keeping trailing newlines of names (command substitution strips them)
    c=$(realpath -m -- "$1" && echo .) || fail ELOOP
    c=${c%??}
}
full() { canon "$R/$1"; inside "$c" || fail ESCAPE; P=$c; }
lpath() {
    if [ -z "$1" ]; then P=$R; return; fi
    case $1 in */*) d=${1%/*} ;; *) d= ;; esac
    canon "$R/$d"; inside "$c" || fail ESCAPE
    P=$c/${1##*/}
}
exists() { [ -e "$1" ] || [ -L "$1" ]; }
ancestor() {
    m=${1%/*}
    while [ -n "$m" ] && ! exists "$m"; do m=${m%/*}; done
    [ -n "$m" ] || m=/
}
missing() { ancestor "$1"; [ -d "$m" ] && fail ENOENT; fail ENOTDIR; }
need_dir() { [ -d "$1" ] && return 0; exists "$1" && fail ENOTDIR; missing "$1"; }
# a regular file whose hard links are not all names inside the tree must not be read
own_links() {
    [ -f "$1" ] || return 0
    n=$(stat -c %h -- "$1"); [ "$n" -gt 1 ] || return 0
    k=$(find "$R" -samefile "$1" -printf x | wc -c)
    [ "$k" -ge "$n" ] || fail LINKED
}
# the regular file a read of $1 may open, in P (a FIFO would block, a device never end)
readable() {
    full "$1"; [ -d "$P" ] && fail EISDIR
    exists "$P" || missing "$P"
    [ -L "$P" ] && fail ELOOP  # still a link once resolved: a loop
    if [ ! -f "$P" ]; then stat -c %F -- "$P" >&2; fail ENOTREG; fi
    own_links "$P"
}
# where a write to $1 lands, in T (a symlink inside the tree is followed)
landing() {
    lpath "$1"; T=$P
    if [ -L "$T" ]; then full "$1"; T=$P; fi
}
# what the entry at T is, for quota accounting: "f SIZE", "o" (another kind) or "-" (none)
replaced() {
    if [ -f "$T" ] && [ ! -L "$T" ]; then printf 'f %s' "$(stat -c %s -- "$T")"
    elif exists "$T"; then printf '%s' o
    else printf '%s' -; fi
}
case $op in
resolve)
    full "$1"; printf '%s' "$P" ;;
stat)
    lpath "$1"; exists "$P" || missing "$P"
    find "$P" -maxdepth 0 -printf "$F" ;;
list)
    full "$1"; need_dir "$P"
    find "$P" -mindepth 1 -maxdepth 1 -printf "$F" ;;
walk)
    full "$1"; [ -d "$P" ] || finish
    find "$P" -mindepth 1 -printf "$F" ;;
everything)
    find "$R" -printf "$F" ;;
read)
    readable "$1"; printf '%s' "$P" ;;
head)
    # the size, a newline, then at most $2 bytes from the start ($3: stop after that many lines)
    readable "$1"; stat -c %s -- "$P"
    if [ $# -gt 2 ]; then head -c "$2" -- "$P" | head -n "$3"; else head -c "$2" -- "$P"; fi ;;
tail)
    # the size, a newline, then at most the last $2 bytes
    readable "$1"; stat -c %s -- "$P"
    tail -c "$2" -- "$P" ;;
replaces)
    landing "$1"; replaced ;;
write)
    S=$2
    trap 'rm -f -- "$S"' EXIT
    landing "$1"; t=$T
    [ -d "$t" ] && fail EISDIR
    need_dir "${t%/*}"
    if [ -e "$t" ]; then chmod --reference="$t" -- "$S"; fi
    replaced
    mv -f -T -- "$S" "$t" ;;
mkdir)
    # prints how many directories it made; $2 (optional): the most it may make
    full "$1"; [ -d "$P" ] && { printf 0; finish; }
    exists "$P" && fail EEXIST
    ancestor "$P"; [ -d "$m" ] || fail ENOTDIR
    n=0; q=$P
    while [ "$q" != "$m" ] && [ -n "$q" ]; do n=$((n + 1)); q=${q%/*}; done
    if [ $# -gt 1 ] && [ "$n" -gt "$2" ]; then echo "$n" >&2; fail EDQUOT; fi
    mkdir -p -- "$P" && printf '%s' "$n" ;;
move)
    lpath "$1"; o=$P; lpath "$2"; t=$P
    exists "$o" || fail ENOENT
    exists "$t" && fail EEXIST
    need_dir "${t%/*}"
    case $t in "$o"/*) fail EINVAL ;; esac
    mv -T -- "$o" "$t" ;;
*)
    echo "unknown operation $op" >&2; exit 2 ;;
esac
s=$?
[ "$s" -eq 0 ] && printf '%s' AJ-END
exit "$s"
