"""The memory picture: what each program of a launch loaded, stored and updated, drawn as the sandbox page
draws it (`data`: the picture's data from a launch record)."""
