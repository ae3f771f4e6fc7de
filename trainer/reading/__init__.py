"""Reading what a person types: quantities and units (units), plain numbers and quantities for
display (numbers, formatting), the bounded arithmetic parser (expression) and the human forms
of an answer (reader), all in one exact rational (exact: the standard library's Fraction,
compiled). Imports only trainer.errors. Nothing here ever calls eval, exec or sympy."""
