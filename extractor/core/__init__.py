"""The ground floor: the data model, exit codes and error types, formulas over atoms, and JSON."""
