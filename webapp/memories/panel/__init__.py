"""The pages over long-term memory: the memory panel and search (views.py), the staff's report."""
