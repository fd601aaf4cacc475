"""What a model costs: MACs, FLOPs, parameters and memory, as formulas of its input symbols."""
