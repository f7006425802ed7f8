"""The model-level IR: an SSA DAG of ops over statically shaped tensors, with weights.

``types`` holds tensor types and the invalid-graph error, ``graph`` the data structures
and type inference, ``ops`` the op kinds (attributes, shape rules, weight shapes), ``model``
a graph with its weights, ``weights`` the seeded initializers, ``serialize`` the JSON +
``.npz`` round trip and ``render`` the text and Graphviz views used in reports. Nothing
here imports a deep learning library: lowerings to each library are code emitters in
``ir/lower`` and run only inside workers.
"""
