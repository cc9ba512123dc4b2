"""A search's status codes and registers: one ``int64`` array, so a compiled search can stop and resume."""

# Search status codes (regs[R_STATUS]).
RUNNING, WON, EXHAUSTED, MEMORY = 0, 1, 2, 3
# Registers of a search: depth, positions searched, positions stored, status, whether the depth limit
# cut a line, most foundation cards reached, whether it has started, whether it left a legal move out, the
# first move of the line that first reached the most foundation cards (-1: none reached more than the start).
R_DEPTH, R_NODES, R_STORED, R_STATUS, R_DEPTH_HIT, R_BEST, R_STARTED, R_PRUNED, R_BEST_MOVE = range(9)
N_REGS = 9

__all__ = ["EXHAUSTED", "MEMORY", "N_REGS", "RUNNING", "R_BEST", "R_BEST_MOVE", "R_DEPTH", "R_DEPTH_HIT", "R_NODES",
           "R_PRUNED", "R_STARTED", "R_STATUS", "R_STORED", "WON"]
