"""Size limits that keep inference bounded whatever a model declares."""
from __future__ import annotations

#: Tensors with more elements than this never carry data.
DATA_LIMIT = 64
#: Floating-point initializers carry data only up to this many elements (scales, epsilons);
#: weights and biases never do, so they cost nothing on the per-node path.
FLOAT_DATA_LIMIT = 8
#: The largest rank inference builds a shape of. A rank beyond it (a shape input that
#: declares 10**9 elements, say) is a node error rather than a huge allocation.
MAX_RANK = 1024
#: Dims are int64 in the wire format; a computed dim beyond this is a node error.
MAX_DIM = 2**63 - 1
