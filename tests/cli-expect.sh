# Shared by the cli-*.sh tests that source it (after setting D, the scratch folder, and fail=0):
# expect STATUS command...: runs it, its output in $D/out and $D/err; a wrong exit status fails
# says TEXT: the last command's stderr or stdout contains TEXT, else it fails
expect() {
    want=$1
    shift
    "$@" >"$D/out" 2>"$D/err"
    rc=$?
    if [ "$rc" -ne "$want" ]; then
        echo "FAIL: exit $rc (want $want): $*"
        cat "$D/err"
        fail=1
    fi
}
says() {
    if ! grep -q -- "$1" "$D/err" "$D/out"; then
        echo "FAIL: no '$1' in the output of the last command"
        cat "$D/err" "$D/out"
        fail=1
    fi
}
