# Image for the ragjudge GitHub Docker container action.
# BASE_IMAGE is overridable so CI can build against a local stand-in for python:*-slim
# (see .ci/container.sh); GitHub's runner builds it with the default.
ARG BASE_IMAGE=python:3.12-slim
FROM ${BASE_IMAGE}

ENV PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_ROOT_USER_ACTION=ignore

# Optional pip settings for building behind a package mirror/proxy (.ci/container.sh
# passes the build machine's). Unset by default, so pip uses PyPI. Build args only: they
# are not kept in the image's environment (but do show in `history`, so no credentials).
ARG PIP_INDEX_URL
ARG PIP_EXTRA_INDEX_URL
ARG PIP_TRUSTED_HOST
ARG PIP_CERT

WORKDIR /app

# Runtime dependencies first, from the lock file: exact versions, every file checked against
# its sha256 (`--require-hashes` also refuses any dependency the lock does not pin). A layer
# of its own, so a change to ragjudge's code does not reinstall them.
COPY requirements.lock /app/requirements.lock
RUN pip install --require-hashes --no-deps -r /app/requirements.lock

# Only what the package build needs; everything else is kept out by .dockerignore.
# examples/ is shipped as the `ragjudge.examples` package (see [tool.setuptools] in pyproject.toml).
COPY pyproject.toml README.md /app/src-copy/
COPY src/ /app/src-copy/src/
COPY examples/ /app/src-copy/examples/

# ragjudge itself, without resolving dependencies again (they are all installed above), then
# drop the build copy from the container filesystem (its COPY layers, ~0.2 MB, stay in the image).
RUN pip install --no-deps /app/src-copy \
    && pip check \
    && rm -rf /app/src-copy

COPY entrypoint.py /app/entrypoint.py

# No USER: the Actions runner mounts the workspace root-owned and the action must write to it.
ENTRYPOINT ["python", "/app/entrypoint.py"]
