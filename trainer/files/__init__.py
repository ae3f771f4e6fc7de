"""Files: where the drills, rubrics and solutions live and where caches go (paths), the one way
a file a user names is read (bounded_io), and parsed files kept by the hash of their text
(parsed_cache). Imports only trainer.errors."""
