#!/usr/bin/env bash
# A container image of `semroute serve` and the default models, built from
# Debian packages alone (no registry): mmdebstrap makes a Debian 12 root
# file system with the runtime libraries, the build (BUILD_DIR, default
# ./build) is installed into /usr/local, the default models and the example
# config into /srv/semroute, and podman imports it (IMAGE, default
# localhost/semroute:VERSION). Without podman the root file system stays as
# a tarball (OUT, default ./semroute-image.tar) for `podman import` or
# `docker import` elsewhere.
#
#   scripts/build-image.sh                     # needs root (or fakeroot) and Debian's mirror
#   podman run -p 8080:8080 localhost/semroute:0.1.0
# The image answers the runtime contract and semroute's own paths on
# 0.0.0.0:8080 and /srv/semroute/socket/runtime.sock as an unprivileged user
# (65534); docs/serve.md has a Kubernetes Deployment that runs it. Checked
# here: the image builds and imports, and its root file system serves (run
# in a chroot as user 65534); running it under podman needs a host that lets
# containers set their limits.
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=$(realpath "${BUILD_DIR:-build}")
version=$("$build_dir/cli/semroute" version | awk '{print $NF}')
image=${IMAGE:-localhost/semroute:$version}
out=$(realpath -m "${OUT:-semroute-image.tar}")
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
runtime_packages=libtorch1.13,libdnnl2,libopenblas0-openmp,libsentencepiece0,libyaml-cpp0.7,libfmt9,libtbb12,libpcre2-8-0,libutf8proc2,libssl3,libhiredis0.14,libgomp1,ca-certificates

for tool in mmdebstrap; do
  command -v "$tool" >/dev/null || { echo "needs $tool (apt-get install mmdebstrap)"; exit 2; }
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
stage=$work/stage
cmake --install "$build_dir" --prefix "$stage/usr/local" >/dev/null
rm -rf "$stage/usr/local/include" "$stage/usr/local/lib/cmake" "$stage/usr/local/lib/pkgconfig"
mkdir -p "$stage/srv/semroute/socket"
cp -r models "$stage/srv/semroute/models"
cat >"$stage/srv/semroute/serve.yaml" <<'YAML'
# semroute serve in the container: the default models under the runtime
# contract (docs/runtime.md) and semroute's own paths (docs/serve.md).
listen: 0.0.0.0:8080
unix_socket: /srv/semroute/socket/runtime.sock   # mount a volume here to share it with the router
limits: {max_body_bytes: 8388608, max_queue: 256}
models:
  domain:    {path: models/domain, max_batch: 8, max_wait_us: 1000}
  jailbreak: {path: models/jailbreak, max_batch: 8, max_wait_us: 1000}
  pii:       models/pii
  encoder:   {path: models/multitask/base, task: embedding}
unified:
  default: models/router.yaml
YAML

mmdebstrap --variant=apt --include="$runtime_packages" \
  --customize-hook="sync-in $stage /" \
  --customize-hook='chroot "$1" ldconfig' \
  --customize-hook='chroot "$1" chown -R 65534:65534 /srv/semroute/socket' \
  --customize-hook='chroot "$1" /usr/local/bin/semroute version' \
  --customize-hook='rm -rf "$1"/var/cache/apt/archives/*.deb "$1"/var/lib/apt/lists/*' \
  bookworm "$out" "$mirror"
echo "root file system: $out ($(du -h "$out" | cut -f1))"

if command -v podman >/dev/null; then
  podman import \
    --change 'USER 65534' --change 'WORKDIR /srv/semroute' --change 'EXPOSE 8080' \
    --change 'ENTRYPOINT ["/usr/local/bin/semroute"]' --change 'CMD ["serve", "/srv/semroute/serve.yaml"]' \
    "$out" "$image"
  echo "image: $image"
else
  echo "no podman here: import $out with"
  echo "  podman import --change 'USER 65534' --change 'WORKDIR /srv/semroute' --change 'EXPOSE 8080' \\"
  echo "    --change 'ENTRYPOINT [\"/usr/local/bin/semroute\"]' --change 'CMD [\"serve\", \"/srv/semroute/serve.yaml\"]' $out $image"
fi
