"""Reading what a person types: quantities and units (units), plain numbers and quantities for
display (numbers, formatting), the bounded arithmetic parser (expression) and the human forms
of an answer (reader). Pure standard library; imports only trainer.errors. Nothing here ever
calls eval, exec or sympy."""
