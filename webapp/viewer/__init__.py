"""The viewer: each stored turn beside what the next request sends of it, and why."""
