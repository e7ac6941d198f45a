# The statlas image: the CLI (and, in later releases, the daemon) with PostgreSQL support.
FROM python:3.11-slim
RUN apt-get update && apt-get install -y --no-install-recommends openjdk-17-jre-headless \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /opt/statlas
COPY pyproject.toml README.md ./
COPY statlas statlas
COPY metastore metastore
COPY migrations migrations
RUN pip install --no-cache-dir '.[postgres,spark,daemon]'
ENTRYPOINT ["statlas"]
