"""What the tests and the tools share: the browser harness (browser.py), axe-core's checks (axe.py),
a page driven to its maximum sizes (sizes.py) and the figure snapshots (figure_snapshots.py).

Tools may import this package; tests never import tools/ (tests/test_import_graph.py).
"""
