"""Context: how stored turns become the next model call's request, under a token budget.

Where things are decided: `assemble.py` (the policy, the sections, every turn's fate),
`strategies.py` (how each strategy keeps whole turns), `tail.py` (the newest-first read),
`pins.py` (turns pinned or left out from the chat), `manifest.py` (what a request sent), and
`summary/` (the rolling summary: its table, its section, the fold, its job, the offline summarizer).
"""
