"""Memory rows and who they belong to: scopes, writes and reads through a scope, revisions, sharing
choices and the export."""
