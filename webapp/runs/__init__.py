"""Replies run in the background: start, lease and heartbeat, takeover after a crash, admission."""
