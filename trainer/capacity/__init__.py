"""The capacity model: a deployment's inputs (deployment), every formula written once and
evaluated exactly or symbolically (solver, serving_formulas), the wrong paths that betray each
mistake (wrong_paths), the working as text (derivation), and the model and GPU presets with
their sources (presets, presets/*.yaml). May import reading and files, nothing above."""
