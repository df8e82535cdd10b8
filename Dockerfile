# memstrata as a container: `memstrata serve` by default, `memstrata worker` with that command.
#   podman build -t memstrata .        (or docker build; BASE picks another Python 3.11+ image)
#   podman run -p 8420:8420 -e MEMSTRATA_API_KEY=... -v memstrata-data:/data memstrata
# Configuration is the usual MEMSTRATA_ variables (README "Configuration"); the shipped embedding
# model is inside the package, so nothing is downloaded when a container starts.
ARG BASE=python:3.12-slim

FROM ${BASE} AS build
# Only what the wheel is built from (.dockerignore keeps the rest of the tree out).
COPY pyproject.toml README.md /src/
COPY src /src/src
# A current pip first (builds jieba's sdist as a wheel); pip and setuptools leave the venv after the
# install (jieba reads its dictionary without pkg_resources). Byte-compiled here, so a container's
# first start does not compile ~2,000 modules.
RUN python3 -m venv /opt/memstrata \
    && /opt/memstrata/bin/pip install --no-cache-dir --disable-pip-version-check --upgrade pip \
    && /opt/memstrata/bin/pip install --no-cache-dir --disable-pip-version-check --compile \
        '/src[server,postgres]' \
    && /opt/memstrata/bin/pip uninstall --yes --disable-pip-version-check setuptools pip \
    && /opt/memstrata/bin/python -c "import jieba, logging; jieba.setLogLevel(logging.WARNING); assert jieba.lcut('我住在北京')" \
    && /opt/memstrata/bin/python -c "from memstrata.embeddings.local import bundled_local_model as m; assert m(), 'no shipped model'"

FROM ${BASE}
COPY --from=build /opt/memstrata /opt/memstrata
# A fixed non-root uid, so a volume's owner is the same in every container of a deployment.
RUN useradd --uid 10001 --user-group --home-dir /data --no-create-home --shell /usr/sbin/nologin memstrata \
    && mkdir /data && chown memstrata:memstrata /data
ENV PATH=/opt/memstrata/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    MEMSTRATA_HOME=/data \
    MEMSTRATA_SERVER__HOST=0.0.0.0 \
    MEMSTRATA_SERVER__PORT=8420
USER memstrata
WORKDIR /data
VOLUME /data
EXPOSE 8420
# Open without a key; answers 200 while the server serves (a worker container turns it off).
HEALTHCHECK --interval=10s --timeout=5s --start-period=60s --retries=3 \
    CMD ["python3", "-c", "import os, urllib.request as u; u.urlopen('http://127.0.0.1:%s/v1/health' % os.environ.get('MEMSTRATA_SERVER__PORT', '8420'), timeout=4)"]
ENTRYPOINT ["memstrata"]
CMD ["serve"]
