"""The store: the SQLite file of attempts (database; its schema and migrations in schema, its
safe opening in sqlite_file), kept marks and progress (kept_marks), FSRS cards (schedule),
transcripts and their file format (transcripts, transcript_schema), and import. May import
marking and everything below; never a screen."""
