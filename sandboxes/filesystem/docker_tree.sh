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
    full "$1"; [ -d "$P" ] && fail EISDIR
    exists "$P" || missing "$P"
    own_links "$P"
    printf '%s' "$P" ;;
write)
    S=$2
    trap 'rm -f -- "$S"' EXIT
    lpath "$1"; t=$P
    if [ -L "$t" ]; then full "$1"; t=$P; fi
    [ -d "$t" ] && fail EISDIR
    need_dir "${t%/*}"
    if [ -e "$t" ]; then chmod --reference="$t" -- "$S"; fi
    mv -f -T -- "$S" "$t" ;;
mkdir)
    full "$1"; [ -d "$P" ] && finish
    exists "$P" && fail EEXIST
    ancestor "$P"; [ -d "$m" ] || fail ENOTDIR
    mkdir -p -- "$P" ;;
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
