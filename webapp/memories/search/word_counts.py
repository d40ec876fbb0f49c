"""PostgreSQL: how many of a person's turns hold each word, kept by the database as turns are
written (turn_word_rows, migration 0043), so a search reads a word's count, not up to 1,000 of
its hits and a walk for the estimate past them (50 to 600 ms a question for 50,000 turns).

A turn counts toward its person (turns.owner_id) while it is finished (outcome not 'pending')
and its conversation is not deleted (deleted_at empty), the scope a search reads (own_turns);
its words are its kept lexemes (turns.search_words, what the GIN index holds less the owner).
A turn whose conversation row is gone counts as live: a conversation deleted outright removes
its turns after itself, and a conversation deleted earlier gives its turns back first.
"""
from sqlalchemy import Integer, bindparam, case, column, func, literal_column, select, table

# Which turns count, as a condition on a turn row t.
COUNTED = ("t.owner_id IS NOT NULL AND t.outcome <> 'pending' AND NOT EXISTS (SELECT 1 FROM "
           "conversations c WHERE c.id = t.conversation_id AND c.deleted_at IS NOT NULL)")
# Add `sign` times each counted turn's words, from the rows `source` (a FROM clause naming t),
# locking the counts in one order whoever writes (two such statements cannot deadlock).
CHANGE = ("INSERT INTO turn_word_rows (owner_id, word, turns) SELECT t.owner_id, w.word, "
          "{sign} * count(*) FROM {source} CROSS JOIN LATERAL "
          "unnest(tsvector_to_array(t.search_words)) AS w(word) WHERE {counted} GROUP BY 1, 2 "
          "ORDER BY 1, 2 ON CONFLICT (owner_id, word) DO UPDATE SET turns = turn_word_rows.turns "
          "+ excluded.turns")
# A word none of the person's turns holds any more leaves no row (an account deleted
# leaves none of its words).
CLEARED = ("DELETE FROM turn_word_rows k USING (SELECT DISTINCT t.owner_id, w.word "
           "FROM {source} CROSS JOIN LATERAL unnest(tsvector_to_array(t.search_words)) AS w(word) "
           "WHERE {counted}) "
           "d WHERE k.owner_id = d.owner_id AND k.word = d.word AND k.turns = 0")
# An update's rows whose counting changed (a heartbeat or a pin changes none), before or after.
CHANGED = ("(SELECT {side}.* FROM gone g JOIN added a ON a.id = g.id WHERE (g.owner_id, g.outcome, "
           "g.conversation_id, g.search_words) IS DISTINCT FROM (a.owner_id, a.outcome, "
           "a.conversation_id, a.search_words)) t")
# A conversation's finished turns of a person; +1 when it is shown again, -1 when hidden.
FINISHED = "t.conversation_id = {row}.id AND t.owner_id IS NOT NULL AND t.outcome <> 'pending'"
SHOWN = "(CASE WHEN NEW.deleted_at IS NULL THEN 1 ELSE -1 END)"


def change(sign, source: str, counted: str = COUNTED) -> str:
    return CHANGE.format(sign=sign, source=source, counted=counted)


def cleared(source: str) -> str:
    return CLEARED.format(source=source, counted=COUNTED)


KEPT_COUNTS_TABLE = ("CREATE TABLE IF NOT EXISTS turn_word_rows (owner_id integer NOT NULL, "
                     "word text NOT NULL, turns integer NOT NULL, PRIMARY KEY (owner_id, word))")
KEPT_COUNTS_TRIGGERS = [
    "CREATE OR REPLACE FUNCTION turn_word_rows_changed() RETURNS trigger LANGUAGE plpgsql AS $$ "
    "BEGIN IF TG_OP = 'UPDATE' THEN "
    f"{change(-1, CHANGED.format(side='g'))}; {change(1, CHANGED.format(side='a'))}; "
    f"{cleared(CHANGED.format(side='g'))}; "
    f"ELSIF TG_OP = 'DELETE' THEN {change(-1, 'gone t')}; {cleared('gone t')}; "
    f"ELSE {change(1, 'added t')}; END IF; "
    "RETURN NULL; END $$",
    "CREATE OR REPLACE FUNCTION turn_word_rows_conversation() RETURNS trigger "
    "LANGUAGE plpgsql AS $$ BEGIN "
    # hidden or shown again: its finished turns leave or join their person's counts
    "IF TG_OP = 'UPDATE' THEN "
    f"{change(SHOWN, 'turns t', FINISHED.format(row='NEW'))}; "
    "RETURN NULL; END IF; "
    # deleted outright while hidden: its turns, about to be removed as live ones, count again
    "IF OLD.deleted_at IS NOT NULL THEN "
    f"{change(1, 'turns t', FINISHED.format(row='OLD'))}; "
    "END IF; RETURN OLD; END $$",
    "DROP TRIGGER IF EXISTS turn_word_rows_insert ON turns",
    "CREATE TRIGGER turn_word_rows_insert AFTER INSERT ON turns REFERENCING NEW TABLE AS added "
    "FOR EACH STATEMENT EXECUTE FUNCTION turn_word_rows_changed()",
    "DROP TRIGGER IF EXISTS turn_word_rows_update ON turns",
    "CREATE TRIGGER turn_word_rows_update AFTER UPDATE ON turns REFERENCING OLD TABLE AS gone "
    "NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION turn_word_rows_changed()",
    "DROP TRIGGER IF EXISTS turn_word_rows_delete ON turns",
    "CREATE TRIGGER turn_word_rows_delete AFTER DELETE ON turns REFERENCING OLD TABLE AS gone "
    "FOR EACH STATEMENT EXECUTE FUNCTION turn_word_rows_changed()",
    "DROP TRIGGER IF EXISTS turn_word_rows_hidden ON conversations",
    "CREATE TRIGGER turn_word_rows_hidden AFTER UPDATE OF deleted_at ON conversations FOR EACH ROW "
    "WHEN ((OLD.deleted_at IS NULL) IS DISTINCT FROM (NEW.deleted_at IS NULL)) "
    "EXECUTE FUNCTION turn_word_rows_conversation()",
    "DROP TRIGGER IF EXISTS turn_word_rows_removed ON conversations",
    "CREATE TRIGGER turn_word_rows_removed BEFORE DELETE ON conversations FOR EACH ROW "
    "EXECUTE FUNCTION turn_word_rows_conversation()",
]


KEPT_COUNTS_DDL = [KEPT_COUNTS_TABLE, *KEPT_COUNTS_TRIGGERS]

KEPT = table("turn_word_rows", column("owner_id", Integer), column("word"), column("turns"))


def counted_or_kept(name: str, counted) -> tuple:
    """(the person's turns holding the word bound as `name`, whether that count is the kept
    one): kept for a word that is one lexeme, 0 for a stop word (no lexeme), and `counted` (the
    caller's count through the index) for a word the parser splits (foo_bar: foo & bar)."""
    english = literal_column("'english'")
    nodes = func.numnode(func.plainto_tsquery(english, bindparam(name)))
    lexeme = func.array_to_string(func.tsvector_to_array(func.to_tsvector(english,
                                                                          bindparam(name))), "")
    kept = select(KEPT.c.turns).where(KEPT.c.owner_id == bindparam("scope_user"),
                                      KEPT.c.word == lexeme).scalar_subquery()
    return case((nodes == 0, 0), (nodes == 1, func.coalesce(kept, 0)), else_=counted), nodes <= 1
