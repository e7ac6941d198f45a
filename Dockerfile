# The statlas image: the CLI, the daemon (HTTP API and scheduled collections) and Spark
# (PySpark on Java 17). compose.yaml also runs its Spark master and worker from this image,
# so the cluster's Spark is always the version the collectors were built against.
#
# Two stages. `build` installs statlas into a virtualenv and compiles the one-pass
# collection scan's jar (collectors/jvm_scan.py, as the Makefile's jar rule does) with a
# JDK, against the PySpark it installed; the jar lands in the installed collectors package,
# where the scan looks for it. The runtime stage has a JRE only and takes the virtualenv,
# jar included.
FROM python:3.11-slim-bookworm AS build
RUN apt-get update && apt-get install -y --no-install-recommends openjdk-17-jdk-headless \
    gcc libkrb5-dev && rm -rf /var/lib/apt/lists/*
RUN python -m venv /opt/venv
ENV PATH=/opt/venv/bin:$PATH
WORKDIR /opt/statlas
COPY pyproject.toml README.md ./
COPY statlas statlas
COPY metastore metastore
COPY migrations migrations
COPY collectors collectors
COPY optimizer optimizer
COPY pruner pruner
COPY servers servers
RUN pip install --no-cache-dir '.[postgres,spark,daemon,kerberos]' \
    && cd / && python -m collectors.jvm_scan

FROM python:3.11-slim-bookworm
RUN apt-get update && apt-get install -y --no-install-recommends openjdk-17-jre-headless \
    libgssapi-krb5-2 && rm -rf /var/lib/apt/lists/*
COPY --from=build /opt/venv /opt/venv
ENV PATH=/opt/venv/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    PYSPARK_PYTHON=python3
WORKDIR /opt/statlas
RUN statlas --help > /dev/null \
    && python -c "import servers.daemon, servers.http.app, collectors.collect, optimizer.estimate.api, gssapi" \
    && python -c "from collectors.jvm_scan import scan_jar; assert scan_jar(build=False), 'no scan jar'"
EXPOSE 8080 9083
ENTRYPOINT ["statlas"]
CMD ["daemon", "--host", "0.0.0.0", "--port", "8080"]
