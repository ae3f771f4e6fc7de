"""The application: the click group (cli) and its commands (commands/), the options they share
(options), the practice loop (session) and its timed terminal prompt (tui), `practice --weak`
(weak), and output files (outfiles). The only part that imports click or prompt_toolkit; it may
import every other part, and nothing imports it."""
