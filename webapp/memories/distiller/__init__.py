"""The distiller: what it reads (checkpoints), what it keeps (distil.py, the offline patterns in
offline.py) and how a pass lands among the memories (consolidation, slots, phrasing)."""
