#!/bin/sh
# Not enabled or started: edit /etc/go-cluster/agent.yaml first, then
#   systemctl enable --now go-cluster-agent
set -e
if [ -d /run/systemd/system ]; then
  systemctl daemon-reload >/dev/null 2>&1 || true
fi
