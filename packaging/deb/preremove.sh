#!/bin/sh
# Stopping the agent hands leadership over (SIGTERM).
set -e
if [ -d /run/systemd/system ]; then
  systemctl stop go-cluster-agent >/dev/null 2>&1 || true
  systemctl disable go-cluster-agent >/dev/null 2>&1 || true
fi
