# Sourced by the scripts that judge every NVIDIA NCCL wheel pip lists on a CPU machine.
#   each_nvidia_wheel NAME OUT_DIR RECORDS WORK CALLBACK
# For each package nvidia-nccl-cuN (N in $PACKAGES, "11 12 13" by default) and each version
# pip lists: skip it when RECORDS (a JSON-lines file, one line per wheel) already holds
# its package and release (so a killed run resumes); otherwise empty WORK, download the
# wheel there, unzip its libnccl.so.2 and call CALLBACK PACKAGE VERSION WHEEL LIB (WHEEL's
# file name, in WORK). Each package's versions are appended to OUT_DIR/machine.txt. NAME
# starts its messages. Returns 3 when pip fails or lists nothing, or when CALLBACK fails.
each_nvidia_wheel() {
  local name=$1 out=$2 records=$3 work=$4 callback=$5 cuda package versions version wheel lib
  touch "$records"
  for cuda in ${PACKAGES:-11 12 13}; do
    package=nvidia-nccl-cu$cuda
    versions=$(pip index versions "$package" 2>/dev/null | sed -n 's/^Available versions: //p' | tr -d ',')
    [[ -n $versions ]] || { echo "$name: pip lists no versions of $package" >&2; return 3; }
    echo "$package: $versions" >> "$out/machine.txt"
    for version in $versions; do
      if grep -q "\"package\": \"$package\", \"release\": \"$version\"" "$records"; then continue; fi
      rm -rf "${work:?}"/*
      if ! pip download --no-deps --quiet "$package==$version" -d "$work" >/dev/null 2>"$work/pip.err"; then
        echo "$name: pip download $package==$version failed: $(tail -1 "$work/pip.err")" >&2
        return 3
      fi
      wheel=$(cd "$work" && ls ./*.whl | head -1)
      wheel=${wheel#./}
      (cd "$work" && unzip -q -o "$wheel" 'nvidia/nccl/lib/libnccl.so*')
      lib=$(ls "$work"/nvidia/nccl/lib/libnccl.so* | head -1)
      "$callback" "$package" "$version" "$wheel" "$lib" || return 3
    done
  done
}
