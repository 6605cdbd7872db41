#!/usr/bin/env bash
# Packs what the GPU machine needs for ci/h200_evidence.sh into a git-ignored
# folder (default .device/), under the device tool's 64 MiB per call: stripped
# binaries, the shared libraries of the harness that the GPU machine lacks, and
# the four pinned NCCL variants built here (2.17.1 unstripped, so that a hung
# abort's stack has names; the others stripped), two per xz stream.
# The binaries must be of a committed tree: one whose --version names a
# "-dirty+diff.<hash>" commit would put in every report a commit that is not the
# code that ran (HANGBENCH_BUNDLE_DIRTY=1 packs it anyway; its reports then name
# the commit and the hash of the uncommitted diff, and nothing else says what it was).
#   ci/make_gpu_bundle.sh BUILD_DIR NCCL_CACHE [BUNDLE]
set -euo pipefail
build=$1; cache=$2; bundle=${3:-.device}
version=$("$build/harness/hangbench" --version)
case "$version" in
  *-dirty*)
    if [ "${HANGBENCH_BUNDLE_DIRTY:-0}" != 1 ]; then
      echo "make_gpu_bundle: $build/harness/hangbench is '$version', built from a tree with uncommitted changes;" \
        "commit and rebuild (or HANGBENCH_BUNDLE_DIRTY=1 to pack it anyway)" >&2
      exit 2
    fi
    echo "make_gpu_bundle: packing '$version' (HANGBENCH_BUNDLE_DIRTY=1): its reports name an uncommitted diff" >&2 ;;
esac
mkdir -p "$bundle/bin" "$bundle/lib" "$bundle/workloads/ddp_abort" "$bundle/workloads/socket_teardown" "$bundle/workloads/nccl_teardown" "$bundle/workloads/nccl_launch_blocking"
strip -o "$bundle/bin/hangbench" "$build/harness/hangbench"
# mpi_progress and pp_pipeline embed CPython: they are built there (3.12), not here (3.11).
for w in ddp_abort socket_teardown nccl_teardown nccl_launch_blocking; do
  if [ -f "$build/workloads/$w/$w" ]; then strip -o "$bundle/workloads/$w/$w" "$build/workloads/$w/$w"
  else echo "make_gpu_bundle: $build/workloads/$w/$w not built; left out" >&2; fi
done
# CLI11 (header only) for the workloads built there (pp_pipeline): the GPU image may lack it.
mkdir -p "$bundle/cli11/include" && cp -a /usr/include/CLI "$bundle/cli11/include/"
# Ubuntu 24.04 there has none of these (Debian 12's sonames here).
for soname in libfmt.so.9 libtomlplusplus.so.3 libsqlite3.so.0 libelf.so.1 libdw.so.1 libseccomp.so.2; do
  cp -L "$(ldd "$build/harness/hangbench" | awk -v s="$soname" '$1 == s {print $3}')" "$bundle/lib/$soname"
done
pack_pair() {   # pack_pair NAME VARIANT VARIANT
  local name=$1 stage; stage=$(mktemp -d); shift
  for v in "$@"; do
    # `hangbench nccl build`'s cache (variants/<v>-<key>/), or a plain <v>/lib/ layout.
    local d; d=$(ls -d "$cache/variants/$v-"* 2>/dev/null | head -1 || true)
    [ -z "$d" ] && [ -f "$cache/$v/lib/libnccl.so.2" ] && d="$cache/$v"
    [ -n "$d" ] || { echo "make_gpu_bundle: variant $v not built in $cache; nccl-$name-pair left out" >&2; rm -rf "$stage"; return 0; }
    mkdir -p "$stage/$v/lib"; [ -f "$d/manifest.json" ] && cp "$d/manifest.json" "$stage/$v/"
    if [ "$v" = 2.17.1 ]; then cp "$d/lib/libnccl.so.2" "$stage/$v/lib/"; else strip -o "$stage/$v/lib/libnccl.so.2" "$d/lib/libnccl.so.2"; fi
  done
  # One xz stream with a dictionary larger than a library: the second copy costs little.
  tar -C "$stage" -cf - . | xz -T2 --lzma2=preset=6,dict=192MiB > "$bundle/nccl-$name-pair.tar.xz"
  rm -rf "$stage"
}
pack_pair 2.17.1 2.17.1 2.17.1+backport
pack_pair 2.18.1 2.18.1 2.18.1-noshutdown
rm -f "$bundle/nccl-2.18.1-1.tar.gz"
du -sh "$bundle"/* "$bundle"
