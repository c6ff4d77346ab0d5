"""The gateway: every byte the agent sends goes through it (mitmproxy, one addon per concern)."""
