"""Names vulture cannot see used, each alive for the reason beside it (tests/test_dead_code.py
passes this file to vulture, which counts every name mentioned here as used). Not a test module;
nothing imports it. Add an entry only with its reason, and only for a name a library or a protocol
calls by itself; anything else vulture finds is dead: delete it."""

# ruff: noqa: B018, F821
# (bare attribute accesses on a placeholder `_`: vulture's whitelist form, never run)

_.forward  # every torch.nn.Module: module(x) runs forward(x) (nn.Module.__call__)
_.extra_repr  # encoders/base.py: torch.nn.Module.__repr__ calls it (print(model) shows the config)
_._entry  # explain/derivations/atoms.py: sympy's MatrixExpr calls _entry(i, j) for one explicit entry
_._latex  # explain/derivations/atoms.py, rope.py: sympy's LatexPrinter calls an expression's _latex
_._print_Transpose  # explain/derivations/atoms.py: sympy's printers dispatch on _print_<class name>
_.query_string  # tools/classroom_load.py: a field of Streamlit's BackMsg protobuf, set to be sent
signum  # tools/serve.py: a signal handler's first parameter (signal.signal passes it)
