#!/usr/bin/env bash
# Packs what the GPU machine needs for ci/h200_evidence.sh into a git-ignored
# folder (default .device/), under the device tool's 64 MiB per call:
# stripped binaries, the NCCL variants built here (the two 2.17.1 variants, one
# unstripped so that a hung abort's stack has names), and the pinned tarballs of
# the variants to build there.
#   ci/make_gpu_bundle.sh BUILD_DIR NCCL_CACHE [BUNDLE]
set -euo pipefail
build=$1; cache=$2; bundle=${3:-.device}
mkdir -p "$bundle/bin" "$bundle/workloads/ddp_abort" "$bundle/workloads/socket_teardown" "$bundle/nccl"
strip -o "$bundle/bin/hangbench" "$build/harness/hangbench"
strip -o "$bundle/workloads/ddp_abort/ddp_abort" "$build/workloads/ddp_abort/ddp_abort"
strip -o "$bundle/workloads/socket_teardown/socket_teardown" "$build/workloads/socket_teardown/socket_teardown"
stage=$(mktemp -d)
for v in 2.17.1 2.17.1+backport; do
  d=$(ls -d "$cache/variants/$v-"* | head -1)
  mkdir -p "$stage/$v/lib"; cp "$d/manifest.json" "$stage/$v/"
  if [ "$v" = 2.17.1 ]; then cp "$d/lib/libnccl.so.2" "$stage/$v/lib/"; else strip -o "$stage/$v/lib/libnccl.so.2" "$d/lib/libnccl.so.2"; fi
done
# One xz stream with a dictionary larger than a library: the second copy costs little.
tar -C "$stage" -cf - . | xz -T1 --lzma2=preset=6,dict=192MiB > "$bundle/nccl-2.17.1-pair.tar.xz"
rm -rf "$stage"
du -sh "$bundle"/* "$bundle"
