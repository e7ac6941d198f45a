# The statlas image: the CLI, the daemon (HTTP API and scheduled collections) and Spark
# (PySpark on Java 17). compose.yaml also runs its Spark master and worker from this image,
# so the cluster's Spark is always the version the collectors were built against.
FROM python:3.11-slim-bookworm
RUN apt-get update && apt-get install -y --no-install-recommends openjdk-17-jre-headless \
    && rm -rf /var/lib/apt/lists/*
ENV PYTHONUNBUFFERED=1 \
    PYSPARK_PYTHON=python3
WORKDIR /opt/statlas
COPY pyproject.toml README.md ./
COPY statlas statlas
COPY metastore metastore
COPY migrations migrations
COPY collectors collectors
COPY optimizer optimizer
COPY pruner pruner
RUN pip install --no-cache-dir '.[postgres,spark,daemon]' \
    && statlas --help > /dev/null \
    && cd / && python -c "import pruner.daemon, collectors.collect, optimizer.estimate.api"
EXPOSE 8080 9083
ENTRYPOINT ["statlas"]
CMD ["daemon", "--host", "0.0.0.0", "--port", "8080"]
