"""The agent: a loop that asks the model, runs the tools it asks for, and saves the turn."""
