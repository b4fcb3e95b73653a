#!/bin/sh
# The agent runs as go-cluster (see go-cluster-agent.service).
set -e
if ! getent group go-cluster >/dev/null; then
  addgroup --system go-cluster
fi
if ! getent passwd go-cluster >/dev/null; then
  adduser --system --ingroup go-cluster --no-create-home --home /nonexistent --shell /usr/sbin/nologin go-cluster
fi
