"""The click commands, grouped by what they work on; app/cli.py adds them to the group."""
