"""What is shown: the candidate's sheet (sheets), interviewer keys (keys), a reviewer's report
(report), a cohort side by side (cohort), calc's view (calc), Markdown for a terminal
(terminal_text), and what the HTML pages share (pages, templates/). Builds text from data;
may import the store and everything below, never click or prompt_toolkit."""
