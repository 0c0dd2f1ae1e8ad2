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

# Only what the package build needs; everything else is kept out by .dockerignore.
# examples/ is shipped as the `ragjudge.examples` package (see [tool.setuptools] in pyproject.toml).
COPY pyproject.toml README.md /app/src-copy/
COPY src/ /app/src-copy/src/
COPY examples/ /app/src-copy/examples/

# Non-editable install of the local tree (no version pin applies: its dependencies are
# bounded in pyproject.toml), then drop the build copy from the container filesystem
# (its COPY layers, ~0.2 MB, stay in the image).
RUN pip install /app/src-copy \
    && rm -rf /app/src-copy

COPY entrypoint.py /app/entrypoint.py

# No USER: the Actions runner mounts the workspace root-owned and the action must write to it.
ENTRYPOINT ["python", "/app/entrypoint.py"]
